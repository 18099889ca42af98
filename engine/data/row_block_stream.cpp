#include "engine/data/row_block_stream.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <algorithm>

namespace gpstream {

RowBlockStream::RowBlockStream(RowSource& source, const RowBlockStreamOptions& options)
    : source_(source), options_(options) {
  GPSTREAM_CHECK(options_.block_rows > 0, "a row block needs at least one row");
  GPSTREAM_CHECK(!options_.with_targets || source_.has_targets(), "the dataset has no targets to stream");
  options_.end_row = std::min(options_.end_row, source_.rows());
  options_.first_row = std::min(options_.first_row, options_.end_row);
  const std::size_t span = options_.end_row - options_.first_row;
  block_count_ = span / options_.block_rows + (span % options_.block_rows != 0 ? 1 : 0);

  ring_.resize(std::min(options_.prefetch_depth + 1, std::max<std::size_t>(block_count_, 1)));
  const std::size_t block_values = checked_multiply(std::min(options_.block_rows, span), source_.columns());
  for (Slot& slot : ring_) {
    slot.x.reset(new double[block_values]);
    if (options_.with_targets) slot.y.reset(new double[std::min(options_.block_rows, span)]);
  }
}

RowBlockStream::~RowBlockStream() {
  wait_for_pending();
  if (reader_.joinable()) {
    {
      const std::lock_guard lock(mutex_);
      closing_ = true;
    }
    queued_.notify_one();
    reader_.join();
  }
}

void RowBlockStream::run_reads() {
  for (;;) {
    std::packaged_task<Slot*()> read;
    {
      std::unique_lock lock(mutex_);
      queued_.wait(lock, [&] { return closing_ || !reads_.empty(); });
      if (reads_.empty()) return;  // closing, with nothing left to read
      read = std::move(reads_.front());
      reads_.pop_front();
    }
    read();  // an exception is stored in the future, for the consumer
  }
}

void RowBlockStream::wait_for_pending() noexcept {
  // Reads still in flight write into ring_; their errors no longer matter to anyone.
  for (auto& read : pending_) {
    try {
      read.get();
    } catch (...) {
    }
  }
  pending_.clear();
}

void RowBlockStream::rewind() {
  wait_for_pending();
  next_to_submit_ = 0;
}

void RowBlockStream::submit(std::size_t block_index) {
  Slot* slot = &ring_[block_index % ring_.size()];
  const std::size_t first = options_.first_row + block_index * options_.block_rows;
  const std::size_t count = std::min(options_.block_rows, options_.end_row - first);
  slot->block = RowBlock{first, count, slot->x.get(), slot->y.get()};
  std::packaged_task<Slot*()> read([this, slot] {
    source_.read_rows(slot->block.first, slot->block.count, slot->x.get(), slot->y.get());
    return slot;
  });
  pending_.push_back(read.get_future());
  if (options_.prefetch_depth == 0) {
    read();  // synchronous: next() is waiting for this block
    return;
  }
  if (!reader_.joinable()) reader_ = std::thread([this] { run_reads(); });
  {
    const std::lock_guard lock(mutex_);
    reads_.push_back(std::move(read));
  }
  queued_.notify_one();
}

const RowBlock* RowBlockStream::next() {
  // The block handed out last time is released now, so every slot of the ring
  // is either free or being read: fill the free ones with the next blocks.
  while (pending_.size() < ring_.size() && next_to_submit_ < block_count_) submit(next_to_submit_++);
  if (pending_.empty()) return nullptr;
  std::future<Slot*> read = std::move(pending_.front());
  pending_.pop_front();
  return &read.get()->block;  // re-throws the read's exception, if any
}

std::size_t block_rows_for_budget(std::size_t budget_bytes, std::size_t columns, std::size_t ring_buffers,
                                  std::size_t alignment, std::size_t total_rows) {
  const std::size_t bytes_per_row =
      checked_multiply(checked_add(columns, 1), sizeof(double), std::max<std::size_t>(ring_buffers, 1));
  std::size_t rows = budget_bytes / bytes_per_row;
  GPSTREAM_CHECK(rows > 0, "the memory budget of {} bytes cannot hold {} buffers of one row of {} columns",
                 budget_bytes, ring_buffers, columns);
  if (alignment > 1 && rows >= alignment) rows -= rows % alignment;
  return std::max<std::size_t>(1, std::min(rows, total_rows));
}

}  // namespace gpstream

// RowBlockStream: a forward-only pass over a RowSource in blocks of rows,
// with the next blocks read in the background while the current one is used.
//
// The shape follows xgboost's sparse page source: a ring of buffers, reads
// submitted ahead of the consumer, and an exception thrown by a read
// re-thrown to the consumer at the block it concerns. Reads run on one I/O
// thread the stream owns for its lifetime (a solver makes a pass per
// iteration, and a thread per block would be started thousands of times),
// never on TBB's compute workers: blocking I/O inside a TBB task would idle a
// core.
#pragma once

#include "engine/data/row_source.h"

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace gpstream {

struct RowBlock {
  std::size_t first = 0;      // index of the block's first row in the source
  std::size_t count = 0;      // rows in the block
  const double* x = nullptr;  // count×d, row-major
  const double* y = nullptr;  // count targets, or null when not requested
};

struct RowBlockStreamOptions {
  std::size_t block_rows = 0;                          // rows per block (the last may be shorter); > 0
  std::size_t prefetch_depth = 1;                      // blocks read ahead of the one in use; 0 reads synchronously
  bool with_targets = true;                            // also read y
  std::size_t first_row = 0;                           // stream rows [first_row, end_row)
  std::size_t end_row = static_cast<std::size_t>(-1);  // clamped to rows()
};

class RowBlockStream {
 public:
  RowBlockStream(RowSource& source, const RowBlockStreamOptions& options);
  ~RowBlockStream();
  RowBlockStream(const RowBlockStream&) = delete;
  RowBlockStream& operator=(const RowBlockStream&) = delete;

  // The next block, or null after the last. The block stays valid until the
  // next call. Re-throws any error raised while reading it.
  const RowBlock* next();

  // Starts a new pass from the first block, keeping the buffers: solvers make
  // one pass per iteration, and fresh buffers would be page-faulted each time.
  void rewind();

  std::size_t block_count() const { return block_count_; }

 private:
  struct Slot {
    // Not value-initialised: zeroing buffers the reads overwrite costs a pass over memory.
    std::unique_ptr<double[]> x;
    std::unique_ptr<double[]> y;
    RowBlock block;
  };

  void submit(std::size_t block_index);
  void wait_for_pending() noexcept;
  void run_reads();  // the I/O thread

  RowSource& source_;
  RowBlockStreamOptions options_;
  std::size_t block_count_ = 0;
  std::size_t next_to_submit_ = 0;
  std::vector<Slot> ring_;
  std::deque<std::future<Slot*>> pending_;  // in block order, as the consumer takes them

  // Reads queued for the I/O thread (none without prefetching: reads are then made in next()).
  std::mutex mutex_;
  std::condition_variable queued_;
  std::deque<std::packaged_task<Slot*()>> reads_;
  bool closing_ = false;
  std::thread reader_;
};

// Rows per block such that a ring of `ring_buffers` blocks of x and y fits in
// `budget_bytes`, rounded down to a multiple of `alignment` when at least one
// aligned block fits, and never more than `total_rows`. Throws when the budget
// cannot hold a single row.
std::size_t block_rows_for_budget(std::size_t budget_bytes, std::size_t columns, std::size_t ring_buffers,
                                  std::size_t alignment, std::size_t total_rows);

}  // namespace gpstream

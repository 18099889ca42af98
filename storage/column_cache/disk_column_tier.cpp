#include "storage/column_cache/disk_column_tier.h"

#include "engine/core/error.h"
#include "engine/core/human_readable.h"
#include "engine/core/size_arithmetic.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace gpstream {
namespace {

constexpr std::size_t kQueueBytes = std::size_t{64} << 20;
// The read-speed probe: enough whole columns to time past the latency of the first read.
constexpr std::size_t kProbeBytes = std::size_t{64} << 20;

// An error text for a failed system call, or "" when `bytes` were moved.
std::string write_fully(int descriptor, const char* data, std::size_t bytes, std::uint64_t offset) {
  while (bytes > 0) {
    const ssize_t written = ::pwrite(descriptor, data, bytes, static_cast<off_t>(offset));
    if (written < 0) {
      if (errno == EINTR) continue;
      return fmt::format("writing it failed: {}", std::strerror(errno));
    }
    data += written;
    bytes -= static_cast<std::size_t>(written);
    offset += static_cast<std::uint64_t>(written);
  }
  return {};
}

std::string read_fully(int descriptor, char* data, std::size_t bytes, std::uint64_t offset) {
  while (bytes > 0) {
    const ssize_t got = ::pread(descriptor, data, bytes, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      return fmt::format("reading it failed: {}", std::strerror(errno));
    }
    if (got == 0) return "the file ends before the column does (it was truncated)";
    data += got;
    bytes -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return {};
}

std::uint64_t checksum(std::span<const double> values) { return XXH3_64bits(values.data(), values.size_bytes()); }

}  // namespace

DiskColumnTier::DiskColumnTier(const std::string& directory, std::size_t rows, std::uint64_t max_bytes,
                               MemoryBudget& budget)
    : directory_(directory), rows_(rows), column_bytes_(checked_multiply(rows, sizeof(double))) {
  GPSTREAM_CHECK(rows > 0, "a disk tier needs columns of at least one value");
  struct statvfs space {};
  GPSTREAM_CHECK(::statvfs(directory.c_str(), &space) == 0, "cannot use '{}' for cached kernel columns: {}", directory,
                 std::strerror(errno));
  const std::uint64_t free_bytes = static_cast<std::uint64_t>(space.f_bavail) * space.f_frsize;
  if (max_bytes == 0) {
    max_bytes = free_bytes / 2;
  } else {
    GPSTREAM_CHECK(max_bytes <= free_bytes, "'{}' has {} free, less than the {} asked for cached kernel columns",
                   directory, format_bytes(static_cast<double>(free_bytes)),
                   format_bytes(static_cast<double>(max_bytes)));
  }
  capacity_ = static_cast<std::size_t>(std::min<std::uint64_t>(rows, max_bytes / column_bytes_));
  GPSTREAM_CHECK(capacity_ > 0, "'{}' has room for no kernel column of {} ({} free, {} allowed)", directory,
                 format_bytes(static_cast<double>(column_bytes_)), format_bytes(static_cast<double>(free_bytes)),
                 format_bytes(static_cast<double>(max_bytes)));

  // Everything that can throw before the file exists: a constructor that
  // throws runs no destructor, and would leave the descriptor open.
  queue_memory_ =
      budget.reserve_up_to("the disk tier's write queue", std::max(kQueueBytes, column_bytes_), 4, column_bytes_);
  queue_columns_ = std::max<std::size_t>(1, queue_memory_.bytes() / column_bytes_);
  buffers_.reserve(queue_columns_);  // never reallocated: the writer reads buffers outside the lock
  state_.assign(capacity_, SlotState::empty);
  checksum_.assign(capacity_, 0);

  std::string name = directory + "/gpstream-kernel-columns-XXXXXX";
  descriptor_ = ::mkostemp(name.data(), O_CLOEXEC);
  GPSTREAM_CHECK(descriptor_ >= 0, "cannot create a file for cached kernel columns in '{}': {}", directory,
                 std::strerror(errno));
  ::unlink(name.c_str());  // the open descriptor keeps it until the run ends
  try {
    writer_ = std::thread([this] { write_queued_columns(); });
  } catch (...) {
    ::close(descriptor_);
    throw;
  }
}

DiskColumnTier::~DiskColumnTier() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  writer_.join();
  ::close(descriptor_);
}

bool DiskColumnTier::write(std::size_t slot, std::span<const double> values) {
  GPSTREAM_CHECK(slot < capacity_ && values.size() == rows_, "disk tier write of slot {} ({} values) out of range",
                 slot, values.size());
  std::size_t buffer;
  {
    const std::lock_guard lock(mutex_);
    if (!free_buffers_.empty()) {
      buffer = free_buffers_.back();
      free_buffers_.pop_back();
    } else if (buffers_.size() < queue_columns_) {
      buffer = buffers_.size();
      buffers_.emplace_back(rows_);
    } else {
      return false;
    }
  }
  // The buffer is this call's alone until it is queued.
  std::copy(values.begin(), values.end(), buffers_[buffer].begin());
  {
    const std::lock_guard lock(mutex_);
    queue_.emplace_back(slot, buffer);
    ++writing_;
    newest_pending_[slot] = buffer;
  }
  changed_.notify_all();
  return true;
}

void DiskColumnTier::write_queued_columns() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, with nothing left to write
    const auto [slot, buffer] = queue_.front();
    queue_.pop_front();
    lock.unlock();
    const std::vector<double>& values = buffers_[buffer];
    const std::string problem =
        write_fully(descriptor_, reinterpret_cast<const char*>(values.data()), column_bytes_, offset(slot));
    const std::uint64_t sum = checksum(values);
    lock.lock();
    const auto newest = newest_pending_.find(slot);
    if (newest != newest_pending_.end() && newest->second == buffer) {  // else a later write supersedes this one
      newest_pending_.erase(newest);
      if (problem.empty()) {
        state_[slot] = SlotState::written;
        checksum_[slot] = sum;
        failure_.erase(slot);
      } else {
        state_[slot] = SlotState::failed;
        failure_[slot] = problem;
      }
    }
    free_buffers_.push_back(buffer);
    --writing_;
    changed_.notify_all();
  }
}

bool DiskColumnTier::read(std::size_t slot, std::span<double> values, std::string& problem) {
  GPSTREAM_CHECK(slot < capacity_ && values.size() == rows_, "disk tier read of slot {} ({} values) out of range", slot,
                 values.size());
  std::uint64_t expected;
  {
    const std::lock_guard lock(mutex_);
    if (const auto pending = newest_pending_.find(slot); pending != newest_pending_.end()) {
      // Not on disk yet: the queued copy is the newest value.
      const std::vector<double>& buffer = buffers_[pending->second];
      std::copy(buffer.begin(), buffer.end(), values.begin());
      return true;
    }
    switch (state_[slot]) {
      case SlotState::empty:
        problem = "nothing was written to its slot";
        return false;
      case SlotState::failed:
        problem = failure_[slot];
        return false;
      case SlotState::written:
        break;
    }
    expected = checksum_[slot];
  }
  problem = read_fully(descriptor_, reinterpret_cast<char*>(values.data()), column_bytes_, offset(slot));
  if (!problem.empty()) return false;
  if (checksum(values) != expected) {
    problem = "what was read back is not what was written: its checksum differs";
    return false;
  }
  return true;
}

void DiskColumnTier::flush() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return writing_ == 0; });
}

double DiskColumnTier::measure_read_seconds_per_value() {
  flush();
  const std::size_t columns = std::clamp<std::size_t>(kProbeBytes / column_bytes_, 1, capacity_);
  std::vector<double> column(rows_);
  for (std::size_t i = 0; i < rows_; ++i) column[i] = static_cast<double>(i);
  for (std::size_t slot = 0; slot < columns; ++slot) {
    const std::string problem =
        write_fully(descriptor_, reinterpret_cast<const char*>(column.data()), column_bytes_, offset(slot));
    GPSTREAM_CHECK(problem.empty(), "cannot write cached kernel columns in '{}': {}", directory_, problem);
  }
  // From the device, not from the copy the page cache keeps of what was just written.
  ::fdatasync(descriptor_);
  ::posix_fadvise(descriptor_, 0, static_cast<off_t>(offset(columns)), POSIX_FADV_DONTNEED);
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t slot = 0; slot < columns; ++slot) {
    const std::string problem =
        read_fully(descriptor_, reinterpret_cast<char*>(column.data()), column_bytes_, offset(slot));
    GPSTREAM_CHECK(problem.empty(), "cannot read cached kernel columns in '{}': {}", directory_, problem);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  {
    const std::lock_guard lock(mutex_);
    for (std::size_t slot = 0; slot < columns; ++slot) state_[slot] = SlotState::empty;
  }
  return seconds / static_cast<double>(columns * rows_);
}

std::string DiskColumnTier::describe() const { return fmt::format("a deleted file in {}", directory_); }

}  // namespace gpstream

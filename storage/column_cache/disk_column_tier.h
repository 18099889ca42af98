// DiskColumnTier: the kernel-column cache's disk tier (engine's
// ColumnDiskTier) as one file of fixed-size column slots.
//
// The file is created in a directory the user chooses and unlinked at once,
// so it vanishes when the run ends however it ends (a crash, SIGKILL, a
// reboot) and never outlives the job; it grows as slots are written.
// Columns are written by one background thread from a bounded queue of
// copies (its memory is a reservation of the run's budget): computing never
// waits for the disk, and a column that finds the queue full is not kept.
// Each slot is one contiguous range, read back with one large sequential
// read and checked against the XXH3-64 checksum of what was written, so a
// column changed on disk, a short read or a failed write is reported (and
// the cache computes the column again), never served.
#pragma once

#include "engine/core/context.h"
#include "engine/kernels/column_disk_tier.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gpstream {

class DiskColumnTier final : public ColumnDiskTier {
 public:
  // A tier in `directory` for columns of `rows` values, of `max_bytes`
  // (0: up to half of the directory's free space, and no more than `rows`
  // columns: a column per training row). Throws naming the directory when it
  // cannot create the file or has room for less than one column, and when
  // `max_bytes` is more than is free there. Its write queue takes up to
  // 64 MiB (at least one column) of `budget`.
  DiskColumnTier(const std::string& directory, std::size_t rows, std::uint64_t max_bytes, MemoryBudget& budget);
  ~DiskColumnTier() override;
  DiskColumnTier(const DiskColumnTier&) = delete;
  DiskColumnTier& operator=(const DiskColumnTier&) = delete;

  std::size_t rows() const override { return rows_; }
  std::size_t capacity() const override { return capacity_; }
  bool write(std::size_t slot, std::span<const double> values) override;
  bool read(std::size_t slot, std::span<double> values, std::string& problem) override;
  double measure_read_seconds_per_value() override;
  std::string describe() const override;

  // Waits until every queued write has reached the file (for tests and for
  // measurements).
  void flush();

 private:
  enum class SlotState : std::uint8_t { empty, written, failed };
  void write_queued_columns();
  std::uint64_t offset(std::size_t slot) const { return static_cast<std::uint64_t>(slot) * column_bytes_; }

  std::string directory_;
  std::size_t rows_;
  std::size_t column_bytes_;
  std::size_t capacity_ = 0;
  int descriptor_ = -1;
  MemoryReservation queue_memory_;
  std::size_t queue_columns_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::vector<double>> buffers_;  // up to queue_columns_, allocated as needed
  std::vector<std::size_t> free_buffers_;
  std::deque<std::pair<std::size_t, std::size_t>> queue_;        // (slot, buffer), oldest first
  std::size_t writing_ = 0;                                      // queued or being written
  std::unordered_map<std::size_t, std::size_t> newest_pending_;  // slot -> buffer of its newest write
  std::vector<SlotState> state_;
  std::vector<std::uint64_t> checksum_;
  std::unordered_map<std::size_t, std::string> failure_;  // slot -> why its write failed
  bool stopping_ = false;
  std::thread writer_;  // last: started once everything above exists
};

}  // namespace gpstream

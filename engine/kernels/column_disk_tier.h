// ColumnDiskTier: the second tier of the kernel-column cache — numbered
// slots, each holding one whole column, in storage that is larger and slower
// than RAM (storage/column_cache: a file on disk). The cache decides which
// column lives where (kernel_column_cache.h); a tier only keeps values and
// gives them back intact, or says it cannot.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace gpstream {

class ColumnDiskTier {
 public:
  virtual ~ColumnDiskTier() = default;

  // Values per column, and how many columns it holds.
  virtual std::size_t rows() const = 0;
  virtual std::size_t capacity() const = 0;

  // Queues `values` (rows() of them) to be kept in `slot`: copied before it
  // returns and written in the background, so that computing never waits for
  // the disk. False when as many writes are queued as the tier may buffer:
  // the column is then not kept. A later write to a slot supersedes an
  // earlier one.
  virtual bool write(std::size_t slot, std::span<const double> values) = 0;

  // The values last written to `slot`, bit for bit; false, with `problem`
  // saying why, when they cannot be given back intact (the write failed, the
  // read failed, or what was read is not what was written).
  virtual bool read(std::size_t slot, std::span<double> values, std::string& problem) = 0;

  // Seconds to read one value back from the storage itself (not from a
  // copy the operating system keeps in RAM), measured on this tier's own
  // storage with reads of whole columns; for deciding whether reading a
  // column beats computing it. May overwrite any slot: call it before the
  // first write.
  virtual double measure_read_seconds_per_value() = 0;

  // Where the columns are kept, for messages: "a deleted file in /data/tmp".
  virtual std::string describe() const = 0;
};

}  // namespace gpstream

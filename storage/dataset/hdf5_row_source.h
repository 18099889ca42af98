// Hdf5RowSource: the engine's RowSource over a gpstream dataset file.
#pragma once

#include "engine/data/row_source.h"
#include "storage/dataset/dataset_format.h"
#include "storage/hdf5/hdf5_handle.h"

#include <mutex>
#include <string>
#include <vector>

namespace gpstream {

class Hdf5RowSource final : public RowSource {
 public:
  // Opens and validates the dataset; the file stays open for the object's life.
  explicit Hdf5RowSource(const std::string& path);

  const DatasetDescription& description() const { return description_; }

  std::size_t rows() const override { return description_.rows; }
  std::size_t columns() const override { return description_.columns; }
  bool has_targets() const override { return true; }
  std::size_t preferred_block_alignment() const override { return std::max<std::size_t>(description_.chunk_rows, 1); }

 private:
  void do_read_rows(std::size_t first, std::size_t count, double* x, double* y) override;
  void do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) override;

  DatasetDescription description_;
  // The HDF5 library Debian ships is not thread-safe: one call at a time.
  std::mutex mutex_;
  hdf5::Handle file_;
  hdf5::Handle x_;
  hdf5::Handle y_;
};

}  // namespace gpstream

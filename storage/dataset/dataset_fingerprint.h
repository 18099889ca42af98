// The fingerprint of a dataset's contents: XXH3 of the /X bytes and of the
// /y bytes in row order, combined with the shape. Computed while a dataset
// is written (DatasetWriter) and recomputed from the file when a checkpoint
// or a model relies on the data being the same (verify_dataset_contents).
#pragma once

#include "engine/data/column_statistics.h"
#include "engine/data/standardisation.h"

#include <xxhash.h>

#include <cstdint>
#include <memory>
#include <string>

namespace gpstream {

class Hdf5RowSource;

class DatasetFingerprint {
 public:
  DatasetFingerprint();
  // Adds `rows` consecutive rows: x is rows×columns, row-major.
  void add_rows(std::size_t rows, std::size_t columns, const double* x, const double* y);
  // The 16 hex digits stored in the dataset's `fingerprint` attribute.
  std::string digest(std::uint64_t rows, std::uint64_t columns) const;

 private:
  using State = std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)>;
  State x_hash_;
  State y_hash_;
};

// The statistics (per-column mean and population standard deviation) and
// the fingerprint of rows added in order: what DatasetWriter records in a
// file and what describe_arrays (training_rows.h) computes for arrays, so
// that arrays and the file converted from them agree bit for bit.
class DatasetSummary {
 public:
  explicit DatasetSummary(std::size_t columns) : x_(columns), y_(1) {}
  // Adds `rows` consecutive rows: x is rows×columns, row-major.
  void add_rows(std::size_t rows, const double* x, const double* y);
  std::uint64_t rows() const { return rows_; }
  Standardisation statistics() const;
  std::string fingerprint() const { return fingerprint_.digest(rows_, x_.columns()); }

 private:
  ColumnStatistics x_, y_;
  DatasetFingerprint fingerprint_;
  std::uint64_t rows_ = 0;
};

// Reads every row of the dataset once, in order (which also checks that every
// value is finite), and throws when the contents no longer match the
// fingerprint the file was written with: the file was edited in place.
void verify_dataset_contents(Hdf5RowSource& rows);

}  // namespace gpstream

// DatasetWriter: appends rows to a new gpstream dataset file in bounded
// memory, computing the per-column statistics and the fingerprint on the way.
#pragma once

#include "engine/data/column_statistics.h"
#include "storage/dataset/dataset_fingerprint.h"
#include "storage/dataset/dataset_format.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/output/atomic_output_file.h"

#include <memory>
#include <string>
#include <vector>

namespace gpstream {

struct DatasetWriterOptions {
  std::size_t chunk_rows = 0;  // 0: default_chunk_rows(d)
  int compression_level = 0;   // deflate 0 (off) … 9
  bool overwrite = false;      // replace an existing file
  std::string source;          // recorded in the 'source' attribute
};

class DatasetWriter {
 public:
  // Reserves `path` at once (so a bad or existing output fails before any
  // input is read); nothing appears at `path` until finish().
  DatasetWriter(std::string path, std::vector<std::string> feature_names, std::string target_name,
                const DatasetWriterOptions& options);
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  std::size_t columns() const { return feature_names_.size(); }
  std::size_t rows_written() const { return rows_ + buffered_rows_; }

  // Appends one row of columns() inputs and its target.
  void append_row(const double* x, double y);
  // Appends `rows` rows (x row-major).
  void append_rows(std::size_t rows, const double* x, const double* y);

  // Writes the attributes, closes the file and renames it into place.
  DatasetDescription finish();

 private:
  void flush();

  std::vector<std::string> feature_names_;
  std::string target_name_;
  DatasetWriterOptions options_;
  AtomicOutputFile output_;
  hdf5::Handle file_;
  hdf5::Handle x_dataset_;
  hdf5::Handle y_dataset_;
  std::vector<double> x_buffer_;
  std::vector<double> y_buffer_;
  std::size_t buffered_rows_ = 0;
  std::size_t buffer_capacity_rows_ = 0;
  std::size_t rows_ = 0;
  DatasetSummary summary_;
};

}  // namespace gpstream

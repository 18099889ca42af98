#include "storage/dataset/dataset_writer.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/standardisation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace gpstream {
namespace {

constexpr std::size_t kWriteBufferBytes = 4u << 20;  // rows are written to HDF5 in ~4 MiB batches

hdf5::Handle create_chunked(hid_t file, const char* name, std::size_t columns, std::size_t chunk_rows,
                            int compression_level) {
  const int rank = columns == 0 ? 1 : 2;
  const hsize_t dims[2] = {0, static_cast<hsize_t>(columns)};
  const hsize_t max_dims[2] = {H5S_UNLIMITED, static_cast<hsize_t>(columns)};
  const hsize_t chunk[2] = {static_cast<hsize_t>(chunk_rows), static_cast<hsize_t>(columns)};
  hdf5::Handle space = hdf5::check_handle(H5Screate_simple(rank, dims, max_dims), H5Sclose, name);
  hdf5::Handle properties = hdf5::check_handle(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, name);
  hdf5::check_status(H5Pset_chunk(properties.get(), rank, chunk), name);
  if (compression_level > 0) {
    // Byte shuffling groups the exponent bytes of neighbouring doubles, which
    // is what lets deflate find anything to compress in floating-point data.
    hdf5::check_status(H5Pset_shuffle(properties.get()), name);
    hdf5::check_status(H5Pset_deflate(properties.get(), static_cast<unsigned>(compression_level)), name);
  }
  return hdf5::check_handle(
      H5Dcreate2(file, name, H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, properties.get(), H5P_DEFAULT), H5Dclose, name);
}

// Writes `rows` rows of `columns` values at row offset `first` of an extendible dataset.
void append_hyperslab(hid_t dataset, std::size_t first, std::size_t rows, std::size_t columns, const double* values,
                      const char* name) {
  const int rank = columns == 0 ? 1 : 2;
  const hsize_t new_dims[2] = {static_cast<hsize_t>(first + rows), static_cast<hsize_t>(columns)};
  hdf5::check_status(H5Dset_extent(dataset, new_dims), name);
  hdf5::Handle file_space = hdf5::check_handle(H5Dget_space(dataset), H5Sclose, name);
  const hsize_t start[2] = {static_cast<hsize_t>(first), 0};
  const hsize_t count[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(columns)};
  hdf5::check_status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), name);
  hdf5::Handle memory_space = hdf5::check_handle(H5Screate_simple(rank, count, nullptr), H5Sclose, name);
  hdf5::check_status(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, memory_space.get(), file_space.get(), H5P_DEFAULT, values),
                     name);
}

}  // namespace

DatasetWriter::DatasetWriter(std::string path, std::vector<std::string> feature_names, std::string target_name,
                             const DatasetWriterOptions& options)
    : feature_names_(std::move(feature_names)),
      target_name_(std::move(target_name)),
      options_(options),
      output_(std::move(path), options.overwrite),
      summary_(feature_names_.size()) {
  GPSTREAM_CHECK(!feature_names_.empty(), "{}: a dataset needs at least one input column", output_.path());
  std::unordered_set<std::string> seen;
  for (const std::string& name : feature_names_) {
    GPSTREAM_CHECK(seen.insert(name).second, "{}: input column name '{}' appears twice", output_.path(), name);
  }
  GPSTREAM_CHECK(options_.compression_level >= 0 && options_.compression_level <= 9,
                 "`compression_level`: the deflate level must be 0 to 9, not {}", options_.compression_level);
  const std::size_t columns = feature_names_.size();
  if (options_.chunk_rows == 0) options_.chunk_rows = default_chunk_rows(columns);
  GPSTREAM_CHECK(checked_multiply(options_.chunk_rows, columns, sizeof(double)) <= (std::size_t{1} << 31),
                 "`chunk_rows`: {} rows of {} columns exceed HDF5's 4 GiB chunk limit", options_.chunk_rows, columns);

  const std::size_t row_bytes = checked_multiply(columns, sizeof(double));
  buffer_capacity_rows_ =
      std::max(options_.chunk_rows, kWriteBufferBytes / row_bytes / options_.chunk_rows * options_.chunk_rows);
  x_buffer_.resize(checked_multiply(buffer_capacity_rows_, columns));
  y_buffer_.resize(buffer_capacity_rows_);

  file_ = hdf5::create_file(output_.temporary_path());
  x_dataset_ = create_chunked(file_.get(), "X", columns, options_.chunk_rows, options_.compression_level);
  // /y's chunks hold at least 4,096 targets: one-row chunks of X (very wide data) would make it a chunk a value.
  y_dataset_ = create_chunked(file_.get(), "y", 0, std::max<std::size_t>(options_.chunk_rows, 4096),
                              options_.compression_level);
}

DatasetWriter::~DatasetWriter() = default;

void DatasetWriter::append_row(const double* x, double y) {
  const std::size_t columns = feature_names_.size();
  std::memcpy(x_buffer_.data() + buffered_rows_ * columns, x, columns * sizeof(double));
  y_buffer_[buffered_rows_] = y;
  if (++buffered_rows_ == buffer_capacity_rows_) flush();
}

void DatasetWriter::append_rows(std::size_t rows, const double* x, const double* y) {
  const std::size_t columns = feature_names_.size();
  for (std::size_t i = 0; i < rows; ++i) append_row(x + i * columns, y[i]);
}

void DatasetWriter::flush() {
  if (buffered_rows_ == 0) return;
  const std::size_t columns = feature_names_.size();
  summary_.add_rows(buffered_rows_, x_buffer_.data(), y_buffer_.data());
  append_hyperslab(x_dataset_.get(), rows_, buffered_rows_, columns, x_buffer_.data(), "/X");
  append_hyperslab(y_dataset_.get(), rows_, buffered_rows_, 0, y_buffer_.data(), "/y");
  rows_ += buffered_rows_;
  buffered_rows_ = 0;
}

DatasetDescription DatasetWriter::finish() {
  flush();
  GPSTREAM_CHECK(rows_ > 0, "{}: no rows to write", output_.path());
  const hid_t root = file_.get();
  const std::string fingerprint = summary_.fingerprint();
  const Standardisation statistics = summary_.statistics();
  statistics.validate(output_.path(), feature_names_, target_name_, /*constant_target_allowed=*/true);

  hdf5::write_attribute(root, "format", std::string(kDatasetFormat));
  hdf5::write_attribute(root, "version", kDatasetVersion);
  hdf5::write_attribute(root, "feature_names", feature_names_);
  hdf5::write_attribute(root, "target_name", target_name_);
  hdf5::write_attribute(root, "x_mean", statistics.x_mean);
  hdf5::write_attribute(root, "x_std", statistics.x_std);
  hdf5::write_attribute(root, "y_mean", statistics.y_mean);
  hdf5::write_attribute(root, "y_std", statistics.y_std);
  hdf5::write_attribute(root, "fingerprint", fingerprint);
  hdf5::write_attribute(root, "source", options_.source);
  hdf5::write_creation_attributes(root);

  x_dataset_.close("/X of " + output_.path());
  y_dataset_.close("/y of " + output_.path());
  file_.close(output_.path());
  output_.commit();
  return read_dataset_description(output_.path());
}

}  // namespace gpstream

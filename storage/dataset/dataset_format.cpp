#include "storage/dataset/dataset_format.h"

#include "engine/core/error.h"
#include "storage/hdf5/hdf5_handle.h"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <unordered_map>

namespace gpstream {

std::size_t default_chunk_rows(std::size_t columns) {
  constexpr std::size_t kChunkBytes = 1u << 20;
  // A row wider than the chunk is a chunk of its own: a chunk is stored whole, so 64 rows of 100,000
  // inputs made a 3-row dataset 54 MiB for 2.4 MiB of values.
  return std::max<std::size_t>(1, kChunkBytes / (std::max<std::size_t>(columns, 1) * sizeof(double)));
}

namespace {

// Chunk rows and deflate level of a dataset, from its creation properties.
void read_layout(hid_t dataset, DatasetDescription& description) {
  hdf5::Handle properties = hdf5::check_handle(H5Dget_create_plist(dataset), H5Pclose, description.path + ": /X");
  if (H5Pget_layout(properties.get()) == H5D_CHUNKED) {
    hsize_t chunk[2] = {0, 0};
    if (H5Pget_chunk(properties.get(), 2, chunk) >= 1) description.chunk_rows = static_cast<std::size_t>(chunk[0]);
  }
  const int filters = H5Pget_nfilters(properties.get());
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0;
    std::size_t element_count = 1;
    unsigned values[1] = {0};
    const H5Z_filter_t filter =
        H5Pget_filter2(properties.get(), static_cast<unsigned>(i), &flags, &element_count, values, 0, nullptr, nullptr);
    if (filter == H5Z_FILTER_DEFLATE && element_count >= 1) description.compression_level = static_cast<int>(values[0]);
  }
}

}  // namespace

DatasetDescription read_dataset_description(const std::string& path) {
  hdf5::Handle file = hdf5::open_file(path);
  const hid_t root = file.get();
  DatasetDescription description;
  description.path = path;

  description.version = hdf5::check_format(root, path, kDatasetFormat, kDatasetVersion);

  hdf5::Handle x = hdf5::open_dataset(root, "X", path);
  hdf5::Handle y = hdf5::open_dataset(root, "y", path);
  const std::vector<hsize_t> x_dims = hdf5::dataset_dimensions(x.get(), path + ": /X");
  const std::vector<hsize_t> y_dims = hdf5::dataset_dimensions(y.get(), path + ": /y");
  hdf5::check_numeric(x.get(), path + ": /X");
  hdf5::check_numeric(y.get(), path + ": /y");
  GPSTREAM_CHECK(x_dims.size() == 2, "{}: /X should be a matrix, but has {} dimensions", path, x_dims.size());
  GPSTREAM_CHECK(y_dims.size() == 1, "{}: /y should be a vector, but has {} dimensions", path, y_dims.size());
  GPSTREAM_CHECK(x_dims[0] == y_dims[0], "{}: /X has {} rows but /y has {}", path, x_dims[0], y_dims[0]);
  GPSTREAM_CHECK(x_dims[1] > 0, "{}: /X has no columns", path);
  description.rows = static_cast<std::size_t>(x_dims[0]);
  description.columns = static_cast<std::size_t>(x_dims[1]);

  description.feature_names = hdf5::read_string_array_attribute(root, "feature_names", path);
  description.target_name = hdf5::read_string_attribute(root, "target_name", path);
  description.x_mean = hdf5::read_double_array_attribute(root, "x_mean", path);
  description.x_std = hdf5::read_double_array_attribute(root, "x_std", path);
  description.y_mean = hdf5::read_double_attribute(root, "y_mean", path);
  description.y_std = hdf5::read_double_attribute(root, "y_std", path);
  for (const auto* per_column : {&description.x_mean, &description.x_std}) {
    GPSTREAM_CHECK(per_column->size() == description.columns, "{}: {} column statistics for {} columns", path,
                   per_column->size(), description.columns);
  }
  GPSTREAM_CHECK(description.feature_names.size() == description.columns, "{}: {} feature names for {} columns", path,
                 description.feature_names.size(), description.columns);
  // Inputs are matched to CSV columns by name: a name twice would bind both to one column.
  std::unordered_map<std::string_view, std::size_t> first_column;
  first_column.reserve(description.columns);
  for (std::size_t l = 0; l < description.columns; ++l) {
    const auto [seen, added] = first_column.emplace(description.feature_names[l], l);
    GPSTREAM_CHECK(added, "{}: input columns {} and {} are both named \"{}\"; input names must be distinct", path,
                   seen->second + 1, l + 1, description.feature_names[l]);
  }
  description.fingerprint = hdf5::read_string_attribute(root, "fingerprint", path);
  if (hdf5::has_attribute(root, "source")) description.source = hdf5::read_string_attribute(root, "source", path);
  if (hdf5::has_attribute(root, "created_by")) {
    description.created_by = hdf5::read_string_attribute(root, "created_by", path);
  }

  read_layout(x.get(), description);
  description.data_bytes = H5Dget_storage_size(x.get()) + H5Dget_storage_size(y.get());
  std::error_code ignored;
  description.file_bytes = std::filesystem::file_size(path, ignored);
  return description;
}

}  // namespace gpstream

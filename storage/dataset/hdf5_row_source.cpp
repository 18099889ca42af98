#include "storage/dataset/hdf5_row_source.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace gpstream {
namespace {

// Reads the rows selected in `file_space` (in increasing row order) of a
// 1- or 2-dimensional dataset into a dense buffer of `rows` rows.
void read_selection(hid_t dataset, hid_t file_space, std::size_t rows, std::size_t columns, double* out,
                    const std::string& what) {
  const hsize_t dims[2] = {static_cast<hsize_t>(rows), static_cast<hsize_t>(columns)};
  hdf5::Handle memory_space = hdf5::check_handle(H5Screate_simple(columns == 0 ? 1 : 2, dims, nullptr), H5Sclose, what);
  GPSTREAM_CHECK(H5Dread(dataset, H5T_NATIVE_DOUBLE, memory_space.get(), file_space, H5P_DEFAULT, out) >= 0,
                 "cannot read {} (is the file damaged?)", what);
}

// The file row of the k-th row read by a union of row runs (for messages only).
std::size_t nth_distinct_row(const std::vector<std::pair<std::size_t, std::size_t>>& runs, std::size_t k) {
  for (const auto& [first, count] : runs) {
    if (k < count) return first + k;
    k -= count;
  }
  return 0;
}

// A file dataspace of `dataset` with the union of row runs [run.first, run.first + run.second) selected.
hdf5::Handle select_runs(hid_t dataset, const std::vector<std::pair<std::size_t, std::size_t>>& runs,
                         std::size_t columns, const std::string& what) {
  hdf5::Handle space = hdf5::check_handle(H5Dget_space(dataset), H5Sclose, what);
  H5S_seloper_t operation = H5S_SELECT_SET;
  for (const auto& [first, count] : runs) {
    const hsize_t start[2] = {static_cast<hsize_t>(first), 0};
    const hsize_t extent[2] = {static_cast<hsize_t>(count), static_cast<hsize_t>(columns)};
    hdf5::check_status(H5Sselect_hyperslab(space.get(), operation, start, nullptr, extent, nullptr), what);
    operation = H5S_SELECT_OR;
  }
  return space;
}

// Every value read must be finite: a NaN or inf in a file written by another
// tool (convert refuses them) would make a solver diverge or skip a row.
// `row_of(k)` is the file row of buffer row k.
template <typename RowOf>
void check_finite(const DatasetDescription& description, std::size_t rows, const double* x, const double* y,
                  RowOf row_of) {
  const std::size_t columns = description.columns;
  for (std::size_t k = 0; k < rows; ++k) {
    for (std::size_t j = 0; j < columns; ++j) {
      const double value = x[k * columns + j];
      if (!std::isfinite(value)) {
        GPSTREAM_THROW(
            "{}: /X row {} column {} (\"{}\") is {}: a dataset must hold finite numbers (gpstream convert "
            "refuses NaN and inf, or drops their rows with `drop_invalid`)",
            description.path, row_of(k) + 1, j + 1, description.feature_names[j], value);
      }
    }
    if (y != nullptr && !std::isfinite(y[k])) {
      GPSTREAM_THROW(
          "{}: /y row {} (\"{}\") is {}: a dataset must hold finite numbers (gpstream convert refuses NaN "
          "and inf, or drops their rows with `drop_invalid`)",
          description.path, row_of(k) + 1, description.target_name, y[k]);
    }
  }
}

}  // namespace

Hdf5RowSource::Hdf5RowSource(const std::string& path) : description_(read_dataset_description(path)) {
  file_ = hdf5::open_file(path);
  // Uncompressed chunks need no cache: HDF5 then reads exactly the selected
  // bytes, whole blocks straight into our buffer and single rows of a gather
  // without dragging in their whole chunk. A compressed chunk must be inflated
  // whole, so a cache of a few chunks lets the rows of a gather share one.
  hdf5::Handle access = hdf5::check_handle(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, path);
  const std::size_t chunk_bytes = checked_multiply(description_.chunk_rows, description_.columns + 1, sizeof(double));
  const std::size_t cache_bytes = description_.compression_level > 0 ? checked_multiply(chunk_bytes, 8) : 0;
  hdf5::check_status(H5Pset_chunk_cache(access.get(), 521, cache_bytes, 1.0), path);
  x_ = hdf5::open_dataset(file_.get(), "X", path, access.get());
  y_ = hdf5::open_dataset(file_.get(), "y", path, access.get());
}

void Hdf5RowSource::do_read_rows(std::size_t first, std::size_t count, double* x, double* y) {
  const std::vector<std::pair<std::size_t, std::size_t>> run = {{first, count}};
  std::lock_guard lock(mutex_);
  hdf5::Handle x_space = select_runs(x_.get(), run, description_.columns, description_.path + ": /X");
  read_selection(x_.get(), x_space.get(), count, description_.columns, x, description_.path + ": /X");
  if (y != nullptr) {
    hdf5::Handle y_space = select_runs(y_.get(), run, 0, description_.path + ": /y");
    read_selection(y_.get(), y_space.get(), count, 0, y, description_.path + ": /y");
  }
  check_finite(description_, count, x, y, [first](std::size_t k) { return first + k; });
}

// Gathers merge runs of requested rows at most kGatherMergeGapBytes of /X
// apart into one read of at most kGatherWindowBytes (the scratch it needs).
constexpr std::size_t kGatherMergeGapBytes = 32 << 10;
constexpr std::size_t kGatherWindowBytes = 1 << 20;

void Hdf5RowSource::do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) {
  // Read each distinct row once, in file order, as one union of row runs;
  // then scatter to the order asked for.
  std::vector<std::size_t> order(indices.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return indices[a] < indices[b]; });
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  std::vector<std::size_t> position(indices.size());  // row of the dense buffer holding indices[k]
  std::size_t distinct = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t row = indices[order[k]];
    if (k > 0 && row == indices[order[k - 1]]) {
      position[order[k]] = distinct - 1;
      continue;
    }
    if (!runs.empty() && runs.back().first + runs.back().second == row) {
      ++runs.back().second;
    } else {
      runs.emplace_back(row, 1);
    }
    position[order[k]] = distinct++;
  }

  const std::size_t columns = description_.columns;
  std::vector<double> dense_x(checked_multiply(distinct, columns));
  std::vector<double> dense_y(y != nullptr ? distinct : 0);
  {
    // Runs close together are read as one contiguous window (rows between
    // them included) and the rows asked for copied out: a union of many
    // one-row hyperslabs costs HDF5 time superlinear in their number (30,000
    // random rows of 2M: ~30 s), while reading the rows between costs less
    // than a read call.
    std::lock_guard lock(mutex_);
    const std::size_t row_bytes = std::max<std::size_t>(columns, 1) * sizeof(double);
    const std::size_t merge_gap = std::max<std::size_t>(kGatherMergeGapBytes / row_bytes, 1);
    const std::size_t window_limit = std::max<std::size_t>(kGatherWindowBytes / row_bytes, 1);
    std::vector<double> window_x, window_y;
    std::size_t filled = 0;  // rows of dense_x written
    for (std::size_t first_run = 0; first_run < runs.size();) {
      const std::size_t window_first = runs[first_run].first;
      std::size_t last_run = first_run;
      while (last_run + 1 < runs.size()) {
        const auto& [next_row, next_count] = runs[last_run + 1];
        const std::size_t end = runs[last_run].first + runs[last_run].second;
        if (next_row - end > merge_gap || next_row + next_count - window_first > window_limit) break;
        ++last_run;
      }
      const std::size_t window_rows = runs[last_run].first + runs[last_run].second - window_first;
      const std::vector<std::pair<std::size_t, std::size_t>> window = {{window_first, window_rows}};
      window_x.resize(checked_multiply(window_rows, columns));
      hdf5::Handle x_space = select_runs(x_.get(), window, columns, description_.path + ": /X");
      read_selection(x_.get(), x_space.get(), window_rows, columns, window_x.data(), description_.path + ": /X");
      if (y != nullptr) {
        window_y.resize(window_rows);
        hdf5::Handle y_space = select_runs(y_.get(), window, 0, description_.path + ": /y");
        read_selection(y_.get(), y_space.get(), window_rows, 0, window_y.data(), description_.path + ": /y");
      }
      for (std::size_t r = first_run; r <= last_run; ++r) {
        const std::size_t offset = runs[r].first - window_first, count = runs[r].second;
        std::memcpy(dense_x.data() + filled * columns, window_x.data() + offset * columns,
                    count * columns * sizeof(double));
        if (y != nullptr) std::copy_n(window_y.data() + offset, count, dense_y.data() + filled);
        filled += count;
      }
      first_run = last_run + 1;
    }
  }
  check_finite(description_, indices.size() == 0 ? 0 : distinct, dense_x.data(),
               y != nullptr ? dense_y.data() : nullptr, [&](std::size_t k) { return nth_distinct_row(runs, k); });
  for (std::size_t k = 0; k < indices.size(); ++k) {
    std::memcpy(x + k * columns, dense_x.data() + position[k] * columns, columns * sizeof(double));
    if (y != nullptr) y[k] = dense_y[position[k]];
  }
}

}  // namespace gpstream

#include "storage/dataset/dataset_fingerprint.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "storage/dataset/hdf5_row_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace gpstream {

DatasetFingerprint::DatasetFingerprint()
    : x_hash_(XXH3_createState(), XXH3_freeState), y_hash_(XXH3_createState(), XXH3_freeState) {
  GPSTREAM_CHECK(x_hash_ && y_hash_, "out of memory for the fingerprint state");
  XXH3_64bits_reset(x_hash_.get());
  XXH3_64bits_reset(y_hash_.get());
}

void DatasetFingerprint::add_rows(std::size_t rows, std::size_t columns, const double* x, const double* y) {
  XXH3_64bits_update(x_hash_.get(), x, checked_multiply(rows, columns, sizeof(double)));
  XXH3_64bits_update(y_hash_.get(), y, checked_multiply(rows, sizeof(double)));
}

std::string DatasetFingerprint::digest(std::uint64_t rows, std::uint64_t columns) const {
  const std::uint64_t parts[4] = {XXH3_64bits_digest(x_hash_.get()), XXH3_64bits_digest(y_hash_.get()), rows, columns};
  return fmt::format("{:016x}", XXH3_64bits(parts, sizeof(parts)));
}

void DatasetSummary::add_rows(std::size_t rows, const double* x, const double* y) {
  const std::size_t columns = x_.columns();
  for (std::size_t i = 0; i < rows; ++i) {
    x_.add_row(x + i * columns);
    y_.add_row(y + i);
  }
  fingerprint_.add_rows(rows, columns, x, y);
  rows_ += rows;
}

Standardisation DatasetSummary::statistics() const {
  return {x_.mean(), x_.standard_deviation(), y_.mean().front(), y_.standard_deviation().front()};
}

void verify_dataset_contents(Hdf5RowSource& rows) {
  const DatasetDescription& description = rows.description();
  const std::size_t columns = description.columns;
  // About 8 MiB of rows at a time, whole chunks.
  const std::size_t chunk = std::max<std::size_t>(description.chunk_rows, 1);
  const std::size_t block = std::max<std::size_t>(1, (std::size_t{1} << 20) / (columns + 1) / chunk) * chunk;
  std::vector<double> x(checked_multiply(block, columns)), y(block);
  DatasetFingerprint fingerprint;
  for (std::size_t first = 0; first < description.rows; first += block) {
    const std::size_t count = std::min(block, description.rows - first);
    rows.read_rows(first, count, x.data(), y.data());
    fingerprint.add_rows(count, columns, x.data(), y.data());
  }
  const std::string found = fingerprint.digest(description.rows, columns);
  if (found == description.fingerprint) return;
  // `convert` records "csv PATH" (Python's convert the path alone): the command that writes it again.
  std::string csv = description.source.starts_with("csv ") ? description.source.substr(4) : description.source;
  const bool from_csv = csv.ends_with(".csv") || csv.ends_with(".CSV");
  GPSTREAM_THROW(
      "'{}' was changed after it was written: its contents hash to {}, not to its fingerprint {}, so its stored "
      "statistics describe other data, and no model or checkpoint made from it fits it; write the dataset again{}",
      description.path, found, description.fingerprint,
      from_csv ? fmt::format(" from its CSV: gpstream convert '{}' -o '{}' --force", csv, description.path)
               : " (gpstream convert, generate, or Python's write_dataset), then start a new run");
}

}  // namespace gpstream

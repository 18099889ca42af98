#include "engine/data/row_source.h"

#include "engine/core/error.h"

namespace gpstream {

void RowSource::read_rows(std::size_t first, std::size_t count, double* x, double* y) {
  GPSTREAM_CHECK(first <= rows() && count <= rows() - first, "rows [{}, {}) are outside the {} rows of the dataset",
                 first, first + count, rows());
  GPSTREAM_CHECK(y == nullptr || has_targets(), "the dataset has no targets to read");
  if (count == 0) return;
  do_read_rows(first, count, x, y);
}

void RowSource::gather_rows(std::span<const std::size_t> indices, double* x, double* y) {
  for (const std::size_t index : indices) {
    GPSTREAM_CHECK(index < rows(), "row {} is outside the {} rows of the dataset", index, rows());
  }
  GPSTREAM_CHECK(y == nullptr || has_targets(), "the dataset has no targets to read");
  if (indices.empty()) return;
  do_gather_rows(indices, x, y);
}

}  // namespace gpstream

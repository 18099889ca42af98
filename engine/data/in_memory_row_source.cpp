#include "engine/data/in_memory_row_source.h"

#include "engine/core/error.h"

#include <algorithm>

namespace gpstream {

InMemoryRowSource::InMemoryRowSource(std::vector<double> x, std::vector<double> y, std::size_t columns)
    : x_(std::move(x)), y_(std::move(y)), columns_(columns), rows_(columns == 0 ? 0 : x_.size() / columns) {
  GPSTREAM_CHECK(columns > 0, "a row source needs at least one input column");
  GPSTREAM_CHECK(x_.size() % columns == 0, "{} values do not make whole rows of {} columns", x_.size(), columns);
  GPSTREAM_CHECK(y_.empty() || y_.size() == rows_, "{} targets for {} rows", y_.size(), rows_);
}

void InMemoryRowSource::do_read_rows(std::size_t first, std::size_t count, double* x, double* y) {
  const auto begin = x_.begin() + static_cast<std::ptrdiff_t>(first * columns_);
  std::copy(begin, begin + static_cast<std::ptrdiff_t>(count * columns_), x);
  if (y != nullptr) {
    std::copy_n(y_.begin() + static_cast<std::ptrdiff_t>(first), count, y);
  }
}

void InMemoryRowSource::do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) {
  for (std::size_t k = 0; k < indices.size(); ++k) {
    std::copy_n(x_.begin() + static_cast<std::ptrdiff_t>(indices[k] * columns_), columns_, x + k * columns_);
    if (y != nullptr) y[k] = y_[indices[k]];
  }
}

BorrowedRowSource::BorrowedRowSource(const double* x, const double* y, std::size_t rows, std::size_t columns)
    : x_(x), y_(y), rows_(rows), columns_(columns) {
  GPSTREAM_CHECK(columns > 0, "a row source needs at least one input column");
  GPSTREAM_CHECK(x != nullptr || rows == 0, "no input values for {} rows", rows);
}

void BorrowedRowSource::do_read_rows(std::size_t first, std::size_t count, double* x, double* y) {
  std::copy_n(x_ + first * columns_, count * columns_, x);
  if (y != nullptr) std::copy_n(y_ + first, count, y);
}

void BorrowedRowSource::do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) {
  for (std::size_t k = 0; k < indices.size(); ++k) {
    std::copy_n(x_ + indices[k] * columns_, columns_, x + k * columns_);
    if (y != nullptr) y[k] = y_[indices[k]];
  }
}

}  // namespace gpstream

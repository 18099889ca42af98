#include "engine/data/standardisation.h"

#include "engine/core/error.h"

namespace gpstream {

Standardisation Standardisation::identity() { return Standardisation{}; }

void Standardisation::apply_to_rows(double* x, std::size_t rows, std::size_t columns) const {
  if (!standardises_inputs()) return;
  GPSTREAM_CHECK(x_mean.size() == columns && x_std.size() == columns,
                 "the standardisation is for {} inputs but the rows have {}", x_mean.size(), columns);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t l = 0; l < columns; ++l) {
      const double spread = x_std[l] > 0.0 ? x_std[l] : 1.0;
      x[i * columns + l] = (x[i * columns + l] - x_mean[l]) / spread;
    }
  }
}

void Standardisation::apply_to_targets(double* y, std::size_t count) const {
  const double spread = y_std > 0.0 ? y_std : 1.0;
  for (std::size_t i = 0; i < count; ++i) y[i] = (y[i] - y_mean) / spread;
}

StandardisedRowSource::StandardisedRowSource(RowSource& inner, Standardisation standardisation)
    : inner_(inner), standardisation_(std::move(standardisation)) {
  GPSTREAM_CHECK(!standardisation_.standardises_inputs() || standardisation_.x_mean.size() == inner.columns(),
                 "the standardisation is for {} inputs but the data have {}", standardisation_.x_mean.size(),
                 inner.columns());
}

void StandardisedRowSource::do_read_rows(std::size_t first, std::size_t count, double* x, double* y) {
  inner_.read_rows(first, count, x, y);
  standardisation_.apply_to_rows(x, count, columns());
  if (y != nullptr) standardisation_.apply_to_targets(y, count);
}

void StandardisedRowSource::do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) {
  inner_.gather_rows(indices, x, y);
  standardisation_.apply_to_rows(x, indices.size(), columns());
  if (y != nullptr) standardisation_.apply_to_targets(y, indices.size());
}

}  // namespace gpstream

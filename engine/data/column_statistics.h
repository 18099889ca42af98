// Per-column mean and standard deviation accumulated in one pass over rows.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace gpstream {

// Welford's online algorithm (Welford 1962; Knuth TAOCP vol. 2, §4.2.2):
// numerically stable in a single pass, so statistics come for free while a
// dataset is being converted or generated, whatever its size.
//
// Any finite values give finite statistics: squared deviations of values
// beyond ~1e154 would overflow, so a column whose values grow past 2^400
// is accumulated in units of a power of two (scale_), rescaled exactly as
// larger values arrive. Columns of ordinary values never rescale and keep
// the plain algorithm's bits.
class ColumnStatistics {
 public:
  explicit ColumnStatistics(std::size_t columns)
      : mean_(columns, 0.0), sum_squared_deviations_(columns, 0.0), scale_(columns, 1.0) {}

  // Adds one row of `columns()` values.
  void add_row(const double* row) {
    ++count_;
    const double inverse_count = 1.0 / static_cast<double>(count_);
    for (std::size_t j = 0; j < mean_.size(); ++j) {
      if (std::abs(row[j]) > kRescaleAbove * scale_[j]) rescale(j, std::abs(row[j]));
      const double value = scale_[j] == 1.0 ? row[j] : row[j] / scale_[j];
      const double delta = value - mean_[j];
      mean_[j] += delta * inverse_count;
      sum_squared_deviations_[j] += delta * (value - mean_[j]);
    }
  }

  std::size_t columns() const { return mean_.size(); }
  std::size_t count() const { return count_; }
  std::vector<double> mean() const;

  // Population standard deviation (divides by n, as the papers' standardisation does).
  std::vector<double> standard_deviation() const;

 private:
  static constexpr double kRescaleAbove = 0x1p400;
  void rescale(std::size_t column, double magnitude);

  std::size_t count_ = 0;
  std::vector<double> mean_;
  std::vector<double> sum_squared_deviations_;
  std::vector<double> scale_;  // a power of two: the units of column j's mean and deviations
};

}  // namespace gpstream

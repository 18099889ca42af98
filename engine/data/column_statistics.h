// Per-column mean and standard deviation accumulated in one pass over rows.
#pragma once

#include <cstddef>
#include <vector>

namespace gpstream {

// Welford's online algorithm (Welford 1962; Knuth TAOCP vol. 2, §4.2.2):
// numerically stable in a single pass, so statistics come for free while a
// dataset is being converted or generated, whatever its size.
class ColumnStatistics {
 public:
  explicit ColumnStatistics(std::size_t columns) : mean_(columns, 0.0), sum_squared_deviations_(columns, 0.0) {}

  // Adds one row of `columns()` values.
  void add_row(const double* row) {
    ++count_;
    const double inverse_count = 1.0 / static_cast<double>(count_);
    for (std::size_t j = 0; j < mean_.size(); ++j) {
      const double delta = row[j] - mean_[j];
      mean_[j] += delta * inverse_count;
      sum_squared_deviations_[j] += delta * (row[j] - mean_[j]);
    }
  }

  std::size_t columns() const { return mean_.size(); }
  std::size_t count() const { return count_; }
  const std::vector<double>& mean() const { return mean_; }

  // Population standard deviation (divides by n, as the papers' standardisation does).
  std::vector<double> standard_deviation() const;

 private:
  std::size_t count_ = 0;
  std::vector<double> mean_;
  std::vector<double> sum_squared_deviations_;
};

}  // namespace gpstream

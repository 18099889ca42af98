#include "engine/data/column_statistics.h"

#include <cmath>

namespace gpstream {

void ColumnStatistics::rescale(std::size_t column, double magnitude) {
  // The power of two that brings `magnitude` to about 1: exact to apply.
  const double scale = std::ldexp(1.0, std::ilogb(magnitude));
  const double ratio = scale_[column] / scale;
  mean_[column] *= ratio;
  sum_squared_deviations_[column] *= ratio * ratio;
  scale_[column] = scale;
}

std::vector<double> ColumnStatistics::mean() const {
  std::vector<double> result(mean_.size());
  for (std::size_t j = 0; j < result.size(); ++j) result[j] = mean_[j] * scale_[j];
  return result;
}

std::vector<double> ColumnStatistics::standard_deviation() const {
  std::vector<double> result(mean_.size(), 0.0);
  if (count_ == 0) return result;
  for (std::size_t j = 0; j < result.size(); ++j) {
    result[j] = std::sqrt(sum_squared_deviations_[j] / static_cast<double>(count_)) * scale_[j];
  }
  return result;
}

}  // namespace gpstream

#include "engine/data/column_statistics.h"

#include <cmath>

namespace gpstream {

std::vector<double> ColumnStatistics::standard_deviation() const {
  std::vector<double> result(mean_.size(), 0.0);
  if (count_ == 0) return result;
  for (std::size_t j = 0; j < result.size(); ++j) {
    result[j] = std::sqrt(sum_squared_deviations_[j] / static_cast<double>(count_));
  }
  return result;
}

}  // namespace gpstream

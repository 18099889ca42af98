#include "engine/dense/dense_prediction.h"

#include "engine/core/error.h"

#include <algorithm>
#include <cmath>

namespace gpstream {

std::vector<double> predict_mean(KernelMatrix& training, std::span<const double> alpha, const double* test_rows,
                                 std::size_t count, std::size_t test_block_rows) {
  GPSTREAM_CHECK(alpha.size() == training.size(), "{} weights for {} training rows", alpha.size(), training.size());
  const std::size_t d = training.rows().columns();
  std::vector<double> mean(count, 0.0);
  for (std::size_t first = 0; first < count; first += test_block_rows) {
    const std::size_t block = std::min(test_block_rows, count - first);
    training.multiply_columns_transposed(test_rows + first * d, block, alpha.data(), 1, mean.data() + first);
  }
  return mean;
}

}  // namespace gpstream

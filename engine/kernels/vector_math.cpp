// Compiled with -ffast-math -fopenmp-simd (see engine/CMakeLists.txt).
#include "engine/kernels/vector_math.h"

#include <cmath>

namespace gpstream::vector_math {

void squared_exponential_row(double* row, std::size_t count, double row_norm, const double* column_norms,
                             double signal_variance) {
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    const double distance = std::fmax(row[j] + row_norm + column_norms[j], 0.0);
    row[j] = signal_variance * std::exp(-distance);
  }
}

void matern52_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance) {
  const double sqrt5 = std::sqrt(5.0);
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    const double distance = std::fmax(row[j] + row_norm + column_norms[j], 0.0);
    const double scaled = sqrt5 * std::sqrt(distance);
    row[j] = signal_variance * (1.0 + scaled + (5.0 / 3.0) * distance) * std::exp(-scaled);
  }
}

}  // namespace gpstream::vector_math

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

// The expansion ‖a‖² + ‖b‖² − 2a·b leaves a rounding residue of a few ulps
// of the norms where a = b, which √ would amplify to ~1e-8: distances below
// that level are zero (it matters for Matérn 1/2, whose slope at r = 0 is
// not zero; the smoother kernels are flat there).
constexpr double kRoundingLevel = 8.0 * 2.220446049250313e-16;

void matern32_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance) {
  const double sqrt3 = std::sqrt(3.0);
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    double distance = std::fmax(row[j] + row_norm + column_norms[j], 0.0);
    if (distance <= kRoundingLevel * (row_norm + column_norms[j])) distance = 0.0;
    const double scaled = sqrt3 * std::sqrt(distance);
    row[j] = signal_variance * (1.0 + scaled) * std::exp(-scaled);
  }
}

void matern12_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance) {
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    double distance = std::fmax(row[j] + row_norm + column_norms[j], 0.0);
    if (distance <= kRoundingLevel * (row_norm + column_norms[j])) distance = 0.0;
    row[j] = signal_variance * std::exp(-std::sqrt(distance));
  }
}

}  // namespace gpstream::vector_math

// Compiled with -ffast-math -fopenmp-simd (see engine/CMakeLists.txt).
#include "engine/kernels/vector_math.h"

#include <cmath>
#include <type_traits>

namespace gpstream::vector_math {

// e^{−x} for x ≥ 0. In single precision x is capped at 80 (e^{−80} ≈ 2e-35,
// zero next to s² for any use of rounded values): beyond ~87 expf
// underflows, and libmvec then takes a scalar path for the lane — it made
// Matérn 1/2's rounded blocks on bcef (lengthscales 0.035) several times slower.
template <typename Real>
inline Real decay(Real x) {
  if constexpr (std::is_same_v<Real, float>) x = std::fmin(x, 80.0f);
  return std::exp(-x);
}

// Each row pass forms D in double; `Real` is the precision of the
// transcendental part after it (double: the kernel's values; float: the
// rounded ones of Kernel::evaluate_rounded, 16 exponentials per AVX-512 call
// instead of 8).
template <typename Real>
void squared_exponential_row(double* row, std::size_t count, double row_norm, const double* column_norms,
                             double signal_variance) {
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    const Real distance = static_cast<Real>(std::fmax(row[j] + row_norm + column_norms[j], 0.0));
    row[j] = signal_variance * static_cast<double>(decay(distance));
  }
}

template <typename Real>
void matern52_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance) {
  const Real sqrt5 = std::sqrt(Real{5});
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    const Real distance = static_cast<Real>(std::fmax(row[j] + row_norm + column_norms[j], 0.0));
    const Real scaled = sqrt5 * std::sqrt(distance);
    row[j] = signal_variance * static_cast<double>(Real{1} + scaled + (Real{5} / Real{3}) * distance) *
             static_cast<double>(decay(scaled));
  }
}

// The expansion ‖a‖² + ‖b‖² − 2a·b leaves a rounding residue of a few ulps
// of the norms where a = b, which √ would amplify to ~1e-8: distances below
// that level are zero (it matters for Matérn 1/2, whose slope at r = 0 is
// not zero; the smoother kernels are flat there).
constexpr double kRoundingLevel = 8.0 * 2.220446049250313e-16;

template <typename Real>
void matern32_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance) {
  const Real sqrt3 = std::sqrt(Real{3});
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    double distance = std::fmax(row[j] + row_norm + column_norms[j], 0.0);
    if (distance <= kRoundingLevel * (row_norm + column_norms[j])) distance = 0.0;
    const Real scaled = sqrt3 * std::sqrt(static_cast<Real>(distance));
    row[j] = signal_variance * static_cast<double>(Real{1} + scaled) * static_cast<double>(decay(scaled));
  }
}

template <typename Real>
void matern12_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance) {
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    double distance = std::fmax(row[j] + row_norm + column_norms[j], 0.0);
    if (distance <= kRoundingLevel * (row_norm + column_norms[j])) distance = 0.0;
    row[j] = signal_variance * static_cast<double>(decay(std::sqrt(static_cast<Real>(distance))));
  }
}

template void squared_exponential_row<double>(double*, std::size_t, double, const double*, double);
template void squared_exponential_row<float>(double*, std::size_t, double, const double*, double);
template void matern52_row<double>(double*, std::size_t, double, const double*, double);
template void matern52_row<float>(double*, std::size_t, double, const double*, double);
template void matern32_row<double>(double*, std::size_t, double, const double*, double);
template void matern32_row<float>(double*, std::size_t, double, const double*, double);
template void matern12_row<double>(double*, std::size_t, double, const double*, double);
template void matern12_row<float>(double*, std::size_t, double, const double*, double);

// k = s² e^{−D}: h = 2k.
void squared_exponential_slope(const double* value, const double*, double* slope, std::size_t count) {
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) slope[j] = 2.0 * value[j];
}

// k = s² (1 + a + a²/3) e^{−a}, a = √(5D): h = (5/3) s² (1 + a) e^{−a} = (5/3) k (1 + a) / (1 + a + a²/3).
void matern52_slope(const double* value, const double* distance, double* slope, std::size_t count) {
  const double sqrt5 = std::sqrt(5.0);
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    const double scaled = sqrt5 * std::sqrt(distance[j]);
    slope[j] = (5.0 / 3.0) * value[j] * (1.0 + scaled) / (1.0 + scaled + (5.0 / 3.0) * distance[j]);
  }
}

// k = s² (1 + a) e^{−a}, a = √(3D): h = 3 s² e^{−a} = 3k / (1 + a).
void matern32_slope(const double* value, const double* distance, double* slope, std::size_t count) {
  const double sqrt3 = std::sqrt(3.0);
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) slope[j] = 3.0 * value[j] / (1.0 + sqrt3 * std::sqrt(distance[j]));
}

// k = s² e^{−r}, r = √D: h = k / r, and 0 at r = 0 (D_l / r → 0 there).
void matern12_slope(const double* value, const double* distance, double* slope, std::size_t count) {
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    const double r = std::sqrt(distance[j]);
    slope[j] = r > 0.0 ? value[j] / r : 0.0;
  }
}

double dot(const double* a, const double* b, std::size_t count) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (std::size_t j = 0; j < count; ++j) sum += a[j] * b[j];
  return sum;
}

void squared_distances(const double* x, const double* columns, std::size_t d, std::size_t count, double* distance) {
  for (std::size_t j = 0; j < count; ++j) distance[j] = 0.0;
  for (std::size_t l = 0; l < d; ++l) {
    const double value = x[l];
    const double* column = columns + l * count;
#pragma omp simd
    for (std::size_t j = 0; j < count; ++j) distance[j] += (value - column[j]) * (value - column[j]);
  }
}

void add_weighted_squared_differences(const double* x, const double* columns, std::size_t d, std::size_t count,
                                      const double* weighted, std::size_t weight_rows, double* out) {
  // In strips of columns, so that each strip's squared differences stay in L1 for every row of weights.
  constexpr std::size_t kStrip = 256;
  double squared[kStrip];
  for (std::size_t first = 0; first < count; first += kStrip) {
    const std::size_t width = count - first < kStrip ? count - first : kStrip;
    for (std::size_t l = 0; l < d; ++l) {
      const double value = x[l];
      const double* column = columns + l * count + first;
#pragma omp simd
      for (std::size_t j = 0; j < width; ++j) squared[j] = (value - column[j]) * (value - column[j]);
      for (std::size_t w = 0; w < weight_rows; ++w) {
        const double* weight = weighted + w * count + first;
        double sum = 0.0;
#pragma omp simd reduction(+ : sum)
        for (std::size_t j = 0; j < width; ++j) sum += weight[j] * squared[j];
        out[w * d + l] += sum;
      }
    }
  }
}

double cosine_sum(const double* phases, const double* weights, std::size_t count) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (std::size_t f = 0; f < count; ++f) sum += weights[f] * std::cos(phases[f]);
  return sum;
}

}  // namespace gpstream::vector_math

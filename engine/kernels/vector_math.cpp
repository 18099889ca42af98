// Compiled with -ffast-math -fopenmp-simd (see engine/CMakeLists.txt).
#include "engine/kernels/vector_math.h"

#include <cmath>

namespace gpstream::vector_math {

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

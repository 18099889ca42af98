// Cholesky factors of the small dense blocks a Vecchia approximation is made
// of (a conditioning set and its row: m + 1 ≤ ~100 rows), where plain loops
// beat a LAPACK call. Row-major, the lower triangle holds L.
#pragma once

#include <cmath>
#include <cstddef>

namespace gpstream::small_cholesky {

// A = L Lᵀ in place (size×size, row-major, lower triangle). False when a pivot is not positive.
inline bool factor_in_place(double* a, std::size_t size) {
  for (std::size_t j = 0; j < size; ++j) {
    double pivot = a[j * size + j];
    for (std::size_t k = 0; k < j; ++k) pivot -= a[j * size + k] * a[j * size + k];
    if (!(pivot > 0.0)) return false;
    const double diagonal = std::sqrt(pivot);
    a[j * size + j] = diagonal;
    for (std::size_t i = j + 1; i < size; ++i) {
      double value = a[i * size + j];
      for (std::size_t k = 0; k < j; ++k) value -= a[i * size + k] * a[j * size + k];
      a[i * size + j] = value / diagonal;
    }
  }
  return true;
}

// v ← L⁻¹ v.
inline void forward_solve(const double* l, std::size_t size, double* v) {
  for (std::size_t i = 0; i < size; ++i) {
    double value = v[i];
    for (std::size_t k = 0; k < i; ++k) value -= l[i * size + k] * v[k];
    v[i] = value / l[i * size + i];
  }
}

// v ← L⁻ᵀ v.
inline void backward_solve(const double* l, std::size_t size, double* v) {
  for (std::size_t i = size; i-- > 0;) {
    double value = v[i];
    for (std::size_t k = i + 1; k < size; ++k) value -= l[k * size + i] * v[k];
    v[i] = value / l[i * size + i];
  }
}

}  // namespace gpstream::small_cholesky

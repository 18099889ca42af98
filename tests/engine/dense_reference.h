// Dense linear algebra for the references the sparse-model tests compare
// against (row-major, O(n³), for a few dozen rows).
#pragma once

#include "engine/linalg/cholesky.h"
#include "problems.h"

#include <cmath>
#include <vector>

namespace gpstream::testing {

// K(A, B) from the reference formula.
inline std::vector<double> kernel_block(const KernelHyperparameters& h, const std::vector<double>& a,
                                        const std::vector<double>& b, std::size_t d) {
  const std::size_t p = a.size() / d, q = b.size() / d;
  std::vector<double> k(p * q);
  for (std::size_t i = 0; i < p; ++i)
    for (std::size_t j = 0; j < q; ++j) k[i * q + j] = reference_kernel(h, &a[i * d], &b[j * d], d);
  return k;
}

inline std::vector<double> multiply(const std::vector<double>& a, const std::vector<double>& b, std::size_t p,
                                    std::size_t k, std::size_t q, bool transpose_a = false) {
  std::vector<double> c(p * q, 0.0);
  for (std::size_t i = 0; i < p; ++i)
    for (std::size_t l = 0; l < k; ++l) {
      const double value = transpose_a ? a[l * p + i] : a[i * k + l];
      for (std::size_t j = 0; j < q; ++j) c[i * q + j] += value * b[l * q + j];
    }
  return c;
}

// x = M⁻¹ B for symmetric positive definite M (n×n), B n×r.
inline std::vector<double> spd_solve(std::vector<double> m, std::size_t n, std::vector<double> b, std::size_t r) {
  cholesky_factor(m.data(), n, "reference");
  cholesky_solve(m.data(), n, b.data(), r);
  return b;
}

// log |M| for symmetric positive definite M (n×n).
inline double log_determinant(std::vector<double> m, std::size_t n) {
  cholesky_factor(m.data(), n, "reference");
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += 2.0 * std::log(m[i * n + i]);
  return sum;
}

}  // namespace gpstream::testing

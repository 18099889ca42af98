// The vectorised element-wise passes of kernel evaluation. vector_math.cpp is
// the one file compiled with -ffast-math, so that GCC turns its exp() calls
// into glibc's libmvec vector calls (8 doubles per call with AVX-512); the
// loops see only finite, non-negative squared distances, which fast-math's
// assumptions hold for.
#pragma once

#include <cstddef>

namespace gpstream::vector_math {

// Turns one row of −2·a·bᵀ cross terms into squared distances
// D_j = max(0, cross_j + row_norm + column_norms_j) and then into
//   squared exponential:  s² exp(−D_j)
// with the function of D evaluated in `Real`: double for the kernel's
// values, float for values rounded to a relative error of about 1e-6
// (Kernel::evaluate_rounded), at about 0.6× the cost.
template <typename Real>
void squared_exponential_row(double* row, std::size_t count, double row_norm, const double* column_norms,
                             double signal_variance);
//   Matérn 5/2 (D = r²):  s² (1 + √5 r + 5 D / 3) exp(−√5 r)
template <typename Real>
void matern52_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance);
//   Matérn 3/2 (D = r²):  s² (1 + √3 r) exp(−√3 r)
template <typename Real>
void matern32_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance);
//   Matérn 1/2 (D = r²):  s² exp(−r)
template <typename Real>
void matern12_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance);

// The slope h(D) = −2 dk/dD of each family from its values k at the
// squared distances D, into `slope`: what the likelihood gradient multiplies
// each squared scaled difference by (∂k/∂log ℓ_l = h D_l).
void squared_exponential_slope(const double* value, const double* distance, double* slope, std::size_t count);
void matern52_slope(const double* value, const double* distance, double* slope, std::size_t count);
void matern32_slope(const double* value, const double* distance, double* slope, std::size_t count);
void matern12_slope(const double* value, const double* distance, double* slope, std::size_t count);

// Σ_j a_j b_j.
double dot(const double* a, const double* b, std::size_t count);
// distance[j] = Σ_l (x_l − columns[l·count + j])² for l < d: one row x
// against `count` rows stored coordinate-major (d × count), each squared
// difference formed exactly (no expansion), so that x = z gives 0.
void squared_distances(const double* x, const double* columns, std::size_t d, std::size_t count, double* distance);
// out[w·d + l] += Σ_j weighted[w·count + j] (x_l − columns[l·count + j])²
// for each of `weight_rows` rows of weights: the lengthscale part of a
// likelihood gradient, each squared difference formed once for all rows.
void add_weighted_squared_differences(const double* x, const double* columns, std::size_t d, std::size_t count,
                                      const double* weighted, std::size_t weight_rows, double* out);

// Σ_f weights[f] cos(phases[f]): one random-feature sample at one row
// (kernels/random_features.h).
double cosine_sum(const double* phases, const double* weights, std::size_t count);

}  // namespace gpstream::vector_math

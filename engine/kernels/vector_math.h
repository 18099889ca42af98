// The vectorised element-wise passes that every kernel's gradient and the
// random features share (each family's own row pass and slope live in its
// file of families/). vector_math.cpp is compiled with -ffast-math, as the
// family files are (families/stationary_family.h says why that is safe).
#pragma once

#include <cstddef>

namespace gpstream::vector_math {

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

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
void squared_exponential_row(double* row, std::size_t count, double row_norm, const double* column_norms,
                             double signal_variance);
//   Matérn 5/2 (D = r²):  s² (1 + √5 r + 5 D / 3) exp(−√5 r)
void matern52_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance);
//   Matérn 3/2 (D = r²):  s² (1 + √3 r) exp(−√3 r)
void matern32_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance);
//   Matérn 1/2 (D = r²):  s² exp(−r)
void matern12_row(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance);

}  // namespace gpstream::vector_math

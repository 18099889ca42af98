// The contraction every likelihood gradient over all rows needs
// (hyper/stochastic_gradient.h), in passes of a KernelMatrix.
#pragma once

#include "engine/kernels/kernel_matrix.h"

#include <cstddef>
#include <span>
#include <vector>

namespace gpstream {

// The contraction every likelihood gradient over all rows needs, without
// forming a matrix ∂K/∂θ_p: for weight blocks W_w = L_w R_wᵀ,
//   out[w·P + p] = Σ_i Σ_j (W_w)_ij ∂k(x_i, x_j)/∂θ_p,   P = matrix.kernel().parameter_count(),
// i over this rank's rows and j over all n (no noise term: the caller
// adds σ²'s). `left` holds this rank's rows × c values, `right` all n
// rows × c (the same on every rank), both row-major; block w takes the
// next widths[w] of the c columns. Summed over the ranks (the same on
// every rank). Panels of columns, each one pass over the rows, cut into
// fixed chunks summed in order: the result does not depend on the
// thread count.
std::vector<double> contract_parameter_gradient(KernelMatrix& matrix, const double* left, const double* right,
                                                std::size_t c, std::span<const std::size_t> widths);

}  // namespace gpstream

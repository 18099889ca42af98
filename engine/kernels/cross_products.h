// The sums over all training rows that the sparse models are built from
// (engine/sparse: a basis's K_Bᵀ K_B, its candidates' K_Cᵀ K_C and K_Cᵀ y),
// in one pass of a KernelMatrix.
#pragma once

#include "engine/kernels/kernel_matrix.h"

#include <cstddef>
#include <span>
#include <vector>

namespace gpstream {

// What cross_products sums.
struct CrossProducts {
  std::vector<double> pq;               // K_Pᵀ K_Q, p×q row-major
  std::vector<double> q_squared_norms;  // ‖K_Q[:, j]‖², q values
  std::vector<double> q_times_w;        // K_Qᵀ W, q×r row-major
};

// With K_P = K(X, P) and K_Q = K(X, Q) over all n training rows (no noise
// term; P, Q not training rows), in one pass: K_Pᵀ K_Q, the squared column
// norms of K_Q, and K_Qᵀ W for W n×r (r may be 0). Memory: a few p×q
// partial sums (a fixed number per block, so that the result does not
// depend on the thread count) plus one tile of K_P and K_Q per thread.
// With `p_whitening` (a p×p lower triangular L, row-major), K_P is replaced
// by the whitened features K_P L⁻ᵀ tile by tile (and K_Q too when Q is P):
// sums of those are positive semi-definite to working precision, which the
// whitening of K_Pᵀ K_P after the fact is not. With `q_projection` (W, p×q
// row-major; Q not P), K_Q is replaced by its residual K_Q − K_P W, row by
// row (K_P whitened or not), so that products of residuals that are small
// against K_Q keep their digits (a greedy basis's candidates: W = K_B⁻¹K_BC).
// Distributed: sums over every rank's rows (W is this rank's rows).
// With `p_indices` (P are these training rows: a basis), K_P's columns are
// computed entrywise, as multiply_columns' are, or read from the column
// cache, which keeps them for the next pass: a greedy basis uses every
// one of its columns again in each later step. The same bits either way.
CrossProducts cross_products(KernelMatrix& matrix, const double* p_rows, std::size_t p, const double* q_rows,
                             std::size_t q, const double* w, std::size_t r, const double* p_whitening = nullptr,
                             const double* q_projection = nullptr, std::span<const std::size_t> p_indices = {});

}  // namespace gpstream

// Predictions of a SparseModel: mean k_B(x*)ᵀβ and the latent variance of
// f(x*) in the model's closed form (sparse_model.h), for rows already in the
// model's standardised units. Cost per test row: O(m·d + m²) — independent
// of n — except for the reduced-rank model, whose mean and variance stream
// all n training rows once per batch of test rows.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/sparse/sparse_model.h"

#include <span>
#include <vector>

namespace gpstream {

struct SparsePrediction {
  std::vector<double> mean;    // standardised units
  std::vector<double> latent;  // variance of f(x*), empty unless asked for
  // Rows whose closed form came out negative and were set to 0. Rounding
  // alone for most forms; for the reduced-rank model the formula itself goes
  // negative where K̃ underestimates K (Schwaighofer & Tresp §4.2) — reported, not hidden.
  std::size_t negative_variances = 0;
};

// `training` streams the training rows; needed (non-null) only for the
// reduced-rank form. `kernel` is the model's kernel. Its parallel loops run
// in the caller's oneTBB arena (Context::execute).
SparsePrediction predict_sparse(const SparseModel& model, const Kernel& kernel, const double* test_rows,
                                std::size_t count, bool with_variance, KernelMatrix* training = nullptr);

// SRM-Trans (Schwaighofer & Tresp 2003 §3.1): each block of `block_rows`
// test rows is the basis of an SR model fitted to the training rows (one
// streamed pass per block), which then predicts that block. One progress
// report per block (done = test rows done) to the training Context's
// observers; its stop request is honoured between blocks (throws Cancelled).
SparsePrediction predict_transductive(KernelMatrix& training, std::span<const double> y, const double* test_rows,
                                      std::size_t count, std::size_t block_rows, bool with_variance);

}  // namespace gpstream

// The Bayesian committee machine (Tresp 2000; Schwaighofer & Tresp 2003
// §3.2, NOTES.md "BCM"), transductive: the training rows are partitioned
// into M modules D_1 … D_M, each an exact GP; for a block of test inputs x_*
// predicted jointly, module i gives the posterior mean E_i and covariance
// C_i = cov(f_* | D_i), and the committee combines them as
//   C⁻¹ = −(M − 1) K_**⁻¹ + Σ_i C_i⁻¹,   E = C Σ_i C_i⁻¹ E_i,
// exact when cov(y | f_*) is block diagonal over the modules — so with one
// module it is the exact GP.
//
// Modules are the outer loop: each is gathered and factorised once
// (O(|D_i|³)), then meets every query block, whose Σ C_i⁻¹ and Σ C_i⁻¹E_i
// accumulate; the combination happens once all modules are done. Memory:
// one module's factor plus t × block doubles for the accumulators. K_** and
// every C_i carry a jitter of kBasisJitter·s² (the same in both, so the
// combination stays consistent); a C_i that needs more is counted.
#pragma once

#include "engine/core/stop_flag.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/sparse/sparse_prediction.h"

#include <functional>
#include <span>
#include <vector>

namespace gpstream {

struct CommitteePrediction : SparsePrediction {
  std::size_t modules = 0;
  std::size_t extra_jitter = 0;  // module covariances C_i that needed more than the standard jitter
};

// `modules` lists row indices of `training` (each ascending); test_rows are
// count×d standardised inputs, predicted in blocks of `block_rows`.
// `progress` is called with the number of modules done.
CommitteePrediction predict_committee(KernelMatrix& training, std::span<const double> y,
                                      const std::vector<std::vector<std::size_t>>& modules, const double* test_rows,
                                      std::size_t count, std::size_t block_rows, bool with_variance,
                                      const std::function<void(std::size_t)>& progress = {},
                                      const StopFlag* stop = nullptr);

}  // namespace gpstream

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
// every C_i carry a jitter of basis_resolution(h).jitter (the same in both, so the
// combination stays consistent); a C_i that needs more is counted.
//
// Distributed (training rows partitioned among ranks): the k-means sums are
// all-reduced, module i is rank i mod P's (its rows and y collected from
// their owners), and the ranks' Σ C_i⁻¹ and Σ C_i⁻¹E_i are added before the
// combination, which every rank then makes alike.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/sparse/sparse_prediction.h"

#include <cstdint>
#include <span>
#include <vector>

namespace gpstream {

struct CommitteePrediction : SparsePrediction {
  std::size_t modules = 0;
  std::size_t extra_jitter = 0;  // module covariances C_i that needed more than the standard jitter
  std::size_t smallest_module = 0, largest_module = 0, query_block = 0;  // rows
};

struct CommitteeOptions {
  std::size_t modules = 0;         // M; 0: the training rows / module_size
  std::size_t module_size = 1000;  // rows per module, when `modules` is 0
  std::size_t query_block = 0;     // test rows predicted jointly; 0: the module size
  std::uint64_t seed = 1;          // of the k-means
};

// The whole committee: k-means modules of the training rows (data/k_means.h;
// oversized clusters cut by clusters_as_modules), the memory they need held
// in the training Context's budget, then predict_committee.
CommitteePrediction predict_by_committee(KernelMatrix& training, std::span<const double> y, const double* test_rows,
                                         std::size_t count, const CommitteeOptions& options, bool with_variance);

// `modules` lists row indices of `training` (each ascending); test_rows are
// count×d standardised inputs, predicted in blocks of `block_rows`.
// One progress report per module (done = modules done) to the training
// Context's observers; throws Cancelled at its stop request.
CommitteePrediction predict_committee(KernelMatrix& training, std::span<const double> y,
                                      const std::vector<std::vector<std::size_t>>& modules, const double* test_rows,
                                      std::size_t count, std::size_t block_rows, bool with_variance);

}  // namespace gpstream

// Predictive variances of the exact GP (GBCD paper eq. 2, NOTES.md):
//   latent  var f(x*) = K** − k*ᵀ K̄⁻¹ k*
//   noisy   var y(x*) = K** + σ² − k*ᵀ K̄⁻¹ k*
// The quadratic form needs a solve K̄u = k* per test row, which the paper
// does one row at a time with GBCD (§3.1, Table 3). Here a batch of r test
// rows is solved together, K̄U = K(X, X*), by the same block coordinate
// descent with one active set per iteration for all open columns
// (BlockCoordinateDescent::iterate_columns): every streamed kernel block
// K̄[:, B] then serves r right-hand sides, as one GEMM instead of r GEMVs.
// A column leaves the batch once its ‖g_j‖∞ ≤ tol, so easy rows do not pay
// for hard ones. With more than 32 open columns the greedy policy scores a
// 32-column random-sign sketch G·P instead of G (E‖eP‖² = ‖e‖²): the exact
// scores cost κ·|B|·r per greedy step on one core, 3–4× the whole
// iteration's time at r = 1000; B is still solved for exactly.
//
// U itself is never stored: BCD decreases f_j(u) = ½uᵀK̄u − k*ᵀu by
// ½ (G_B)ᵀΔ per iteration, and −2 f_j(u) = k*ᵀK̄⁻¹k* − (u − u*)ᵀK̄(u − u*)
// estimates the quadratic form with an error quadratic in the solve's error
// (a first-order one for k*ᵀu), from below — the variance errs on the large side.
#pragma once

#include "engine/kernels/kernel_matrix.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gpstream {

struct VarianceOptions {
  std::string policy = "gbcd";        // active-set policy: gbcd, bcd-cyclic, bcd-gradient
  std::size_t active_set_size = 500;  // m (GBCD paper §3)
  std::size_t candidates = 60;        // κ (GBCD paper §3)
  // Per column, on ‖K̄u − k*‖∞. The paper's 1e-4 (Table 3) leaves a relative
  // variance error of 2.4e-3 on kin40k; 3e-5 gives 2.7e-4 for 1.5× the time
  // (bench/bench_hyper_variance): the error falls about as tol².
  double tolerance = 3e-5;
  std::uint64_t max_iterations = 100000;  // per batch
  // Test rows solved together; 0: as many as half of the Context's free
  // memory budget holds (n doubles each), at most 1024.
  std::size_t batch_rows = 0;
  std::uint64_t seed = 1;
};

struct VariancePrediction {
  std::vector<double> latent;    // K** − k*ᵀK̄⁻¹k* per test row (standardised units); add σ² for y*
  std::uint64_t iterations = 0;  // over all batches
  std::size_t batches = 0, batch_rows = 0;
  std::size_t unconverged_rows = 0;  // stopped by max_iterations above tolerance
  double gradient_max_norm = 0.0;    // the largest final ‖g_j‖∞ over all rows
};

// Variances for `count` test rows (standardised, count×d) of the GP over the
// training rows behind `training`, run by the solver driver in the
// training's Context: its observers see one report per GBCD step (done =
// test rows finished, total = count, the measure the largest open ‖g_j‖∞).
// Throws Cancelled when the Context's stop is requested.
VariancePrediction predict_latent_variance(KernelMatrix& training, const double* test_rows, std::size_t count,
                                           const VarianceOptions& options);

}  // namespace gpstream

// The gradient of the exact −log p over all n rows, estimated without an
// n×n matrix as iterative GPs do [Gardner18 §4; Lin24] (HYPERPARAMETERS-AT-SCALE.md):
//
//   ∂(−log p)/∂θ_p = −½ αᵀ(∂K̄/∂θ_p)α + ½ tr(K̄⁻¹ ∂K̄/∂θ_p),               α = K̄⁻¹y
//   tr(K̄⁻¹ ∂K̄/∂θ_p) = E[u_zᵀ(∂K̄/∂θ_p)z],  u_z = K̄⁻¹z,  z = ±1 entries
//
// — Hutchinson's estimator of the trace [Hutchinson90], the default; or
// its pathwise form [Lin24], E[v_zᵀ(∂K̄/∂θ_p)v_z] with v_z = K̄⁻¹z for
// draws z = f + σε of the GP's own prior (f by random Fourier features,
// kernels/random_features.h, one set per probe), whose solves are as easy
// as α's but whose features' error makes them noisier for the time
// (measured: docs/model.md). No n×n matrix is formed and X streams from
// its source:
//
//  1. the t + 1 solves K̄[α U] = [y Z] run as one multi-column GBCD
//     (BlockCoordinateDescent::iterate_columns: each block K̄[:, B] serves
//     every column), each probe's column scaled to unit norm so that the
//     greedy selection weighs them alike, until every probe's relative
//     residual ‖K̄u − z‖/‖z‖ is at most `tolerance` and α's at most
//     `alpha_tolerance` (its column scaled up by their ratio): α's error
//     enters every component to first order through −½αᵀ(∂K̄/∂θ)α, the
//     probes' only through their average; warm-started from the previous
//     estimate's solutions — the probes are the same at every θ (from the
//     seed), so the estimate is a smooth function of θ and a search's
//     steps are comparable;
//  2. one pass over every pair of rows contracts ∂K/∂θ with the weights
//     −½ααᵀ and (½/t)UZᵀ (KernelMatrix::contract_parameter_gradient); σ²'s
//     part, ∂K̄/∂log σ² = σ²I, is dot products, and so is s²'s for a single
//     kernel (∂K/∂log s² = K̄ − σ²I), the trace parts taken in a form whose
//     error is second order in the solves'.
//
// The probes are split into `groups` whose estimates are independent:
// their spread estimates the covariance of the gradient's error from the
// probes, which a search needs to tell a step from noise. The solves'
// error is not in it: at the default tolerances it is below the probes'
// (measured and tested: docs/model.md).
//
// Cost per estimate: the BCD iterations of the solves (each m·n kernel
// entries and an n×m×(t+1) product), pathwise probes' features
// (n·F·(d + 1) per probe), and one pass of n² entries with
// O(d·(groups + 1)) work each; memory O(n·(t + 1)). On ranks each rank
// holds its rows of the solutions and gradients and the contraction is
// summed over the ranks: every rank gets the same estimate.
#pragma once

#include "engine/core/context.h"
#include "engine/data/row_partition.h"
#include "engine/data/row_source.h"
#include "engine/kernels/kernel.h"
#include "engine/kernels/random_features.h"
#include "engine/solvers/dense_solver.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace gpstream {

class KernelMatrix;

struct StochasticGradientOptions {
  std::size_t probes = 16;  // t
  std::size_t groups = 8;   // of probes, for the error's covariance (divides t)
  // The probes: z ~ N(0, K̄) by random features (pathwise), or Hutchinson's ±1 (tr(K̄⁻¹A) ≈ uᵀAz, u = K̄⁻¹z).
  enum class Probes { pathwise, rademacher } probe_kind = Probes::rademacher;
  std::size_t features = 2048;                 // F random Fourier features per pathwise probe
  double tolerance = 1e-2;                     // each probe's solve's relative residual
  double alpha_tolerance = 1e-4;               // α's (at most `tolerance`)
  std::size_t active_set_size = 500;           // m [BoSminchisescu08 §3]
  std::size_t candidates = kGreedyCandidates;  // κ
  std::uint64_t max_iterations = 100000;       // BCD iterations per estimate
  std::uint64_t seed = 1;                      // of the probes and of the greedy selection
};

struct GradientEstimate {
  std::vector<double> gradient;    // ∂(−log p)/∂θ, θ = log_parameters(kernel)
  std::vector<double> covariance;  // of the estimate's error, p×p row-major (from the probe groups)
  std::uint64_t iterations = 0;    // BCD iterations of the solves
  double largest_residual = 0.0;   // max over the t + 1 columns of ‖K̄u − b‖/‖b‖ at the end, α's scaled by
                                   // tolerance / alpha_tolerance (the solves are done when it is ≤ tolerance)
  double solve_seconds = 0.0, seconds = 0.0;  // the solves', and all of it
};

// One step of the solves, for progress and stop requests: the BCD iteration and the largest relative residual.
using SolveProgress = std::function<void(std::uint64_t iteration, double largest_residual)>;

class StochasticGradient {
 public:
  // `rows` are this rank's, with targets (the residual of the prior mean);
  // they must outlive the estimator. Reserves its O(n·(t + 1)) vectors in the
  // Context's budget.
  StochasticGradient(Context& context, RowSource& rows, const RowPartition& partition,
                     const StochasticGradientOptions& options);

  // The estimate at `kernel` (a stationary kernel or a sum of them).
  // `progress` is called after every BCD iteration.
  GradientEstimate estimate(const KernelHyperparameters& kernel, const SolveProgress& progress = {});

  // The solutions K̄⁻¹[y Z] of the last estimate, all n rows × (t + 1),
  // row-major: the next estimate's start. A checkpoint keeps them, so that
  // a resumed search starts its next solve from the same bits.
  const std::vector<double>& solutions() const { return solutions_; }
  void restore_solutions(std::vector<double> solutions);

  // The memory estimate() holds beyond the rows, for t probes on n rows.
  static std::size_t bytes(std::size_t n, std::size_t probes);

 private:
  std::size_t columns() const { return options_.probes + 1; }
  // This rank's rows of [y Z] at `kernel`.
  std::vector<double> right_hand_sides(const KernelHyperparameters& kernel);
  // The solves of an estimate: B = [y Z] (this rank's rows × (t + 1)) and
  // the residuals R = K̄U − B, with U kept in solutions_ (all rows).
  struct ProbeSolves {
    std::vector<double> sides, residuals;
  };
  // K̄U = B by multi-column GBCD from the last estimate's U, each column to
  // its tolerance (progress and counts into `result`).
  ProbeSolves solve_probes(KernelMatrix& matrix, const KernelHyperparameters& kernel, const SolveProgress& progress,
                           GradientEstimate& result);
  // The contraction's blocks: α's part of the gradient, then each group's
  // part of the trace term, with σ²'s and (single kernels) s²'s parts, each
  // parameter_count() values.
  std::vector<double> trace_blocks(KernelMatrix& matrix, const KernelHyperparameters& kernel,
                                   const ProbeSolves& solves);

  Context& context_;
  RowSource& rows_;
  RowPartition partition_;
  StochasticGradientOptions options_;
  MemoryReservation memory_;
  std::vector<double> targets_;               // this rank's y
  std::vector<RandomFeatureSample> samples_;  // each probe's f (made for the first kernel's shape)
  std::vector<double> solutions_;             // all n rows (empty: start from 0)
};

}  // namespace gpstream

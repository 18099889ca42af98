// Hyperparameters refined on all n rows by the exact likelihood's
// stochastic gradient (stochastic_gradient.h), from a subset's optimum — a
// pre-fit on a subset, then a few steps on all rows, as Wang et al. fit a
// million rows [Wang19 §5] (HYPERPARAMETERS-AT-SCALE.md).
//
// The estimate gives the gradient, not the value, so the steps are Newton
// steps with a model of the curvature and no line search on values:
//
//   θ ← θ − H⁻¹ ĝ(θ),   H the subset's Hessian at the start, scaled to n rows
//
// — the curvature per row of a subset of thousands of rows is close to all
// rows' up to a factor (in a lengthscale it grows with the rows' density),
// so after each step H is rescaled whole by the curvature measured along
// the step, sᵀ(ĝ' − ĝ) against sᵀHs (by at most 4 a step). H is not
// updated in rank from differences of estimates (BFGS): with a noisy
// gradient those differences are partly noise, and such an update made H
// tens of times too stiff and the steps stall (measured on the tests'
// problems). Each step is limited to `largest_step` in every log-parameter
// and kept in the search's bounds; where the estimate at the new point says the step went
// past the minimum along it by more than half (its directional derivative
// changed sign), it is cut back to where the two derivatives' secant puts
// the minimum. The refinement stops when the next step is within
// `significance` standard errors of zero in every parameter — the gradient
// is zero within the estimate's own error (its covariance, from the probe
// groups, through H⁻¹) — or after `max_steps` estimates; the answer is the
// last point estimated, and its standard errors are the estimate's error
// carried into θ: how far the answer may be from the exact optimum.
//
// A parameter the likelihood hardly depends on — its curvature below
// 1e-6 of the largest, as an irrelevant input's lengthscale on its upper
// bound — is held where it starts: the gradient cannot place it, and its
// Newton step, the estimate's noise over a vanishing curvature, would
// otherwise take up the step limit that the others need.
//
// Each estimate goes through the search journal, with the solves' solutions
// as its warm start, so that a checkpointed refinement resumes to the same
// bits (a checkpoint is written per estimate: an interrupted one is redone).
#pragma once

#include "engine/core/context.h"
#include "engine/data/row_partition.h"
#include "engine/data/row_source.h"
#include "engine/hyper/search_journal.h"
#include "engine/hyper/stochastic_gradient.h"

#include <string>
#include <vector>

namespace gpstream {

struct StochasticRefinementOptions {
  StochasticGradientOptions gradient;
  std::size_t max_steps = 0;         // estimates, the first at the start included (0: no refinement)
  double largest_step = 1.0;         // in any log-parameter, per step
  double significance = 2.0;         // standard errors a step must exceed in some parameter to be taken
  double min_noise_variance = 1e-6;  // the search's lower bound of σ²
};

struct StochasticRefinement {
  KernelHyperparameters hyperparameters;
  // Of each log-parameter at the answer: the estimate's error through H⁻¹ (0 for a held one).
  std::vector<double> standard_errors;
  std::size_t held = 0;  // parameters held where they started (flat: see the header)
  std::size_t estimates = 0;
  std::uint64_t iterations = 0;  // BCD iterations of all the solves
  double seconds = 0.0;
  std::string stop_reason;
};

// The refinement from `start` over `rows` (this rank's, with targets: the
// residual of the prior mean), with `hessian` (p×p, row-major) the
// curvature of −log p over all n rows at the start in θ = log_parameters().
// Reports each estimate to the Context's observers (iteration and done: the
// estimate; objective NaN, not estimated; measure: the estimated gradient's
// largest component; point: the values estimated at), and within it each
// BCD iteration of its solves (inner_iteration, with the measure their
// largest relative residual over its tolerance: done at 1), honouring the
// Context's stop request between them.
StochasticRefinement refine_by_stochastic_gradient(Context& context, RowSource& rows, const RowPartition& partition,
                                                   const KernelHyperparameters& start,
                                                   const std::vector<double>& hessian,
                                                   const StochasticRefinementOptions& options,
                                                   SearchJournal* journal = nullptr);

// The Hessian of the exact −log p at `at` over `rows` rows of a seeded
// random subset (the one learn_on_subset draws for that seed and size),
// by forward differences of the exact gradient (p + 1 evaluations, each
// through `journal`), scaled by n / rows to all n rows, and symmetrised.
std::vector<double> subset_hessian(Context& context, RowSource& rows, const RowPartition& partition,
                                   const KernelHyperparameters& at, std::size_t subset_rows,
                                   SearchJournal* journal = nullptr);

}  // namespace gpstream

// Hyperparameter learning: minimise the negative log marginal likelihood
// (marginal_likelihood.h) over θ = log-hyperparameters with NLopt's
// L-BFGS (a quasi-Newton method with box bounds), from a fixed start and
// `restarts` random ones, keeping the best optimum. The GBCD paper (§3,
// "Experiments") learns them the same way — BFGS on a random subset of 2000
// rows, tolerance 1e-4 on the likelihood and on the hyperparameters.
//
// The search runs in standardised units (zero-mean, unit-variance inputs and
// targets), where one set of bounds and starts suits every dataset:
//   lengthscales ℓ ∈ [1e-3, 1e5], signal variance s² ∈ [1e-3, 1e3],
//   noise variance σ² ∈ [min_noise_variance, 10]
// (the bounds of the reference files in shared/data/hyper). The first start
// is informed by the data: ℓ_l = √d · std(x_l) (a typical scaled squared
// distance of about 2 whatever d is; ℓ = 1 with 32 inputs makes K̄ ≈ (s² +
// σ²)I, flat in every ℓ), s² = var(y), σ² = var(y)/10; restarts scale it by
// log-uniform factors in [0.1, 10] (ℓ, s²) and [0.01, 10] (σ²). The lower
// bound on σ² keeps K̄ well conditioned: an exact GP with σ² → 0
// interpolates and its Cholesky factor breaks down. A trial point where K̄
// is not positive definite is a rejected step; a search NLopt gives up
// after progress returns the best point it evaluated. A user may give
// any of the first start's values (StartingPoint); the others stay informed
// by the data, and the restarts scatter around that start.
#pragma once

#include "engine/core/context.h"
#include "engine/hyper/marginal_likelihood.h"
#include "engine/hyper/search_journal.h"
#include "engine/kernels/kernel.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpstream {

// The longest lengthscale a search reaches (standardised units): an input whose lengthscale sits there is one
// the kernel ignores.
inline constexpr double kLongestLengthscale = 1e5;

// Values of the first start given by the user (standardised units); what is
// left empty comes from the data. One lengthscale stands for every input of
// an ARD kernel; otherwise there must be as many as the kernel has.
struct StartingPoint {
  std::vector<double> lengthscales;
  std::optional<double> signal_variance, noise_variance;
  NamedValues family_parameters;  // the family's own (rational quadratic's alpha), by name

  bool empty() const {
    return lengthscales.empty() && !signal_variance && !noise_variance && family_parameters.empty();
  }
};

struct HyperparameterSearchOptions {
  KernelType kernel = KernelType::squared_exponential_ard;
  // The prior mean's basis, fitted jointly (its coefficients, when given, are β's start; else 0).
  MeanFunction mean;
  std::size_t restarts = 0;           // random starts after the fixed one
  double tolerance = 1e-4;            // relative change of the objective, and of each log-hyperparameter
  std::size_t max_evaluations = 500;  // per start
  double min_noise_variance = 1e-6;   // lower bound of σ² (standardised targets)
  std::uint64_t seed = 0;             // of the restarts
  StartingPoint start;                // the user's part of the first start
  SearchJournal* journal = nullptr;   // when given, every evaluation goes through it (replayed on resume)
  // The families of the terms after `kernel`'s for a sum kernel (their values informed by the data: longer
  // lengthscales, a smaller signal variance); or `initial`: the whole first start, shape and values (the
  // user's `start` unused).
  std::vector<KernelType> further_terms;
  std::optional<KernelHyperparameters> initial;
  // Racing (Fisher scoring only): a candidate whose objective stays above this even after kRaceMargin times
  // the decrease the quadratic model predicts cannot catch the best candidate, and its search stops.
  double give_up_above = std::numeric_limits<double>::infinity();
  // A model of the objective's curvature in θ (P×P, row-major, in the gradient's order), known from elsewhere:
  // when given, each start searches by scoring steps with it (fisher_scoring_from), the model corrected by BFGS
  // along every accepted step, instead of by L-BFGS, which starts with none (the exact ladder's rungs,
  // model_learning.h).
  std::vector<double> curvature;
  // Fisher scoring also stops where a step predicts a decrease below this many nats (an absolute floor beside the
  // tolerance's relative one, for an objective near 0).
  double least_decrease = 0.0;
  // Racing the restarts: the best information criterion (−log p + ½ P log n on these rows) of the candidates
  // searched before this one. A first start whose criterion trails it by more than kRestartMargin skips the
  // restarts, which would have to gain more than that to matter.
  double skip_restarts_above = std::numeric_limits<double>::infinity();
};

// What a restart must gain over its first start, in nats, to matter where racing the restarts skips them: on the
// development sets no restart gained 2 (docs/benchmarks.md, "Racing the restarts").
inline constexpr double kRestartMargin = 10.0;

// How much more than the Fisher model's predicted decrease a candidate is granted before racing stops it: the
// model is exact at the optimum and underestimates what is left far from it, where decreases are large anyway.
inline constexpr double kRaceMargin = 10.0;

struct SearchStart {
  KernelHyperparameters initial, optimum;
  std::vector<double> initial_mean, optimum_mean;  // β at the start and at the optimum
  double objective = 0.0;
  std::size_t evaluations = 0;
  std::string stop_reason;  // NLopt's, in words
  bool gave_up = false;     // stopped by racing (HyperparameterSearchOptions::give_up_above)
  std::vector<double> curvature;  // the given curvature model as corrected up to the optimum (else empty)
};

struct HyperparameterSearchResult {
  KernelHyperparameters hyperparameters;  // the best optimum over all starts
  std::vector<double> mean_coefficients;  // β there (empty without a mean function)
  double objective = 0.0;                 // −log p(y | X, θ) there
  std::vector<SearchStart> starts;
  std::size_t best_start = 0;
  std::vector<double> curvature;  // the best start's (SearchStart::curvature)
  std::size_t restarts_skipped = 0;  // by HyperparameterSearchOptions::skip_restarts_above
};

// An objective of θ = log_parameters() (marginal_likelihood.h) that writes
// its gradient into the second argument; it may throw.
using LogParameterObjective = std::function<double(std::span<const double>, std::span<double>)>;

struct BoundedMinimum {
  std::vector<double> theta;
  double value = 0.0;
  std::size_t evaluations = 0;
  std::string stop_reason;  // NLopt's, in words
};

// The bounds above for θ = [log-parameters of a kernel of the shape of
// `shape`, then `mean_terms` mean coefficients β (±1e3, standardised units)].
struct LogParameterBounds {
  std::vector<double> lower, upper;
};
LogParameterBounds log_parameter_bounds(const KernelHyperparameters& shape, std::size_t mean_terms,
                                        double min_noise_variance);

// Minimises `objective` from θ with NLopt's L-BFGS inside the bounds above
// (σ² ≥ min_noise_variance), stopping at a relative objective change or
// absolute θ change of `tolerance` or after `max_evaluations`. An exception
// thrown by the objective is re-thrown here; Cancelled when the `context`'s
// stop is requested (none: never).
BoundedMinimum minimise_log_parameters(const LogParameterObjective& objective, std::vector<double> theta,
                                       double min_noise_variance, double tolerance, std::size_t max_evaluations,
                                       const Context* context = nullptr);
// The same for θ = [log-parameters of a kernel of the shape of `shape`
// (sum kernels included), then `mean_terms` mean coefficients β, bounded by
// ±1e3 (standardised units)].
BoundedMinimum minimise_log_parameters(const LogParameterObjective& objective, std::vector<double> theta,
                                       const KernelHyperparameters& shape, std::size_t mean_terms,
                                       double min_noise_variance, double tolerance, std::size_t max_evaluations,
                                       const Context* context);

class WorkProgress;

// One start of a search: minimises `likelihood` over θ and β from `start`
// and β = `start_mean` (zeros when empty) with the bounds and tolerance of
// `options`, reporting every evaluation to `progress` as start `start_number`.
SearchStart search_from(Context& context, Likelihood& likelihood, const KernelHyperparameters& start,
                        std::span<const double> start_mean, std::size_t start_number,
                        const HyperparameterSearchOptions& options, WorkProgress& progress);

// search_from by Fisher scoring [Guinness21 §3; GpGp's fit_model], for a
// likelihood that gives its expected Fisher information I (the Vecchia
// likelihood's): steps s = −I⁻¹g in θ and β — the information damped where it
// does not factor, a parameter held on a bound its gradient pushes against,
// each value moved by at most a factor e² — halved until the objective falls
// (Armijo); stops when the decrease a step predicts, −½ gᵀs, is below
// options.tolerance · |objective|. Second-order steps: ~10–20 evaluations
// where L-BFGS takes ~90 (each evaluation about twice a gradient's work).
// With options.curvature, the same steps with that matrix for I, corrected by
// BFGS along each accepted step (a quasi-Newton search from a known
// curvature [NocedalWright06 §6.1]), for any likelihood.
SearchStart fisher_scoring_from(Context& context, Likelihood& likelihood, const KernelHyperparameters& start,
                                std::span<const double> start_mean, std::size_t start_number,
                                const HyperparameterSearchOptions& options, WorkProgress& progress);

// Learns hyperparameters for rows x (n×d, row-major, standardised) and
// targets y (standardised). Throws when the objective is not finite (with
// what to check) or K̄ is not numerically positive definite at a point the
// optimiser tries, and Cancelled when the Context's stop is requested. Each
// evaluation is reported to the Context's observers (iteration: the
// evaluation within its start; done: the start, 0 for the fixed one;
// objective −log p(y|X, θ); measure ‖∂/∂θ‖∞; point: [ℓ…, s², σ²]). The
// factorisations use the Context's threads in BLAS.
HyperparameterSearchResult learn_hyperparameters(Context& context, const double* x, std::span<const double> y,
                                                 std::size_t d, const HyperparameterSearchOptions& options);

// The start of a term added to the kernel `first` (d inputs): a smooth
// trend — the lengthscale 2√d on every input, which the data shorten for
// the inputs it follows — with a third of the first term's signal variance.
KernelTerm added_term_start(KernelType type, const KernelHyperparameters& first, std::size_t d);

// One sentence for each learned value that ended on a bound of the search
// (lengthscale 3 on its upper bound 1e5, …), with why it may be harmless;
// empty when none did.
std::vector<std::string> values_on_bounds(const KernelHyperparameters& hyperparameters, double min_noise_variance);

// One sentence when the optimum of `start` equals its initial point in every
// value (the search never moved: the likelihood is flat there, or the start
// was already optimal), or else one naming the lengthscales that did not
// move from their initial values — inputs the likelihood ignores at that
// point; empty when every value moved. "Equal" is within 1e-6, relatively.
std::vector<std::string> values_at_start(const SearchStart& start);

}  // namespace gpstream

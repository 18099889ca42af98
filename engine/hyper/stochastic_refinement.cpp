#include "engine/hyper/stochastic_refinement.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/core/work_progress.h"
#include "engine/data/partitioned_rows.h"
#include "engine/data/row_source_utilities.h"
#include "engine/hyper/hyperparameter_search.h"
#include "engine/hyper/marginal_likelihood.h"
#include "engine/hyper/subset_learning.h"
#include "engine/linalg/cholesky.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

namespace gpstream {
namespace {

// The forward-difference step of subset_hessian, in log-parameters: far above
// the gradient's rounding (its terms are O(rows), their sum near 0 at an
// optimum), far below the curvature's scale.
constexpr double kDifferenceStep = 1e-4;

// Below this share of the largest curvature a parameter is held (see the header).
constexpr double kFlatCurvature = 1e-6;

// The Newton model of −log p: its Hessian H (p×p, row-major), factored
// once, lifted on its diagonal where it is not positive definite (far from
// an optimum the subset's curvature can be indefinite).
class CurvatureModel {
 public:
  explicit CurvatureModel(std::vector<double> hessian) : hessian_(std::move(hessian)) {
    p_ = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(hessian_.size()))));
    GPSTREAM_CHECK(p_ * p_ == hessian_.size(), "a Hessian of {} values is not square", hessian_.size());
  }

  // Solves H X = B in place (B p×r, row-major).
  void solve(std::vector<double>& b, std::size_t r) {
    factor();
    cholesky_solve(factor_.data(), p_, b.data(), r);
  }

  // sᵀHs: the curvature the model gives along s.
  double along(const std::vector<double>& s) const {
    double sum = 0.0;
    for (std::size_t i = 0; i < p_; ++i)
      for (std::size_t j = 0; j < p_; ++j) sum += s[i] * hessian_[i * p_ + j] * s[j];
    return sum;
  }

  // H ← factor · H.
  void scale(double factor) {
    for (double& value : hessian_) value *= factor;
    factored_ = false;
  }

 private:
  void factor() {
    if (factored_) return;
    double scale = 0.0;
    for (std::size_t i = 0; i < p_; ++i) scale = std::max(scale, std::abs(hessian_[i * p_ + i]));
    GPSTREAM_CHECK(scale > 0.0 && std::isfinite(scale), "the curvature of the likelihood is {} at the start", scale);
    for (double lift = 0.0;; lift = lift == 0.0 ? 1e-8 * scale : 10.0 * lift) {
      factor_ = hessian_;
      for (std::size_t i = 0; i < p_; ++i) factor_[i * p_ + i] += lift;
      try {
        cholesky_factor(factor_.data(), p_, "the likelihood's curvature");
        break;
      } catch (const Error&) {
        GPSTREAM_CHECK(lift < 1e3 * scale, "the likelihood's curvature could not be made positive definite");
      }
    }
    factored_ = true;
  }

  std::vector<double> hessian_, factor_;
  std::size_t p_ = 0;
  bool factored_ = false;
};

// An all-rows estimate of the gradient of −log p and of its covariance Σ.
struct Estimate {
  std::vector<double> gradient, covariance;
};

// Held parameters leave the model: those whose curvature is flat against the steepest; their rows and columns
// of H (`model`, p×p) become the identity's (and their gradient and covariance entries are zeroed where they
// are estimated), so their steps and standard errors are 0.
std::vector<bool> hold_flat_parameters(std::vector<double>& model, std::size_t p) {
  double steepest = 0.0;
  for (std::size_t k = 0; k < p; ++k) steepest = std::max(steepest, model[k * p + k]);
  std::vector<bool> held(p, false);
  for (std::size_t k = 0; k < p; ++k) {
    if (!(steepest > 0.0) || std::abs(model[k * p + k]) > kFlatCurvature * steepest) continue;
    held[k] = true;
    for (std::size_t j = 0; j < p; ++j) model[k * p + j] = model[j * p + k] = 0.0;
    model[k * p + k] = 1.0;
  }
  return held;
}

// The Newton step −H⁻¹ĝ, and its standard errors √diag(H⁻¹ΣH⁻¹) (two solves with H's factor).
std::vector<double> newton_step(CurvatureModel& curvature, const Estimate& at, std::vector<double>& standard_errors) {
  const std::size_t p = at.gradient.size();
  std::vector<double> step(p);
  for (std::size_t k = 0; k < p; ++k) step[k] = -at.gradient[k];
  curvature.solve(step, 1);
  std::vector<double> spread = at.covariance;  // Σ, then H⁻¹Σ, (H⁻¹Σ)ᵀ = ΣH⁻¹, then H⁻¹ΣH⁻¹
  curvature.solve(spread, p);
  for (std::size_t i = 0; i < p; ++i)
    for (std::size_t j = 0; j < i; ++j) std::swap(spread[i * p + j], spread[j * p + i]);
  curvature.solve(spread, p);
  standard_errors.resize(p);
  for (std::size_t k = 0; k < p; ++k) standard_errors[k] = std::sqrt(std::max(spread[k * p + k], 0.0));
  return step;
}

}  // namespace

std::vector<double> subset_hessian(Context& context, RowSource& rows, const RowPartition& partition,
                                   const KernelHyperparameters& at, std::size_t subset_rows, SearchJournal* journal) {
  const std::size_t n = partition.global_rows, d = rows.columns();
  const std::vector<std::size_t> subset = random_row_subset(n, subset_rows, context.seed());
  const MemoryReservation memory =
      context.memory().reserve(fmt::format("the likelihood's curvature on {} rows", subset.size()),
                               subset_learning_bytes(subset.size(), d), "learn on subsets only");
  std::vector<double> x, y;
  Communicator& ranks = context.communicator();
  collect_partitioned_rows(ranks, rows, partition, subset, x, nullptr, &y);
  ExactLikelihood exact(x.data(), y, d);
  std::optional<JournaledLikelihood> journaled;
  if (journal != nullptr) journaled.emplace(exact, *journal);
  Likelihood& likelihood = journaled ? static_cast<Likelihood&>(*journaled) : exact;
  const ScopedBlasThreads blas_threads = context.parallel_blas();

  const std::vector<double> theta = log_parameters(at);
  const std::size_t p = theta.size();
  const std::vector<double> base = likelihood.evaluate(at, {}).gradient;
  std::vector<double> hessian(p * p);
  for (std::size_t k = 0; k < p; ++k) {
    std::vector<double> moved = theta;
    moved[k] += kDifferenceStep;
    const std::vector<double> gradient = likelihood.evaluate(with_log_parameters(at, moved), {}).gradient;
    for (std::size_t j = 0; j < p; ++j) hessian[j * p + k] = (gradient[j] - base[j]) / kDifferenceStep;
  }
  const double scale = static_cast<double>(n) / static_cast<double>(subset.size());
  for (std::size_t i = 0; i < p; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      const double value = 0.5 * scale * (hessian[i * p + j] + hessian[j * p + i]);
      hessian[i * p + j] = hessian[j * p + i] = value;
    }
  }
  ranks.broadcast(hessian, 0);  // rank 0's, as the subset's search keeps rank 0's values
  return hessian;
}

namespace {

// What each all-rows estimate of a refinement uses, and where it counts.
struct EstimateInputs {
  StochasticGradient& estimator;
  const KernelHyperparameters& start;
  const std::vector<bool>& held;
  const StochasticRefinementOptions& options;
  SearchJournal* journal;
  WorkProgress& progress;
  StochasticRefinement& result;
};

// The gradient and its covariance at log-parameters `at`: replayed from the journal where it holds them, else
// estimated (the solves warm-started from the last ones), reported step by step, held parameters' entries zero.
Estimate estimate_at(const std::vector<double>& at, EstimateInputs& in) {
  const std::size_t p = at.size();
  const KernelHyperparameters h = with_log_parameters(in.start, at);
  const std::vector<double> values = hyperparameter_values(h), signal = signal_variances(h);
  ++in.result.estimates;
  const auto compute = [&] {
    // Replaying ended here: the next solve starts where the last recorded one left off.
    if (in.journal != nullptr && in.estimator.solutions().empty() && !in.journal->warm_start.empty())
      in.estimator.restore_solutions(in.journal->warm_start);
    const GradientEstimate estimate = in.estimator.estimate(h, [&](std::uint64_t iteration, double residual) {
      in.progress.step({.kind = ReportKind::gradient_estimate,
                        .iteration = in.result.estimates,
                        .objective = std::numeric_limits<double>::quiet_NaN(),
                        .convergence_measure = residual / in.options.gradient.tolerance,
                        .done = in.result.estimates,
                        .point = values,
                        .signal_variances = signal,
                        .noise_variance = h.noise_variance,
                        .inner_iteration = iteration});
      in.progress.throw_if_stopped("the all-rows hyperparameter refinement");
    });
    in.result.iterations += estimate.iterations;
    if (in.journal != nullptr) in.journal->warm_start = in.estimator.solutions();
    return SearchJournal::Entry{{}, std::numeric_limits<double>::quiet_NaN(), estimate.gradient, estimate.covariance};
  };
  std::vector<double> point = {static_cast<double>(static_cast<int>(h.type))};
  point.insert(point.end(), at.begin(), at.end());
  SearchJournal::Entry entry = in.journal != nullptr ? in.journal->evaluate_entry(point, compute) : compute();
  for (std::size_t k = 0; k < p; ++k) {
    if (!in.held[k]) continue;
    entry.gradient[k] = 0.0;
    for (std::size_t j = 0; j < p; ++j) entry.covariance[k * p + j] = entry.covariance[j * p + k] = 0.0;
  }
  double largest = 0.0;
  for (const double component : entry.gradient) largest = std::max(largest, std::abs(component));
  in.progress.step({.kind = ReportKind::gradient_estimate,
                    .iteration = in.result.estimates,
                    .objective = std::numeric_limits<double>::quiet_NaN(),
                    .convergence_measure = largest,
                    .done = in.result.estimates,
                    .point = values,
                    .signal_variances = signal,
                    .noise_variance = h.noise_variance});
  return Estimate{std::move(entry.gradient), std::move(entry.covariance)};
}

}  // namespace

StochasticRefinement refine_by_stochastic_gradient(Context& context, RowSource& rows, const RowPartition& partition,
                                                   const KernelHyperparameters& start,
                                                   const std::vector<double>& hessian,
                                                   const StochasticRefinementOptions& options, SearchJournal* journal) {
  const auto started = std::chrono::steady_clock::now();
  std::vector<double> theta = log_parameters(start);
  const std::size_t p = theta.size();
  GPSTREAM_CHECK(hessian.size() == p * p, "a Hessian of {} values for {} parameters", hessian.size(), p);
  GPSTREAM_CHECK(options.max_steps >= 1 && options.largest_step > 0.0 && options.significance >= 0.0,
                 "the all-rows refinement needs at least one estimate, a positive step limit and a non-negative "
                 "significance");
  const LogParameterBounds bounds = log_parameter_bounds(start, 0, options.min_noise_variance);
  std::vector<double> model = hessian;
  const std::vector<bool> held = hold_flat_parameters(model, p);
  StochasticRefinement result;
  result.held = static_cast<std::size_t>(std::count(held.begin(), held.end(), true));
  CurvatureModel curvature(std::move(model));
  StochasticGradient estimator(context, rows, partition, options.gradient);
  WorkProgress progress(context, options.max_steps);

  EstimateInputs inputs{estimator, start, held, options, journal, progress, result};
  const auto dot = [&](const std::vector<double>& a, const std::vector<double>& b) {
    double sum = 0.0;
    for (std::size_t k = 0; k < p; ++k) sum += a[k] * b[k];
    return sum;
  };

  Estimate current = estimate_at(theta, inputs);
  for (;;) {
    const std::vector<double> step = newton_step(curvature, current, result.standard_errors);
    bool significant = false;
    for (std::size_t k = 0; k < p; ++k)
      significant = significant || std::abs(step[k]) > options.significance * result.standard_errors[k];
    if (!significant) {
      result.stop_reason =
          fmt::format("the gradient is zero within {:g} standard errors of its estimate", options.significance);
      break;
    }
    if (result.estimates >= options.max_steps) {
      result.stop_reason = fmt::format("the step limit ({} estimates)", options.max_steps);
      break;
    }
    double longest = 0.0;
    for (const double component : step) longest = std::max(longest, std::abs(component));
    const double shrink = longest > options.largest_step ? options.largest_step / longest : 1.0;
    std::vector<double> next(p);
    for (std::size_t k = 0; k < p; ++k)
      next[k] = std::clamp(theta[k] + shrink * step[k], bounds.lower[k], bounds.upper[k]);
    std::vector<double> moved(p);
    for (std::size_t k = 0; k < p; ++k) moved[k] = next[k] - theta[k];
    if (dot(moved, moved) == 0.0) {
      result.stop_reason = "every step is held at the search's bounds";
      break;
    }
    Estimate there = estimate_at(next, inputs);
    // Past the minimum along the step by more than half: back to where the directional derivative's secant is 0.
    const double before = dot(current.gradient, moved), after = dot(there.gradient, moved);
    if (before < 0.0 && after > 0.0 && result.estimates < options.max_steps) {
      const double fraction = before / (before - after);
      if (fraction < 0.5) {
        for (std::size_t k = 0; k < p; ++k) next[k] = theta[k] + std::max(fraction, 0.1) * moved[k];
        for (std::size_t k = 0; k < p; ++k) moved[k] = next[k] - theta[k];
        there = estimate_at(next, inputs);
      }
    }
    // How stiff the model was along the step: the measured curvature sᵀ(ĝ' − ĝ) against sᵀHs. A subset's
    // curvature, scaled by n/rows, can be off by a factor (the curvature in a lengthscale per row grows with the
    // rows' density); H is rescaled whole, by at most 4 a step — not updated in rank (see the header).
    const double modelled = curvature.along(moved),
                 measured = dot(there.gradient, moved) - dot(current.gradient, moved);
    if (modelled > 0.0 && measured > 0.0) curvature.scale(std::clamp(measured / modelled, 0.25, 4.0));
    theta = std::move(next);
    current = std::move(there);
  }
  result.hyperparameters = with_log_parameters(start, theta);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace gpstream

#include "engine/hyper/hyperparameter_search.h"

#include "engine/linalg/small_cholesky.h"

#include "engine/core/work_progress.h"

#include "engine/core/error.h"
#include "engine/hyper/marginal_likelihood.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlopt.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <random>

namespace gpstream {
namespace {

// Bounds and restart box in standardised units (see the header).
constexpr double kLengthscaleBounds[2] = {1e-3, kLongestLengthscale};
constexpr double kSignalBounds[2] = {1e-3, 1e3};
constexpr double kNoiseUpperBound = 10.0;
constexpr double kRestartLengthscale[2] = {0.1, 10.0};
constexpr double kRestartSignal[2] = {0.1, 10.0};
constexpr double kRestartNoise[2] = {1e-3, 1.0};
constexpr double kLargestScoringStep = 2.0;  // in log-parameters: a factor e² in any value a Fisher-scoring step
constexpr double kMeanBound = 1e3;  // |β| in standardised units: a trend of a thousand standard deviations per one

std::string describe_nlopt_result(nlopt_result result) {
  switch (result) {
    case NLOPT_SUCCESS:
      return "converged";
    case NLOPT_STOPVAL_REACHED:
      return "objective reached the stop value";
    case NLOPT_FTOL_REACHED:
      return "objective changed by less than the tolerance";
    case NLOPT_XTOL_REACHED:
      return "hyperparameters changed by less than the tolerance";
    case NLOPT_MAXEVAL_REACHED:
      return "evaluation limit reached";
    case NLOPT_MAXTIME_REACHED:
      return "time limit reached";
    case NLOPT_ROUNDOFF_LIMITED:
      return "stopped by rounding errors (the optimum is as good as double precision gives)";
    case NLOPT_FORCED_STOP:
      return "stopped";
    case NLOPT_OUT_OF_MEMORY:
      return "out of memory";
    case NLOPT_INVALID_ARGS:
      return "invalid arguments";
    case NLOPT_FAILURE:
      return "failed";
    default:
      return "ended";
  }
}

struct NloptDeleter {
  void operator()(nlopt_opt optimiser) const { nlopt_destroy(optimiser); }
};
using Optimiser = std::unique_ptr<std::remove_pointer_t<nlopt_opt>, NloptDeleter>;

// What the C callback needs; exceptions are parked here and re-thrown after
// nlopt_optimize returns (they must not unwind through NLopt's C frames).
struct CallbackData {
  const LogParameterObjective* objective = nullptr;
  const Context* context = nullptr;
  nlopt_opt optimiser = nullptr;
  std::size_t evaluations = 0;
  std::exception_ptr failure;
  // The best point evaluated so far: what the search returns when NLopt
  // gives up after progress.
  std::vector<double> best_theta;
  double best_value = std::numeric_limits<double>::infinity();
  std::size_t rejected = 0;  // points where K̄ was not positive definite, or the objective not finite
};

double evaluate(unsigned dimension, const double* theta, double* gradient, void* data) {
  CallbackData& callback = *static_cast<CallbackData*>(data);
  try {
    if (callback.context != nullptr && callback.context->stop_requested())
      throw Cancelled("hyperparameter search stopped");
    std::vector<double> local_gradient(dimension);
    double value = 0.0;
    try {
      value = (*callback.objective)(std::span(theta, dimension), local_gradient);
    } catch (const Cancelled&) {
      throw;
    } catch (const Error&) {
      // A trial point where K̄ is not numerically positive definite (or the
      // objective overflows) is a rejected step, not the end of the search:
      // a value far above the best makes the line search step back.
      if (!std::isfinite(callback.best_value)) throw;  // not even the start can be evaluated
      ++callback.rejected;
      if (gradient != nullptr) std::fill(gradient, gradient + dimension, 0.0);
      return callback.best_value + 1e6 * (1.0 + std::abs(callback.best_value));
    }
    ++callback.evaluations;
    if (gradient != nullptr) std::copy(local_gradient.begin(), local_gradient.end(), gradient);
    if (value < callback.best_value) {
      callback.best_value = value;
      callback.best_theta.assign(theta, theta + dimension);
    }
    return value;
  } catch (...) {
    callback.failure = std::current_exception();
    nlopt_force_stop(callback.optimiser);
    return std::numeric_limits<double>::quiet_NaN();
  }
}

// The data-informed start: ℓ_l = √d · std(x_l), so that a typical squared
// distance Σ (x_l − z_l)²/ℓ_l² is about 2 whatever d is (with ℓ = 1 and 32
// inputs K̄ ≈ s²I + σ²I, where the likelihood is flat in every ℓ and the
// search never moves them); s² = var(y); σ² = var(y)/10. The user's values
// replace the informed ones they give.
KernelHyperparameters first_start(KernelType kernel, const double* x, std::span<const double> y, std::size_t d,
                                  const HyperparameterSearchOptions& options) {
  const std::size_t n = y.size();
  std::vector<double> spread(d, 0.0);
  for (std::size_t l = 0; l < d; ++l) {
    double mean = 0.0, squares = 0.0;
    for (std::size_t i = 0; i < n; ++i) mean += x[i * d + l];
    mean /= static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) squares += (x[i * d + l] - mean) * (x[i * d + l] - mean);
    spread[l] = std::sqrt(squares / static_cast<double>(n));
    if (!(spread[l] > 0)) spread[l] = 1.0;  // a constant input: any lengthscale fits it
  }
  double y_mean = 0.0, y_squares = 0.0;
  for (const double value : y) y_mean += value;
  y_mean /= static_cast<double>(n);
  for (const double value : y) y_squares += (value - y_mean) * (value - y_mean);
  const double y_variance = y_squares > 0 ? y_squares / static_cast<double>(n) : 1.0;

  KernelHyperparameters h(kernel, {}, 1.0, 0.1);
  const std::size_t count = default_lengthscale_count(kernel, d);
  const double scale = std::sqrt(static_cast<double>(d));
  if (count == d) {
    for (const double value : spread) h.lengthscales.push_back(scale * value);
  } else if (count == 1) {
    double mean_spread = 0.0;
    for (const double value : spread) mean_spread += value / static_cast<double>(d);
    h.lengthscales.push_back(scale * mean_spread);
  }
  h.signal_variance = y_variance;
  h.noise_variance = 0.1 * y_variance;

  const StartingPoint& given = options.start;
  if (!given.lengthscales.empty()) {
    GPSTREAM_CHECK(count > 0, "the {} kernel has no lengthscales to start from", kernel_type_name(kernel));
    GPSTREAM_CHECK(given.lengthscales.size() == count || given.lengthscales.size() == 1,
                   "the starting point has {} lengthscales; the {} kernel on {} inputs has {} (or give one for all)",
                   given.lengthscales.size(), kernel_type_name(kernel), d, count);
    h.lengthscales = given.lengthscales.size() == count ? given.lengthscales
                                                        : std::vector<double>(count, given.lengthscales.front());
  }
  if (given.signal_variance) h.signal_variance = *given.signal_variance;
  if (given.noise_variance) h.noise_variance = *given.noise_variance;
  set_family_parameters(h, given.family_parameters);
  const auto check_positive = [](double value, const char* what) {
    GPSTREAM_CHECK_ARGUMENT(std::isfinite(value) && value > 0, "the starting {} must be positive and finite, not {}",
                            what, value);
  };
  for (const double lengthscale : h.lengthscales) check_positive(lengthscale, "lengthscale");
  check_positive(h.signal_variance, "signal variance");
  check_positive(h.noise_variance, "noise variance");

  for (double& lengthscale : h.lengthscales)
    lengthscale = std::clamp(lengthscale, kLengthscaleBounds[0], kLengthscaleBounds[1]);
  h.signal_variance = std::clamp(h.signal_variance, kSignalBounds[0], kSignalBounds[1]);
  h.noise_variance = std::clamp(h.noise_variance, options.min_noise_variance, kNoiseUpperBound);
  return h;
}

}  // namespace

KernelTerm added_term_start(KernelType type, const KernelHyperparameters& first, std::size_t d) {
  KernelTerm term(type, {}, std::max(first.signal_variance / 3.0, kSignalBounds[0]));
  term.lengthscales.assign(default_lengthscale_count(type, d), 2.0 * std::sqrt(static_cast<double>(d)));
  return term;
}

LogParameterBounds log_parameter_bounds(const KernelHyperparameters& shape, std::size_t mean_terms,
                                        double min_noise_variance) {
  const std::vector<KernelParameter> layout = parameter_layout(shape);
  const std::size_t all = layout.size() + mean_terms;
  LogParameterBounds bounds{std::vector<double>(all, -kMeanBound), std::vector<double>(all, kMeanBound)};
  for (std::size_t k = 0; k < layout.size(); ++k) {
    double range[2] = {min_noise_variance, kNoiseUpperBound};
    switch (layout[k].kind) {
      case KernelParameterKind::lengthscale:
        std::copy_n(kLengthscaleBounds, 2, range);
        break;
      case KernelParameterKind::signal_variance:
        std::copy_n(kSignalBounds, 2, range);
        break;
      case KernelParameterKind::family: {
        const FamilyParameterSpec& spec = family_parameter_specs(shape.term(layout[k].term).type)[layout[k].index];
        range[0] = spec.lower;
        range[1] = spec.upper;
        break;
      }
      case KernelParameterKind::noise_variance:
        break;
    }
    bounds.lower[k] = std::log(range[0]);
    bounds.upper[k] = std::log(range[1]);
  }
  return bounds;
}

BoundedMinimum minimise_log_parameters(const LogParameterObjective& objective, std::vector<double> theta,
                                       double min_noise_variance, double tolerance, std::size_t max_evaluations,
                                       const Context* context) {
  GPSTREAM_CHECK(theta.size() >= 2, "a kernel needs at least 2 parameters (log s², log σ²), not {}", theta.size());
  KernelHyperparameters shape;  // a single kernel: all but the last two are lengthscales
  shape.lengthscales.assign(theta.size() - 2, 1.0);
  return minimise_log_parameters(objective, std::move(theta), shape, 0, min_noise_variance, tolerance, max_evaluations,
                                 context);
}

BoundedMinimum minimise_log_parameters(const LogParameterObjective& objective, std::vector<double> theta,
                                       const KernelHyperparameters& shape, std::size_t mean_terms,
                                       double min_noise_variance, double tolerance, std::size_t max_evaluations,
                                       const Context* context) {
  const std::size_t all = theta.size();
  const std::size_t kernel_parameters = log_parameters(shape).size();
  GPSTREAM_CHECK(all == kernel_parameters + mean_terms, "{} search parameters for a {} kernel of {} and {} mean terms",
                 all, kernel_name(shape), kernel_parameters, mean_terms);
  const auto [lower, upper] = log_parameter_bounds(shape, mean_terms, min_noise_variance);
  for (std::size_t j = 0; j < all; ++j) theta[j] = std::clamp(theta[j], lower[j], upper[j]);

  const Optimiser optimiser(nlopt_create(NLOPT_LD_LBFGS, static_cast<unsigned>(all)));
  GPSTREAM_CHECK(optimiser != nullptr, "NLopt could not create its L-BFGS optimiser");
  CallbackData callback;
  callback.objective = &objective;
  callback.context = context;
  callback.optimiser = optimiser.get();
  nlopt_set_min_objective(optimiser.get(), evaluate, &callback);
  nlopt_set_lower_bounds(optimiser.get(), lower.data());
  nlopt_set_upper_bounds(optimiser.get(), upper.data());
  nlopt_set_ftol_rel(optimiser.get(), tolerance);
  nlopt_set_xtol_abs1(optimiser.get(), tolerance);
  nlopt_set_maxeval(optimiser.get(), static_cast<int>(std::min<std::size_t>(max_evaluations, 1u << 30)));

  double value = 0.0;
  const nlopt_result result = nlopt_optimize(optimiser.get(), theta.data(), &value);
  if (callback.failure) std::rethrow_exception(callback.failure);
  GPSTREAM_CHECK(std::isfinite(callback.best_value), "the hyperparameter search {} (NLopt code {})",
                 describe_nlopt_result(result), static_cast<int>(result));
  std::string reason = describe_nlopt_result(result);
  if (result < 0 && result != NLOPT_ROUNDOFF_LIMITED) {
    reason = fmt::format("NLopt {} (code {}) after progress; the best point found is kept", reason,
                         static_cast<int>(result));
  }
  if (callback.rejected > 0) {
    reason += fmt::format("; {} trial points rejected (K̄ not positive definite or the objective not finite there)",
                          callback.rejected);
  }
  // NLopt returns its last iterate; after a rejected step or a failure that
  // need not be the best point evaluated.
  return {std::move(callback.best_theta), callback.best_value, callback.evaluations, reason};
}

namespace {

// One evaluation of a search, to the observers: its values, −log p and ‖gradient‖∞.
void report_evaluation(WorkProgress& progress, const KernelHyperparameters& h, double objective, double gradient_norm,
                       std::size_t evaluation, std::size_t start_number) {
  const std::vector<double> point = hyperparameter_values(h), signal = signal_variances(h);
  progress.step({.kind = ReportKind::likelihood_evaluation,
                 .iteration = evaluation,
                 .objective = objective,
                 .convergence_measure = gradient_norm,
                 .done = start_number,
                 .point = point,
                 .signal_variances = signal,
                 .noise_variance = h.noise_variance});
}

// β's start: `start_mean`, or zeros where it is empty.
std::vector<double> starting_mean(std::span<const double> start_mean, std::size_t mean_terms) {
  std::vector<double> initial_mean(start_mean.begin(), start_mean.end());
  if (initial_mean.empty()) initial_mean.assign(mean_terms, 0.0);
  GPSTREAM_CHECK(initial_mean.size() == mean_terms, "{} starting mean coefficients for {} basis functions",
                 initial_mean.size(), mean_terms);
  return initial_mean;
}

}  // namespace

SearchStart search_from(Context& context, Likelihood& likelihood, const KernelHyperparameters& start,
                        std::span<const double> start_mean, std::size_t start_number,
                        const HyperparameterSearchOptions& options, WorkProgress& progress) {
  const std::size_t mean_terms = likelihood.mean().basis_size();
  const std::vector<double> initial_mean = starting_mean(start_mean, mean_terms);
  std::size_t evaluations = 0;
  const LogParameterObjective objective = [&](std::span<const double> theta, std::span<double> gradient) {
    const std::span<const double> kernel_part = theta.first(theta.size() - mean_terms);
    const KernelHyperparameters h = with_log_parameters(start, kernel_part);
    const MarginalLikelihood value = likelihood.evaluate(h, theta.last(mean_terms));
    double gradient_norm = 0.0;
    for (const double component : value.gradient) gradient_norm = std::max(gradient_norm, std::abs(component));
    if (!std::isfinite(value.value) || !std::isfinite(gradient_norm)) {
      GPSTREAM_THROW(
          "the negative log marginal likelihood is not finite ({}) at signal variance {}, noise variance {}: check "
          "the training rows and targets for non-finite or huge values",
          value.value, h.signal_variance, h.noise_variance);
    }
    std::copy(value.gradient.begin(), value.gradient.end(), gradient.begin());
    report_evaluation(progress, h, value.value, gradient_norm, ++evaluations, start_number);
    return value.value;
  };
  std::vector<double> theta = log_parameters(start);
  theta.insert(theta.end(), initial_mean.begin(), initial_mean.end());
  const BoundedMinimum minimum =
      minimise_log_parameters(objective, std::move(theta), start, mean_terms, options.min_noise_variance,
                              options.tolerance, options.max_evaluations, &context);
  const std::span<const double> best(minimum.theta);
  return {start,
          with_log_parameters(start, best.first(best.size() - mean_terms)),
          initial_mean,
          std::vector<double>(best.end() - static_cast<std::ptrdiff_t>(mean_terms), best.end()),
          minimum.value,
          minimum.evaluations,
          minimum.stop_reason,
          false};
}

namespace {

// The Fisher information corrected along the last step s, with y the change of the gradient over it, by one
// BFGS update (B = I − I s sᵀ I / sᵀIs + y yᵀ / yᵀs, where yᵀs > 0): B s = y, the curvature the evaluations
// saw along s. Fisher scoring alone converges linearly, and zigzags, along a direction where the expected
// information underestimates the curvature (on a small spatial field it took 287 evaluations to L-BFGS's 24 at
// a tolerance of 1e-8): the update is made where a step turns back on the last one.
void correct_along_last_step(std::vector<double>& matrix, std::size_t all, std::span<const double> step,
                             std::span<const double> change) {
  std::vector<double> product(all, 0.0);  // I s
  double curvature = 0.0, observed = 0.0;
  for (std::size_t a = 0; a < all; ++a) {
    for (std::size_t b = 0; b < all; ++b) product[a] += matrix[a * all + b] * step[b];
    curvature += step[a] * product[a];
    observed += change[a] * step[a];
  }
  if (!(curvature > 0.0) || !(observed > 0.0)) return;
  for (std::size_t a = 0; a < all; ++a) {
    for (std::size_t b = 0; b < all; ++b) {
      matrix[a * all + b] += change[a] * change[b] / observed - product[a] * product[b] / curvature;
    }
  }
}

bool positive_definite(std::vector<double> matrix, std::size_t all) {
  return small_cholesky::factor_in_place(matrix.data(), all);
}

// The step's record: s = trial − θ and the gradient's change over it.
void record_step(std::span<const double> trial, std::span<const double> theta, std::span<const double> gradient_there,
                 std::span<const double> gradient_here, std::vector<double>& step, std::vector<double>& change) {
  step.resize(theta.size());
  change.resize(theta.size());
  for (std::size_t j = 0; j < theta.size(); ++j) {
    step[j] = trial[j] - theta[j];
    change[j] = gradient_there[j] - gradient_here[j];
  }
}

// A carried curvature corrected by BFGS along `step`, where the correction keeps it positive definite (in
// rounding too); `at` takes it as its information.
void correct_carried_curvature(std::vector<double>& curvature, std::span<const double> step,
                               std::span<const double> change, MarginalLikelihood& at) {
  std::vector<double> corrected = curvature;
  correct_along_last_step(corrected, step.size(), step, change);
  if (positive_definite(corrected, step.size())) curvature = std::move(corrected);
  at.information = curvature;
}

// A curvature model lifted on its diagonal, by the least power of 10 times its largest diagonal entry (from
// 1e-6: a model less well conditioned loses definiteness to rounding in its corrections) that makes it positive
// definite: a Hessian measured by differences is indefinite where the likelihood is flat or the point is not yet
// an optimum. A parameter whose curvature is below the lift is, in effect, held.
std::vector<double> lifted_to_positive_definite(std::vector<double> matrix, std::size_t all) {
  GPSTREAM_CHECK(matrix.size() == all * all, "a curvature of {} entries for {} parameters", matrix.size(), all);
  double scale = 0.0;
  for (std::size_t a = 0; a < all; ++a) scale = std::max(scale, std::abs(matrix[a * all + a]));
  GPSTREAM_CHECK(scale > 0.0 && std::isfinite(scale), "the curvature to search from is {} on its diagonal", scale);
  std::vector<double> factor(matrix.size());
  for (double lift = 1e-6 * scale;; lift *= 10.0) {
    GPSTREAM_CHECK(lift < 1e3 * scale, "the curvature to search from could not be made positive definite");
    factor = matrix;
    for (std::size_t a = 0; a < all; ++a) factor[a * all + a] += lift;
    if (small_cholesky::factor_in_place(factor.data(), all)) {
      for (std::size_t a = 0; a < all; ++a) matrix[a * all + a] += lift;
      return matrix;
    }
  }
}

// The scoring step s = −(B + λ·diag B)⁻¹ g on the parameters that are free, B the information `matrix`: a
// parameter on a bound whose gradient points out of the box is held (its s is 0). λ starts at 0 and grows ten-fold
// until the matrix factors (a parameter the likelihood does not depend on makes it singular). The step is capped
// (kLargestScoringStep); `model_decrease` gets what the whole step's quadratic model predicts, −½ gᵀs.
std::vector<double> scoring_step(const std::vector<double>& information, std::span<const double> gradient,
                                 std::span<const double> theta, const LogParameterBounds& bounds,
                                 double& model_decrease) {
  const std::size_t all = theta.size();
  std::vector<std::size_t> free;
  for (std::size_t j = 0; j < all; ++j) {
    const bool held =
        (theta[j] <= bounds.lower[j] && gradient[j] > 0) || (theta[j] >= bounds.upper[j] && gradient[j] < 0);
    if (!held) free.push_back(j);
  }
  const std::size_t k = free.size();
  std::vector<double> step(all, 0.0), matrix(k * k), solution(k);
  for (double damping = 0.0;; damping = damping == 0.0 ? 1e-8 : 10.0 * damping) {
    for (std::size_t a = 0; a < k; ++a) {
      for (std::size_t b = 0; b < k; ++b) matrix[a * k + b] = information[free[a] * all + free[b]];
      matrix[a * k + a] *= 1.0 + damping;
      matrix[a * k + a] += damping * 1e-12;  // a zero row (a parameter nothing depends on) factors too
    }
    if (small_cholesky::factor_in_place(matrix.data(), k)) break;
    GPSTREAM_CHECK(damping < 1e6, "the Fisher information is not positive definite, however damped");
  }
  for (std::size_t a = 0; a < k; ++a) solution[a] = -gradient[free[a]];
  small_cholesky::forward_solve(matrix.data(), k, solution.data());
  small_cholesky::backward_solve(matrix.data(), k, solution.data());
  model_decrease = 0.0;
  for (std::size_t a = 0; a < k; ++a) model_decrease -= 0.5 * gradient[free[a]] * solution[a];
  // At most a factor e² in any value a step: the information is a local model.
  double largest = 0.0;
  for (const double value : solution) largest = std::max(largest, std::abs(value));
  const double scale = largest > kLargestScoringStep ? kLargestScoringStep / largest : 1.0;
  for (std::size_t a = 0; a < k; ++a) step[free[a]] = scale * solution[a];
  return step;
}

// The scoring step from `at`, corrected along the last accepted step where it turns back on it (a zigzag: the
// information underestimating the curvature there); `model_decrease` gets the larger of the two models'
// predicted decreases, which racing grants.
std::vector<double> scoring_direction(const MarginalLikelihood& at, std::span<const double> theta,
                                      const LogParameterBounds& bounds, std::span<const double> last_step,
                                      std::span<const double> gradient_change, double& model_decrease) {
  std::vector<double> step = scoring_step(at.information, at.gradient, theta, bounds, model_decrease);
  double turn = 0.0;  // < 0: the step turns back on the last one
  for (std::size_t j = 0; j < last_step.size(); ++j) turn += step[j] * last_step[j];
  if (turn < 0.0) {
    std::vector<double> matrix = at.information;
    correct_along_last_step(matrix, theta.size(), last_step, gradient_change);
    double corrected_decrease = 0.0;
    step = scoring_step(matrix, at.gradient, theta, bounds, corrected_decrease);
    model_decrease = std::max(model_decrease, corrected_decrease);
  }
  return step;
}

}  // namespace

SearchStart fisher_scoring_from(Context& context, Likelihood& likelihood, const KernelHyperparameters& start,
                                std::span<const double> start_mean, std::size_t start_number,
                                const HyperparameterSearchOptions& options, WorkProgress& progress) {
  // Carried: the given curvature model, corrected along each accepted step, stands for the information.
  std::vector<double> curvature = options.curvature;
  const bool carried = !curvature.empty();
  GPSTREAM_CHECK(carried || likelihood.has_information(),
                 "Fisher scoring needs a likelihood that gives its information, or a curvature to start from");
  const std::size_t mean_terms = likelihood.mean().basis_size();
  const std::vector<double> initial_mean = starting_mean(start_mean, mean_terms);
  const LogParameterBounds bounds = log_parameter_bounds(start, mean_terms, options.min_noise_variance);
  std::vector<double> theta = log_parameters(start);
  theta.insert(theta.end(), initial_mean.begin(), initial_mean.end());
  for (std::size_t j = 0; j < theta.size(); ++j) theta[j] = std::clamp(theta[j], bounds.lower[j], bounds.upper[j]);
  if (carried) curvature = lifted_to_positive_definite(std::move(curvature), theta.size());
  std::size_t evaluations = 0;
  const auto kernel_at = [&](std::span<const double> point) {
    return with_log_parameters(start, point.first(point.size() - mean_terms));
  };
  const auto evaluate = [&](std::span<const double> point) {
    if (context.stop_requested()) throw Cancelled("hyperparameter search stopped");
    const KernelHyperparameters h = kernel_at(point);
    MarginalLikelihood value = carried ? likelihood.evaluate(h, point.last(mean_terms))
                                       : likelihood.evaluate_with_information(h, point.last(mean_terms));
    if (carried) value.information = curvature;
    double gradient_norm = 0.0;
    for (const double component : value.gradient) gradient_norm = std::max(gradient_norm, std::abs(component));
    report_evaluation(progress, h, value.value, gradient_norm, ++evaluations, start_number);
    return value;
  };
  MarginalLikelihood at = evaluate(theta);
  GPSTREAM_CHECK(std::isfinite(at.value),
                 "the negative log marginal likelihood is not finite ({}) at the start of "
                 "the search: check the training rows and targets for non-finite or huge values",
                 at.value);
  std::string reason = "evaluation limit reached";
  std::size_t rejected = 0;
  std::vector<double> last_step, gradient_change;  // over the last accepted step
  bool gave_up = false;
  while (evaluations < options.max_evaluations) {
    double model_decrease = 0.0;
    const std::vector<double> step = scoring_direction(at, theta, bounds, last_step, gradient_change, model_decrease);
    if (at.value - kRaceMargin * model_decrease > options.give_up_above) {
      reason = fmt::format(
          "stopped: {:.2f} less {:g} times the {:.3g} its model predicts would still not reach "
          "{:.2f}, where it would catch the best candidate",
          at.value, kRaceMargin, model_decrease, options.give_up_above);
      gave_up = true;
      break;
    }
    double slope = 0.0;  // gᵀs < 0: the decrease the quadratic model predicts is −½ gᵀs
    for (std::size_t j = 0; j < theta.size(); ++j) slope += at.gradient[j] * step[j];
    if (-0.5 * slope <= std::max(options.tolerance * std::max(1.0, std::abs(at.value)), options.least_decrease)) {
      reason = "the decrease a step predicts is below the tolerance";
      break;
    }
    // Halve until the objective falls by at least 1e-4 of what the step's slope promises (Armijo).
    bool accepted = false;
    for (double fraction = 1.0; fraction >= 1.0 / 64 && evaluations < options.max_evaluations; fraction /= 2) {
      std::vector<double> trial(theta.size());
      for (std::size_t j = 0; j < theta.size(); ++j) {
        trial[j] = std::clamp(theta[j] + fraction * step[j], bounds.lower[j], bounds.upper[j]);
      }
      MarginalLikelihood value;
      try {
        value = evaluate(trial);
      } catch (const Cancelled&) {
        throw;
      } catch (const Error&) {  // K̄ not positive definite at the trial point: a shorter step
        ++rejected;
        continue;
      }
      if (std::isfinite(value.value) && value.value <= at.value + 1e-4 * fraction * slope) {
        record_step(trial, theta, value.gradient, at.gradient, last_step, gradient_change);
        theta = std::move(trial);
        at = std::move(value);
        if (carried) correct_carried_curvature(curvature, last_step, gradient_change, at);
        accepted = true;
        break;
      }
    }
    if (!accepted) {
      reason =
          "no step along the scoring direction lowers the objective (the optimum is as good as the "
          "evaluations resolve)";
      break;
    }
  }
  if (rejected > 0) reason += fmt::format("; {} trial points rejected (K̄ not positive definite there)", rejected);
  const std::span<const double> best(theta);
  return {start,
          kernel_at(best),
          initial_mean,
          std::vector<double>(best.end() - static_cast<std::ptrdiff_t>(mean_terms), best.end()),
          at.value,
          evaluations,
          reason,
          gave_up,
          carried ? std::move(curvature) : std::vector<double>{}};
}

HyperparameterSearchResult learn_hyperparameters(Context& context, const double* x, std::span<const double> y,
                                                 std::size_t d, const HyperparameterSearchOptions& options) {
  GPSTREAM_CHECK(y.size() >= 2, "hyperparameter learning needs at least 2 rows, not {}", y.size());
  GPSTREAM_CHECK_ARGUMENT(options.tolerance > 0.0, "the hyperparameter tolerance must be positive, not {}",
                          options.tolerance);
  GPSTREAM_CHECK(options.min_noise_variance > 0.0 && options.min_noise_variance < kNoiseUpperBound,
                 "the minimum noise variance must lie in (0, {}), not {}", kNoiseUpperBound,
                 options.min_noise_variance);
  std::mt19937_64 random(options.seed);
  auto log_uniform = [&](const double(&range)[2]) {
    return std::exp(std::uniform_real_distribution<double>(std::log(range[0]), std::log(range[1]))(random));
  };

  // One O(n³) factorisation after another: BLAS may use every thread of the context.
  const ScopedBlasThreads blas_threads = context.parallel_blas();
  WorkProgress progress(context, options.restarts + 1);
  HyperparameterSearchResult result;
  KernelHyperparameters informed = options.initial ? *options.initial : first_start(options.kernel, x, y, d, options);
  if (!options.initial) {
    // Further terms start as a smooth trend beside the first: the same long lengthscale on every input (the
    // data shorten those it varies with), a third of the first term's variance.
    std::vector<KernelTerm> terms = {informed};
    for (const KernelType type : options.further_terms) terms.push_back(added_term_start(type, informed, d));
    informed = KernelHyperparameters::of_terms(terms, informed.noise_variance);
  }
  ExactLikelihood exact(x, y, d, options.mean);
  std::optional<JournaledLikelihood> journaled;
  if (options.journal != nullptr) journaled.emplace(exact, *options.journal);
  Likelihood& likelihood = journaled ? static_cast<Likelihood&>(*journaled) : exact;
  for (std::size_t start = 0; start <= options.restarts; ++start) {
    // Restarts: the informed start scaled by log-uniform factors (bounds clamp them in the search).
    KernelHyperparameters initial = informed;
    if (start > 0) {
      for (std::size_t t = 0; t < initial.term_count(); ++t) {
        KernelTerm& term = initial.term(t);
        for (double& lengthscale : term.lengthscales) lengthscale *= log_uniform(kRestartLengthscale);
        term.signal_variance *= log_uniform(kRestartSignal);
      }
      initial.noise_variance =
          std::max(informed.noise_variance * 10.0 * log_uniform(kRestartNoise), options.min_noise_variance);
    }
    result.starts.push_back(
        options.curvature.empty()
            ? search_from(context, likelihood, initial, options.mean.coefficients, start, options, progress)
            : fisher_scoring_from(context, likelihood, initial, options.mean.coefficients, start, options, progress));
    if (start == 0 || result.starts.back().objective < result.objective) {
      result.objective = result.starts.back().objective;
      result.hyperparameters = result.starts.back().optimum;
      result.mean_coefficients = result.starts.back().optimum_mean;
      result.curvature = result.starts.back().curvature;
      result.best_start = start;
    }
    if (start == 0 && options.restarts > 0) {
      const double parameters =
          static_cast<double>(log_parameters(result.hyperparameters).size() + result.mean_coefficients.size());
      const double criterion = result.objective + 0.5 * parameters * std::log(static_cast<double>(y.size()));
      if (criterion > options.skip_restarts_above + kRestartMargin) {
        result.restarts_skipped = options.restarts;
        break;
      }
    }
  }
  return result;
}

std::vector<std::string> values_on_bounds(const KernelHyperparameters& hyperparameters, double min_noise_variance) {
  // θ is searched in logs: "on a bound" is within 1e-6 of it, relatively.
  const auto on = [](double value, double bound) { return std::abs(value - bound) <= 1e-6 * bound; };
  std::vector<std::string> notes;
  std::vector<std::size_t> long_inputs;
  for (std::size_t l = 0; l < hyperparameters.lengthscales.size(); ++l) {
    const double lengthscale = hyperparameters.lengthscales[l];
    if (on(lengthscale, kLengthscaleBounds[1])) long_inputs.push_back(l + 1);
    if (on(lengthscale, kLengthscaleBounds[0])) {
      notes.push_back(
          fmt::format("lengthscale {} is on its lower bound {:g}: input {} varies faster than the data can "
                      "show (or holds noise); check that input",
                      l + 1, kLengthscaleBounds[0], l + 1));
    }
  }
  if (!long_inputs.empty()) {
    notes.push_back(
        fmt::format("lengthscales of inputs {} are on their upper bound {:g}: those inputs are irrelevant to "
                    "the target (harmless: they no longer affect the kernel)",
                    fmt::join(long_inputs, ", "), kLengthscaleBounds[1]));
  }
  if (on(hyperparameters.signal_variance, kSignalBounds[1])) {
    notes.push_back(
        fmt::format("the signal variance is on its upper bound {:g}: usually harmless — with long "
                    "lengthscales s² and ℓ trade off (a nearly linear trend), and predictions hardly change",
                    kSignalBounds[1]));
  }
  if (on(hyperparameters.signal_variance, kSignalBounds[0])) {
    notes.push_back(
        fmt::format("the signal variance is on its lower bound {:g}: the inputs explain almost none of the "
                    "target's variance",
                    kSignalBounds[0]));
  }
  if (on(hyperparameters.noise_variance, min_noise_variance)) {
    notes.push_back(
        fmt::format("the noise variance is on its lower bound {:g}, the minimum noise variance: the data are "
                    "(nearly) noise-free; a lower minimum may fit better but makes K̄ worse conditioned",
                    min_noise_variance));
  }
  if (on(hyperparameters.noise_variance, kNoiseUpperBound)) {
    notes.push_back(
        fmt::format("the noise variance is on its upper bound {:g}: the kernel explains nothing; check the "
                    "inputs and the kernel",
                    kNoiseUpperBound));
  }
  return notes;
}

std::vector<std::string> values_at_start(const SearchStart& start) {
  const auto same = [](double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(std::abs(a), std::abs(b)); };
  const std::vector<double> initial = hyperparameter_values(start.initial);
  const std::vector<double> optimum = hyperparameter_values(start.optimum);
  std::vector<std::size_t> unmoved;
  for (std::size_t j = 0; j < initial.size(); ++j)
    if (same(initial[j], optimum[j])) unmoved.push_back(j);
  if (unmoved.empty()) return {};
  if (unmoved.size() == initial.size()) {
    return {
        fmt::format("the answer equals the start: no value moved from it ({}). The likelihood is flat there or "
                    "the start is already its optimum; try another start or more "
                    "restarts",
                    start.stop_reason)};
  }
  std::vector<std::size_t> inputs;
  for (const std::size_t j : unmoved)
    if (j < start.initial.lengthscales.size()) inputs.push_back(j + 1);
  if (inputs.empty()) return {};
  return {
      fmt::format("the lengthscales of inputs {} ended where they started: the likelihood does not change with "
                  "them there (irrelevant inputs, or a start where they have no effect)",
                  fmt::join(inputs, ", "))};
}

}  // namespace gpstream

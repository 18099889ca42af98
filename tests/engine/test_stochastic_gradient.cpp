// The all-rows gradient's stochastic estimate (hyper/stochastic_gradient.h)
// against the exact gradient, and the refinement built on it
// (hyper/stochastic_refinement.h) against the exact optimum over all rows.
#include "engine/core/progress.h"
#include "engine/hyper/marginal_likelihood.h"
#include "engine/hyper/stochastic_refinement.h"
#include "engine/hyper/subset_learning.h"
#include "tests/engine/problems.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace gpstream;
using namespace gpstream::testing;

namespace {

const KernelHyperparameters kGenerating = {KernelType::squared_exponential_ard, {0.8, 1.1}, 1.0, 0.05};

// Errors of the estimates against the exact gradient over `seeds` probe seeds: their mean and spread per component.
struct ErrorSummary {
  std::vector<double> mean, spread;
  double root_mean_square = 0.0;
};
ErrorSummary estimate_errors(const Problem& p, const KernelHyperparameters& at, StochasticGradientOptions options,
                             std::size_t seeds) {
  const std::vector<double> exact = ExactLikelihood(p.x.data(), p.y, p.d).evaluate(at, {}).gradient;
  const std::size_t parameters = exact.size();
  ErrorSummary summary{std::vector<double>(parameters, 0.0), std::vector<double>(parameters, 0.0)};
  std::vector<std::vector<double>> errors;
  InMemoryRowSource rows = p.source();
  for (std::size_t seed = 1; seed <= seeds; ++seed) {
    options.seed = seed;
    Context context;
    StochasticGradient estimator(context, rows, RowPartition::whole(p.rows()), options);
    const GradientEstimate estimate = estimator.estimate(at);
    REQUIRE(estimate.largest_residual <= options.tolerance);
    std::vector<double> error(parameters);
    for (std::size_t k = 0; k < parameters; ++k) error[k] = estimate.gradient[k] - exact[k];
    errors.push_back(error);
  }
  for (const auto& error : errors) {
    for (std::size_t k = 0; k < parameters; ++k) {
      summary.mean[k] += error[k] / static_cast<double>(seeds);
      summary.root_mean_square += error[k] * error[k] / static_cast<double>(seeds);
    }
  }
  for (const auto& error : errors)
    for (std::size_t k = 0; k < parameters; ++k)
      summary.spread[k] += std::pow(error[k] - summary.mean[k], 2) / static_cast<double>(seeds - 1);
  for (double& value : summary.spread) value = std::sqrt(value);
  summary.root_mean_square = std::sqrt(summary.root_mean_square);
  return summary;
}

}  // namespace

TEST_CASE("the all-rows gradient estimate is unbiased, and its error falls with more probes, for both kinds of probe") {
  const Problem p = draw_from_gp(kGenerating, 400, 5);
  // Away from the optimum, so that the gradient is not zero: longer lengthscales, more noise.
  const KernelHyperparameters at = {KernelType::squared_exponential_ard, {1.2, 1.5}, 0.8, 0.1};
  for (const auto kind : {StochasticGradientOptions::Probes::rademacher, StochasticGradientOptions::Probes::pathwise}) {
    CAPTURE(kind == StochasticGradientOptions::Probes::pathwise);
    StochasticGradientOptions options;
    options.probe_kind = kind;
    options.tolerance = 1e-9;  // solves to rounding: what is left is the probes' error
    options.probes = 8;
    const ErrorSummary few = estimate_errors(p, at, options, 8);
    options.probes = 64;
    const ErrorSummary many = estimate_errors(p, at, options, 8);
    CAPTURE(few.root_mean_square);
    CAPTURE(many.root_mean_square);
    // 8× the probes: 0.35 of the error, expected; at most 0.6 of it asserted.
    CHECK(many.root_mean_square < 0.6 * few.root_mean_square);
    for (std::size_t k = 0; k < many.mean.size(); ++k) {
      CAPTURE(k);
      // Unbiased: the mean error over 8 seeds within 5 of its standard errors (a bias, a factor ½ lost in the
      // trace term, is tens of them).
      CHECK(std::abs(many.mean[k]) <= 5.0 * many.spread[k] / std::sqrt(8.0) + 1e-9);
    }
  }
}

namespace {

// z² = error² / estimated variance, averaged over the components and `seeds` probe seeds: 1 when the
// estimate's covariance is calibrated (with 7 degrees of freedom in each variance, its mean is 7/5).
double mean_z_squared(const Problem& p, const KernelHyperparameters& at, StochasticGradientOptions options,
                      std::size_t seeds) {
  const std::vector<double> exact = ExactLikelihood(p.x.data(), p.y, p.d).evaluate(at, {}).gradient;
  InMemoryRowSource rows = p.source();
  double z_squared = 0.0;
  std::size_t count = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    options.seed = seed;
    Context context;
    StochasticGradient estimator(context, rows, RowPartition::whole(p.rows()), options);
    const GradientEstimate estimate = estimator.estimate(at);
    const std::size_t parameters = exact.size();
    for (std::size_t k = 0; k < parameters; ++k) {
      z_squared += std::pow(estimate.gradient[k] - exact[k], 2) / estimate.covariance[k * parameters + k];
      ++count;
    }
  }
  return z_squared / static_cast<double>(count);
}

}  // namespace

TEST_CASE("the estimate's error covariance from its probe groups is of the size of its actual error") {
  const Problem p = draw_from_gp(kGenerating, 400, 5);
  const KernelHyperparameters at = {KernelType::squared_exponential_ard, {1.2, 1.5}, 0.8, 0.1};
  StochasticGradientOptions options;
  options.tolerance = 1e-9;  // solves to rounding
  const double z_squared = mean_z_squared(p, at, options, 6);
  CAPTURE(z_squared);
  CHECK(z_squared > 0.2);
  CHECK(z_squared < 12.0);
}

TEST_CASE("at the default tolerances the error is still the probes' alone: α's solve, 100× tighter, adds no bias") {
  // Little noise and small active sets: solves of many iterations, whose error at a relative residual of 1e-2
  // would, in α, bias every component (the data term −½αᵀ(∂K̄/∂θ)α is first order in it). The same probes
  // (seeds) in all three, so that only the solves' errors differ.
  const Problem p = draw_from_gp({KernelType::squared_exponential_ard, {0.6, 0.9}, 1.0, 0.01}, 600, 9);
  const KernelHyperparameters at = {KernelType::squared_exponential_ard, {0.7, 1.0}, 1.0, 0.002};
  StochasticGradientOptions options;
  options.active_set_size = 40;
  REQUIRE(options.tolerance == 1e-2);
  REQUIRE(options.alpha_tolerance == 1e-4);
  const double calibrated = mean_z_squared(p, at, options, 6);
  options.alpha_tolerance = options.tolerance;
  const double loose = mean_z_squared(p, at, options, 6);
  options.tolerance = options.alpha_tolerance = 1e-9;
  const double to_rounding = mean_z_squared(p, at, options, 6);
  CAPTURE(calibrated);
  CAPTURE(loose);
  CAPTURE(to_rounding);
  CHECK(calibrated < 12.0);
  CHECK(calibrated < 1.2 * to_rounding);  // measured: 1.44 against 1.36
  CHECK(loose > 2.0 * to_rounding);       // measured: 4.09
}

TEST_CASE("warm-started estimates equal cold ones to the solves' tolerance, and converge in fewer iterations") {
  const Problem p = draw_from_gp(kGenerating, 500, 7);
  InMemoryRowSource rows = p.source();
  StochasticGradientOptions options;
  options.tolerance = 1e-8;
  options.active_set_size = 40;  // many iterations a solve, as with n ≫ m
  const KernelHyperparameters first = {KernelType::squared_exponential_ard, {0.9, 1.2}, 1.0, 0.06};
  const KernelHyperparameters second = {KernelType::squared_exponential_ard, {0.85, 1.15}, 1.0, 0.055};
  Context context;
  StochasticGradient warm(context, rows, RowPartition::whole(p.rows()), options);
  warm.estimate(first);
  const GradientEstimate from_warm = warm.estimate(second);
  StochasticGradient cold(context, rows, RowPartition::whole(p.rows()), options);
  const GradientEstimate from_cold = cold.estimate(second);
  CHECK(from_warm.iterations < from_cold.iterations);
  for (std::size_t k = 0; k < from_cold.gradient.size(); ++k)
    CHECK(from_warm.gradient[k] == doctest::Approx(from_cold.gradient[k]).epsilon(1e-5).scale(1.0));
}

namespace {

// `start` refined on all of p's rows by at most `steps` estimates of `probes` probes whose solves run to
// rounding, with the curvature of `curvature_rows` random rows.
StochasticRefinement refine_solved_to_rounding(const Problem& p, const KernelHyperparameters& start, std::size_t probes,
                                               std::size_t steps, std::size_t curvature_rows) {
  InMemoryRowSource rows = p.source();
  const RowPartition whole = RowPartition::whole(p.rows());
  Context context({.seed = 4});
  StochasticRefinementOptions options;
  options.gradient.probes = probes;
  options.gradient.tolerance = 1e-6;
  options.max_steps = steps;
  const std::vector<double> hessian = subset_hessian(context, rows, whole, start, curvature_rows);
  return refine_by_stochastic_gradient(context, rows, whole, start, hessian, options);
}

}  // namespace

TEST_CASE("the all-rows refinement moves a subset's optimum to the exact optimum over all rows") {
  const Problem p = draw_from_gp(kGenerating, 600, 11);
  InMemoryRowSource rows = p.source();
  SubsetLearningOptions subset;
  subset.restarts = 0;
  subset.subset = 150;
  Context context({.seed = 4});
  const KernelHyperparameters start =
      learn_on_subset(context, rows, KernelType::squared_exponential_ard, subset).search.hyperparameters;
  subset.subset = p.rows();
  const KernelHyperparameters optimum =
      learn_on_subset(context, rows, KernelType::squared_exponential_ard, subset).search.hyperparameters;

  const StochasticRefinement refined = refine_solved_to_rounding(p, start, 32, 8, 150);
  const std::vector<double> from = log_parameters(start), to = log_parameters(refined.hyperparameters),
                            target = log_parameters(optimum);
  double before = 0.0, after = 0.0;
  for (std::size_t k = 0; k < target.size(); ++k) {
    CAPTURE(k);
    before += std::pow(from[k] - target[k], 2);
    after += std::pow(to[k] - target[k], 2);
    // Within its own error bars (4 standard errors) of the exact optimum.
    CHECK(std::abs(to[k] - target[k]) <= 4.0 * refined.standard_errors[k] + 0.02);
  }
  CAPTURE(refined.stop_reason);
  CAPTURE(refined.estimates);

  CHECK(std::sqrt(after) < 0.35 * std::sqrt(before));
  CHECK(refined.estimates <= 8);
  CHECK(refined.held == 0);
}

TEST_CASE("a lengthscale the likelihood does not depend on (on its upper bound) is held, the others refined") {
  // The third input does not enter the GP that drew y; the start puts its lengthscale on the search's bound.
  const Problem p = draw_from_gp({KernelType::squared_exponential_ard, {0.8, 1.1, 1e5}, 1.0, 0.05}, 500, 11);
  const KernelHyperparameters start = {KernelType::squared_exponential_ard, {1.2, 0.8, 1e5}, 0.7, 0.1};
  const StochasticRefinement refined = refine_solved_to_rounding(p, start, 16, 4, 200);
  CHECK(refined.held == 1);
  CHECK(refined.standard_errors[2] == 0.0);
  CHECK(refined.hyperparameters.lengthscales[2] == doctest::Approx(start.lengthscales[2]).epsilon(1e-12));
  // The others moved towards the data's values (each a factor 1.4–1.5 off at the start).
  CHECK(std::abs(std::log(refined.hyperparameters.lengthscales[0] / 0.8)) < std::abs(std::log(1.2 / 0.8)));
  CHECK(std::abs(std::log(refined.hyperparameters.lengthscales[1] / 1.1)) < std::abs(std::log(0.8 / 1.1)));
}

TEST_CASE("an all-rows refinement resumed from its journal ends where the uninterrupted one does, bit for bit") {
  const Problem p = draw_from_gp(kGenerating, 500, 13);
  InMemoryRowSource rows = p.source();
  const RowPartition whole = RowPartition::whole(p.rows());
  const KernelHyperparameters start = {KernelType::squared_exponential_ard, {1.0, 1.4}, 0.9, 0.08};
  StochasticRefinementOptions options;
  options.gradient.probes = 8;
  options.gradient.tolerance = 1e-3;
  options.max_steps = 5;
  options.significance = 0.0;  // every step taken: the run ends at the step limit

  Context whole_context;
  SearchJournal uninterrupted_journal;
  const std::vector<double> hessian = subset_hessian(whole_context, rows, whole, start, 200, &uninterrupted_journal);
  const StochasticRefinement uninterrupted =
      refine_by_stochastic_gradient(whole_context, rows, whole, start, hessian, options, &uninterrupted_journal);
  REQUIRE(uninterrupted.estimates == 5);

  // Stopped during the third estimate's solves (as Ctrl-C would), then resumed from what was recorded.
  class StopInThirdEstimate final : public RunObserver {
   public:
    explicit StopInThirdEstimate(StopFlag& flag) : flag_(flag) {}
    void on_iteration(const IterationReport& report) override {
      if (report.done == 3 && report.inner_iteration > 0) flag_.request();
    }

   private:
    StopFlag& flag_;
  };
  StopFlag stop;
  StopInThirdEstimate observer(stop);
  Context interrupted_context;
  interrupted_context.set_stop_flag(&stop);
  SearchJournal partial;
  {
    const Context::ObserverScope observe(interrupted_context, {&observer});
    const std::vector<double> curvature = subset_hessian(interrupted_context, rows, whole, start, 200, &partial);
    CHECK_THROWS_AS(
        refine_by_stochastic_gradient(interrupted_context, rows, whole, start, curvature, options, &partial),
        Cancelled);
  }
  REQUIRE(partial.entries().size() < uninterrupted_journal.entries().size());
  REQUIRE(!partial.warm_start.empty());

  Context resumed_context;
  SearchJournal replay(partial.entries(), partial.warm_start);
  const std::vector<double> curvature = subset_hessian(resumed_context, rows, whole, start, 200, &replay);
  const StochasticRefinement resumed =
      refine_by_stochastic_gradient(resumed_context, rows, whole, start, curvature, options, &replay);
  CHECK(log_parameters(resumed.hyperparameters) == log_parameters(uninterrupted.hyperparameters));
  CHECK(resumed.standard_errors == uninterrupted.standard_errors);
  CHECK(replay.entries().size() == uninterrupted_journal.entries().size());
  // Without the warm start the resumed solves start elsewhere, and the bits differ.
  Context cold_context;
  SearchJournal cold(partial.entries());
  const std::vector<double> cold_curvature = subset_hessian(cold_context, rows, whole, start, 200, &cold);
  const StochasticRefinement restarted =
      refine_by_stochastic_gradient(cold_context, rows, whole, start, cold_curvature, options, &cold);
  CHECK(log_parameters(restarted.hyperparameters) != log_parameters(uninterrupted.hyperparameters));
}

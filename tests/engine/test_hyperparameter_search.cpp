#include "engine/core/error.h"
#include "engine/hyper/hyperparameter_search.h"
#include "engine/hyper/marginal_likelihood.h"
#include "problems.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace gpstream;
using namespace gpstream::testing;

namespace {

// Tests without a budget, threads or observers of their own share this one.
Context default_context;

struct GridPoint {
  double objective = std::numeric_limits<double>::infinity();
  std::vector<double> theta;
};

// The minimum of the objective over a regular grid of `points`³ log-values
// centred on `centre` with half-width `radius` (isotropic SE: log ℓ, log s², log σ²).
GridPoint grid_minimum(const Problem& p, const std::vector<double>& centre, double radius, int points) {
  GridPoint best;
  const double step = 2.0 * radius / (points - 1);
  for (int a = 0; a < points; ++a)
    for (int b = 0; b < points; ++b)
      for (int c = 0; c < points; ++c) {
        const std::vector<double> theta = {centre[0] - radius + a * step, centre[1] - radius + b * step,
                                           centre[2] - radius + c * step};
        const double value = negative_log_marginal_likelihood(
                                 from_log_parameters(KernelType::squared_exponential, theta), p.x.data(), p.y, p.d)
                                 .value;
        if (value < best.objective) best = {value, theta};
      }
  return best;
}

// Each of the `columns` columns of the n×columns row-major `values` to zero mean and unit variance.
void standardise_columns(std::vector<double>& values, std::size_t n, std::size_t columns) {
  for (std::size_t j = 0; j < columns; ++j) {
    double mean = 0.0, squares = 0.0;
    for (std::size_t i = 0; i < n; ++i) mean += values[i * columns + j] / static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) squares += (values[i * columns + j] - mean) * (values[i * columns + j] - mean);
    const double scale = std::sqrt(squares / static_cast<double>(n));
    for (std::size_t i = 0; i < n; ++i) values[i * columns + j] = (values[i * columns + j] - mean) / scale;
  }
}

}  // namespace

TEST_CASE("the learned hyperparameters are the minimum a dense grid search finds") {
  const Problem p = make_problem(50, 1, 41);
  HyperparameterSearchOptions options;
  options.kernel = KernelType::squared_exponential;
  options.tolerance = 1e-10;
  const HyperparameterSearchResult learned = learn_hyperparameters(default_context, p.x.data(), p.y, p.d, options);

  // A coarse grid over ℓ, s², σ² ∈ [e⁻⁶, e⁶], then a fine one around its best point.
  const GridPoint coarse = grid_minimum(p, {0.0, 0.0, 0.0}, 6.0, 25);
  const double coarse_step = 12.0 / 24;
  const GridPoint fine = grid_minimum(p, coarse.theta, coarse_step, 25);
  const double fine_step = 2.0 * coarse_step / 24;

  // The optimiser may only beat the grid, and by little; and it lands in the grid's cell.
  CHECK(learned.objective <= fine.objective + 1e-9);
  CHECK(learned.objective >= fine.objective - 1e-2);
  const std::vector<double> theta = log_parameters(learned.hyperparameters);
  for (std::size_t j = 0; j < 3; ++j) {
    CAPTURE(j);
    CHECK(std::abs(theta[j] - fine.theta[j]) <= 2.0 * fine_step);
  }
  // The gradient vanishes at the optimum (it lies inside the bounds here).
  const MarginalLikelihood at_optimum = negative_log_marginal_likelihood(learned.hyperparameters, p.x.data(), p.y, p.d);
  for (const double component : at_optimum.gradient) CHECK(std::abs(component) < 1e-3);
}

TEST_CASE("restarts report every start and keep the best optimum") {
  const Problem p = make_problem(60, 2, 42);
  HyperparameterSearchOptions options;
  options.restarts = 3;
  options.seed = 7;
  struct Counter final : RunObserver {
    void on_iteration(const IterationReport&) override { ++evaluations; }
    std::size_t evaluations = 0;
  } counter;
  Context context;
  const Context::ObserverScope observe(context, {&counter});
  const HyperparameterSearchResult learned = learn_hyperparameters(context, p.x.data(), p.y, p.d, options);
  REQUIRE(learned.starts.size() == 4);
  std::size_t reported = 0;
  for (const SearchStart& start : learned.starts) {
    CHECK(learned.objective <= start.objective);
    reported += start.evaluations;
  }
  CHECK(reported == counter.evaluations);
  CHECK(learned.objective == learned.starts[learned.best_start].objective);
  // Random starts differ from the fixed one and from each other.
  CHECK(learned.starts[1].initial.signal_variance != learned.starts[2].initial.signal_variance);
  CHECK(learned.hyperparameters.lengthscales.size() == 2);
}

TEST_CASE("the noise variance stays at or above its lower bound") {
  // Noise-free targets pull σ² towards 0.
  Problem p = make_problem(40, 1, 43);
  for (std::size_t i = 0; i < p.rows(); ++i) p.y[i] = std::sin(p.x[i]);
  HyperparameterSearchOptions options;
  options.min_noise_variance = 1e-3;
  const HyperparameterSearchResult learned = learn_hyperparameters(default_context, p.x.data(), p.y, p.d, options);
  CHECK(learned.hyperparameters.noise_variance >= 1e-3 * (1.0 - 1e-12));
  CHECK(learned.hyperparameters.noise_variance <= 1.1e-3);
}

TEST_CASE("a non-finite objective stops the search with a clear error") {
  Problem p = make_problem(30, 2, 44);
  p.y[5] = std::numeric_limits<double>::quiet_NaN();
  try {
    learn_hyperparameters(default_context, p.x.data(), p.y, p.d, {});
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK(std::string(error.what()).find("not finite") != std::string::npos);
  }
  CHECK_THROWS_AS(learn_hyperparameters(default_context, p.x.data(), std::span(p.y).first(1), p.d, {}), Error);
}

TEST_CASE("a stop request cancels the search") {
  const Problem p = make_problem(30, 2, 45);
  StopFlag stop;
  stop.request();
  Context context;
  context.set_stop_flag(&stop);
  CHECK_THROWS_AS(learn_hyperparameters(context, p.x.data(), p.y, p.d, {}), Cancelled);
}

TEST_CASE("ARD lengthscales find the 2 relevant inputs among 32 (the data-informed start moves every lengthscale)") {
  // y = sin(6 x1) + 4 (x2 − ½)² + noise, x ~ U[0, 1]^32, standardised as train does.
  constexpr std::size_t n = 500, d = 32;
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> noise(0.0, 0.1);
  std::vector<double> x(n * d), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t l = 0; l < d; ++l) x[i * d + l] = uniform(random);
    y[i] = std::sin(6.0 * x[i * d]) + 4.0 * (x[i * d + 1] - 0.5) * (x[i * d + 1] - 0.5) + noise(random);
  }
  standardise_columns(x, n, d);
  standardise_columns(y, n, 1);
  HyperparameterSearchOptions options;
  options.restarts = 0;
  const HyperparameterSearchResult result = learn_hyperparameters(default_context, x.data(), y, d, options);
  const std::vector<double>& lengthscales = result.hyperparameters.lengthscales;
  CAPTURE(lengthscales);
  CHECK(lengthscales[0] < 5.0);
  CHECK(lengthscales[1] < 10.0);
  for (std::size_t l = 2; l < d; ++l) CHECK(lengthscales[l] > 50.0);
}

TEST_CASE("a trial point where K̄ is not positive definite is a rejected step, not the end of the search") {
  // A quadratic in θ = (log s², log σ²) whose 2nd and 3rd evaluations fail as a singular K̄ would.
  const std::vector<double> centre = {0.5, -1.0};
  int calls = 0;
  const LogParameterObjective objective = [&](std::span<const double> theta, std::span<double> gradient) {
    ++calls;
    if (calls == 2 || calls == 3)
      GPSTREAM_THROW("K̄ is not numerically positive definite (Cholesky failed at column 7 of 9)");
    double value = 0.0;
    for (std::size_t j = 0; j < 2; ++j) {
      value += (theta[j] - centre[j]) * (theta[j] - centre[j]);
      gradient[j] = 2.0 * (theta[j] - centre[j]);
    }
    return value;
  };
  const BoundedMinimum minimum = minimise_log_parameters(objective, {3.0, 1.5}, 1e-6, 1e-8, 200);
  CHECK(minimum.theta[0] == doctest::Approx(centre[0]).epsilon(1e-3));
  CHECK(minimum.theta[1] == doctest::Approx(centre[1]).epsilon(1e-3));
  CHECK(minimum.stop_reason.find("2 trial points rejected") != std::string::npos);
  // The start itself failing is still an error: there is no point to fall back on.
  const LogParameterObjective failing = [](std::span<const double>, std::span<double>) -> double {
    GPSTREAM_THROW("K̄ is not numerically positive definite");
  };
  CHECK_THROWS_WITH_AS(minimise_log_parameters(failing, {0.0, 0.0}, 1e-6, 1e-8, 200),
                       doctest::Contains("not numerically positive definite"), Error);
}

#include "engine/core/error.h"
#include "engine/hyper/hyperparameter_search.h"
#include "engine/hyper/marginal_likelihood.h"
#include "engine/hyper/subset_learning.h"
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

TEST_CASE("a family's own parameter is learned with the others: rational quadratic's alpha at a stationary point") {
  // A field of two scales drawn from a rational quadratic of small alpha: alpha moves off its start (1) and the
  // exact likelihood's gradient vanishes at the optimum in every component, alpha's included.
  KernelHyperparameters truth(KernelType::rational_quadratic, {0.4}, 1.0, 0.01);
  truth.family_parameters = {0.25};
  const Problem p = draw_from_gp(truth, 300, 17);
  HyperparameterSearchOptions options;
  options.kernel = KernelType::rational_quadratic;
  options.tolerance = 1e-10;
  const HyperparameterSearchResult learned = learn_hyperparameters(default_context, p.x.data(), p.y, p.d, options);
  REQUIRE(learned.hyperparameters.family_parameters.size() == 1);
  const double alpha = learned.hyperparameters.family_parameters[0];
  CAPTURE(alpha);
  CHECK(alpha < 0.9);  // towards the truth's several scales, away from the start
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

TEST_CASE("racing the restarts: a first start trailing the best criterion by more than the margin skips them") {
  const Problem p = make_problem(60, 2, 42);
  HyperparameterSearchOptions options;
  options.restarts = 2;
  options.seed = 7;
  const HyperparameterSearchResult all = learn_hyperparameters(default_context, p.x.data(), p.y, p.d, options);
  REQUIRE(all.starts.size() == 3);
  CHECK(all.restarts_skipped == 0);
  // The first start's criterion, −log p + ½ P log n (P: 2 lengthscales, s², σ²).
  const double criterion = all.starts[0].objective + 0.5 * 4.0 * std::log(60.0);
  // A best so far that the first start trails by just over the margin: the restarts are skipped, and what is
  // left is the first start, unchanged.
  options.skip_restarts_above = criterion - kRestartMargin - 1e-6;
  const HyperparameterSearchResult raced = learn_hyperparameters(default_context, p.x.data(), p.y, p.d, options);
  REQUIRE(raced.starts.size() == 1);
  CHECK(raced.restarts_skipped == 2);
  CHECK(raced.starts[0].objective == all.starts[0].objective);
  // Within the margin: every restart runs, as without racing.
  options.skip_restarts_above = criterion - kRestartMargin + 1e-6;
  const HyperparameterSearchResult close = learn_hyperparameters(default_context, p.x.data(), p.y, p.d, options);
  CHECK(close.starts.size() == 3);
  CHECK(close.objective == all.objective);
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

TEST_CASE(
    "a given starting point is the first start, what it leaves out is informed by the data, and the search "
    "from it finds the same optimum") {
  const Problem p = make_problem(50, 1, 41);
  HyperparameterSearchOptions informed;
  informed.kernel = KernelType::squared_exponential;
  informed.tolerance = 1e-10;
  const HyperparameterSearchResult from_data = learn_hyperparameters(default_context, p.x.data(), p.y, p.d, informed);

  HyperparameterSearchOptions given = informed;
  given.start.signal_variance = 20.0;
  given.start.lengthscales = {0.05};
  const HyperparameterSearchResult from_given = learn_hyperparameters(default_context, p.x.data(), p.y, p.d, given);
  const KernelHyperparameters& start = from_given.starts.at(0).initial;
  CHECK(start.signal_variance == 20.0);
  CHECK(start.lengthscales == std::vector<double>{0.05});
  CHECK(start.noise_variance == from_data.starts.at(0).initial.noise_variance);  // not given: informed
  // The likelihood of this problem has one optimum (the grid test above): both starts reach it.
  CHECK(from_given.objective == doctest::Approx(from_data.objective).epsilon(1e-6));
  const std::vector<double> a = log_parameters(from_given.hyperparameters),
                            b = log_parameters(from_data.hyperparameters);
  for (std::size_t j = 0; j < a.size(); ++j) CHECK(a[j] == doctest::Approx(b[j]).epsilon(1e-3));

  // One lengthscale stands for every input of an ARD kernel; a wrong count or a non-positive value is an error.
  const Problem q = make_problem(30, 3, 46);
  HyperparameterSearchOptions ard;
  ard.max_evaluations = 1;
  ard.start.lengthscales = {2.0};
  CHECK(learn_hyperparameters(default_context, q.x.data(), q.y, q.d, ard).starts.at(0).initial.lengthscales ==
        std::vector<double>(3, 2.0));
  ard.start.lengthscales = {1.0, 2.0};
  CHECK_THROWS_WITH_AS(learn_hyperparameters(default_context, q.x.data(), q.y, q.d, ard),
                       doctest::Contains("has 2 lengthscales; the rbf kernel on 3 inputs has 3"), Error);
  ard.start.lengthscales = {};
  ard.start.noise_variance = -1.0;
  CHECK_THROWS_WITH_AS(learn_hyperparameters(default_context, q.x.data(), q.y, q.d, ard),
                       doctest::Contains("starting noise variance must be positive"), Error);
}

TEST_CASE("a search that never moves says that the answer equals its start") {
  const Problem p = make_problem(40, 2, 47);
  HyperparameterSearchOptions options;
  options.max_evaluations = 1;  // the start is all it evaluates
  const HyperparameterSearchResult stopped = learn_hyperparameters(default_context, p.x.data(), p.y, p.d, options);
  const std::vector<std::string> notes = values_at_start(stopped.starts.at(0));
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("the answer equals the start") != std::string::npos);
  CHECK(notes[0].find("evaluation limit reached") != std::string::npos);

  options.max_evaluations = 500;
  const HyperparameterSearchResult moved = learn_hyperparameters(default_context, p.x.data(), p.y, p.d, options);
  CHECK(values_at_start(moved.starts.at(0)).empty());
}

TEST_CASE("ARD lengthscales started at 1 among 32 inputs do not move, and the search says which (the issue's case)") {
  // 32 inputs in [0, 1] standardised: with ℓ = 1 a typical squared distance is ~32, K̄ ≈ (s² + σ²)I and the
  // likelihood is flat in every ℓ — the landed search returned them all exactly at 1 without a word.
  constexpr std::size_t n = 200, d = 32;
  std::mt19937_64 random(12);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> x(n * d), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t l = 0; l < d; ++l) x[i * d + l] = uniform(random);
    y[i] = std::sin(6.0 * x[i * d]) + 4.0 * (x[i * d + 1] - 0.5) * (x[i * d + 1] - 0.5);
  }
  standardise_columns(x, n, d);
  standardise_columns(y, n, 1);
  HyperparameterSearchOptions options;
  options.start.lengthscales = {1.0};
  const HyperparameterSearchResult result = learn_hyperparameters(default_context, x.data(), y, d, options);
  std::size_t unmoved = 0;
  for (const double lengthscale : result.hyperparameters.lengthscales) unmoved += std::abs(lengthscale - 1.0) <= 1e-6;
  CAPTURE(result.hyperparameters.lengthscales);
  REQUIRE(unmoved > 0);
  const std::vector<std::string> notes = values_at_start(result.starts.at(0));
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("ended where they started") != std::string::npos);
}

TEST_CASE("values learned under one standardisation describe the same GP under another once restandardised") {
  // Raw rows, and two standardisations of them: y_std² k(standardised x, standardised z) must agree.
  const std::size_t d = 3;
  const Problem p = make_problem(8, d, 48);
  Standardisation from, to;
  from.x_mean = {0.1, -0.3, 0.5}, from.x_std = {1.2, 0.7, 2.0}, from.y_mean = 0.2, from.y_std = 1.5;
  to.x_mean = {-0.4, 0.2, 0.0}, to.x_std = {0.9, 1.1, 0.0 /* constant column: kept as is */}, to.y_mean = -1.0,
  to.y_std = 0.6;
  const KernelHyperparameters h = {KernelType::squared_exponential_ard, {0.8, 1.7, 0.4}, 2.5, 0.05};
  const KernelHyperparameters converted = restandardised(h, from, to);
  std::vector<double> under_from = p.x, under_to = p.x;
  from.apply_to_rows(under_from.data(), p.rows(), d);
  to.apply_to_rows(under_to.data(), p.rows(), d);
  for (std::size_t i = 0; i < p.rows(); ++i)
    for (std::size_t j = 0; j < p.rows(); ++j) {
      const double a = from.y_std * from.y_std * reference_kernel(h, &under_from[i * d], &under_from[j * d], d);
      const double b = to.y_std * to.y_std * reference_kernel(converted, &under_to[i * d], &under_to[j * d], d);
      CHECK(b == doctest::Approx(a).epsilon(1e-12));
    }
  CHECK(to.y_std * to.y_std * converted.noise_variance == doctest::Approx(from.y_std * from.y_std * h.noise_variance));
  // The same standardisation changes nothing.
  const KernelHyperparameters same = restandardised(h, from, from);
  CHECK(same.lengthscales == h.lengthscales);
  CHECK(same.signal_variance == h.signal_variance);
}

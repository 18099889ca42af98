#include "engine/core/error.h"
#include "engine/data/in_memory_row_source.h"
#include "engine/prediction/prediction_metrics.h"
#include "engine/prediction/predictive_distribution.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

using namespace gpstream;

TEST_CASE("metrics of a small hand-worked example") {
  const std::vector<double> truth = {1, 2, 3, 4}, mean = {1.5, 2, 2.5, 4}, variance = {0.01, 0.01, 0.01, 0.01};
  const PredictionMetrics metrics = evaluate_predictions(truth, mean, variance, 2.0, 2.0);
  // Squared errors 0.25, 0, 0.25, 0: mean 0.125; var(truth) = 1.25.
  CHECK(metrics.normalised_rmse == doctest::Approx(std::sqrt(0.125 / 2.0)));
  CHECK(metrics.smse == doctest::Approx(0.1));
  CHECK(metrics.mae == doctest::Approx(0.25));
  REQUIRE(metrics.coverage.has_value());
  CHECK(*metrics.coverage == doctest::Approx(0.5));  // |e| ≤ 0.2 only where e = 0
  // SNLP: ½ log(2π·0.01) + e²/0.02, minus ½ log(2π·2) + (y − 2)²/4, averaged.
  double expected = 0.0;
  for (std::size_t i = 0; i < 4; ++i) {
    const double e = truth[i] - mean[i];
    expected += 0.5 * std::log(2 * std::numbers::pi * 0.01) + e * e / 0.02 -
                (0.5 * std::log(2 * std::numbers::pi * 2.0) + (truth[i] - 2.0) * (truth[i] - 2.0) / 4.0);
  }
  CHECK(*metrics.snlp == doctest::Approx(expected / 4));
  CHECK(normalised_rmse(truth, mean, 2.0) == doctest::Approx(metrics.normalised_rmse));
  // Without variances there is no SNLP or coverage.
  CHECK_FALSE(evaluate_predictions(truth, mean, {}, 2.0, 2.0).snlp.has_value());
}

TEST_CASE("calibrated predictions cover 95.4 percent and score the Gaussian's SNLP") {
  std::mt19937_64 random(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::size_t count = 200000;
  std::vector<double> truth(count), mean(count), variance(count);
  for (std::size_t i = 0; i < count; ++i) {
    mean[i] = 3.0 * normal(random);
    variance[i] = 0.04 * (1.0 + static_cast<double>(i % 7));
    truth[i] = mean[i] + std::sqrt(variance[i]) * normal(random);
  }
  const PredictionMetrics metrics = evaluate_predictions(truth, mean, variance, 0.0, 9.0);
  CHECK(*metrics.coverage == doctest::Approx(0.9545).epsilon(0.005));
  // E[−log N(y; m, v)] = ½ log(2πv) + ½; the trivial model N(0, 9) is exact for y's marginal (9 + v ≈ 9).
  double expected = 0.0;
  for (std::size_t i = 0; i < count; ++i) expected += 0.5 * std::log(2 * std::numbers::pi * variance[i]) + 0.5;
  expected /= static_cast<double>(count);
  expected -= 0.5 * std::log(2 * std::numbers::pi * 9.0) + 0.5;
  CHECK(*metrics.snlp == doctest::Approx(expected).epsilon(0.01));
}

TEST_CASE("metrics refuse mismatched sizes and non-positive variances") {
  const std::vector<double> two = {1, 2}, three = {1, 2, 3};
  CHECK_THROWS_AS(evaluate_predictions(two, three, {}, 0, 1), Error);
  CHECK_THROWS_AS(evaluate_predictions(two, two, three, 0, 1), Error);
  const std::vector<double> zero = {0.0, 1.0};
  CHECK_THROWS_WITH_AS(evaluate_predictions(two, two, zero, 0, 1), doctest::Contains("row 1"), Error);
}

// The model is a prior in standardised units and an affine standardisation: the rows the solver reads hold
// y' = (y − y_mean)/y_std − m(x'), and a prediction of y' comes back as y.
TEST_CASE("the training rows hold the residual of the prior mean, and in_target_units restores the target") {
  ModelDescription model;
  model.columns = 2;
  model.standardisation = {{1.0, -2.0}, {2.0, 0.5}, 10.0, 4.0};
  model.prior.kernel.noise_variance = 0.25;
  model.prior.mean = {.intercept = true, .inputs = {1}, .coefficients = {0.5, -1.5}};
  const std::vector<double> x = {3.0, -1.0, -1.0, -2.5, 0.0, 0.0};
  const std::vector<double> y = {12.0, 7.0, -3.0};
  InMemoryRowSource raw(x, y, 2);
  StandardisedRowSource rows(raw, model.standardisation, model.prior.mean);
  std::vector<double> standardised_x(6), residual(3);
  rows.read_rows(0, 3, standardised_x.data(), residual.data());
  for (std::size_t i = 0; i < 3; ++i) {
    const double x2 = (x[2 * i + 1] + 2.0) / 0.5;
    CHECK(standardised_x[2 * i] == doctest::Approx((x[2 * i] - 1.0) / 2.0));
    CHECK(standardised_x[2 * i + 1] == doctest::Approx(x2));
    CHECK(residual[i] == doctest::Approx((y[i] - 10.0) / 4.0 - (0.5 - 1.5 * x2)));
  }
  // A perfect prediction of the residual is the target; variances scale by y_std², plus σ² unless latent.
  const std::vector<double> latent = {0.0, 1.0, 2.0};
  const PredictiveDistribution noisy = in_target_units(model, false, residual, latent, standardised_x.data());
  const PredictiveDistribution latent_only = in_target_units(model, true, {}, latent, nullptr);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(noisy.mean[i] == doctest::Approx(y[i]).epsilon(1e-14));
    CHECK(noisy.variance[i] == doctest::Approx(16.0 * (latent[i] + 0.25)));
    CHECK(latent_only.variance[i] == doctest::Approx(16.0 * latent[i]));
  }
  // Without the inputs, a trend cannot be added back.
  CHECK_THROWS_WITH_AS(in_target_units(model, false, residual, {}, nullptr), doctest::Contains("test inputs"), Error);
}

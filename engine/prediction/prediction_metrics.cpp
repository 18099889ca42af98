#include "engine/prediction/prediction_metrics.h"

#include "engine/core/error.h"

#include <cmath>
#include <numbers>

namespace gpstream {
namespace {

// −log N(y; m, v)
double negative_log_density(double y, double m, double v) {
  return 0.5 * std::log(2.0 * std::numbers::pi * v) + (y - m) * (y - m) / (2.0 * v);
}

}  // namespace

PredictionMetrics evaluate_predictions(std::span<const double> truth, std::span<const double> mean,
                                       std::span<const double> variance, double training_mean,
                                       double training_variance) {
  const std::size_t t = truth.size();
  GPSTREAM_CHECK(mean.size() == t && t > 0, "metrics of {} predictions against {} targets", mean.size(), t);
  GPSTREAM_CHECK(variance.empty() || variance.size() == t, "{} variances for {} predictions", variance.size(), t);
  GPSTREAM_CHECK(training_variance > 0.0, "the training targets' variance must be positive, not {}", training_variance);
  const double count = static_cast<double>(t);
  double squared = 0.0, absolute = 0.0, truth_sum = 0.0;
  for (std::size_t i = 0; i < t; ++i) {
    squared += (truth[i] - mean[i]) * (truth[i] - mean[i]);
    absolute += std::abs(truth[i] - mean[i]);
    truth_sum += truth[i];
  }
  double test_variance = 0.0;
  for (const double y : truth) test_variance += (y - truth_sum / count) * (y - truth_sum / count);
  test_variance /= count;

  PredictionMetrics metrics;
  metrics.normalised_rmse = std::sqrt(squared / count / training_variance);
  metrics.smse = test_variance > 0.0 ? squared / count / test_variance : std::nan("");
  metrics.mae = absolute / count;
  if (!variance.empty()) {
    double loss = 0.0, covered = 0.0;
    for (std::size_t i = 0; i < t; ++i) {
      GPSTREAM_CHECK(variance[i] > 0.0, "predictive variance {} of row {} is not positive", variance[i], i + 1);
      loss += negative_log_density(truth[i], mean[i], variance[i]) -
              negative_log_density(truth[i], training_mean, training_variance);
      if (std::abs(truth[i] - mean[i]) <= 2.0 * std::sqrt(variance[i])) covered += 1.0;
    }
    metrics.snlp = loss / count;
    metrics.coverage = covered / count;
  }
  return metrics;
}

double normalised_rmse(std::span<const double> truth, std::span<const double> mean, double training_variance) {
  return evaluate_predictions(truth, mean, {}, 0.0, training_variance).normalised_rmse;
}

}  // namespace gpstream

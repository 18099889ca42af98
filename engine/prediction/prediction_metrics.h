// How good predictions are, against known targets — for any model.
//   RMSE  GBCD paper eq. (16): sqrt(mean((y − m)²) / var(y_train))
//   SMSE  mean((y − m)²) / var(y_test)            (cholqr paper §5, Rasmussen & Williams §2.5)
//   SNLP  eq. (22) of the cholqr paper: the mean negative log probability of
//         the targets under N(m, v), minus that under the trivial model
//         N(mean(y_train), var(y_train)) — below 0 means better than it
//   MAE   mean |y − m|
//   coverage: the fraction of targets inside m ± 2√v (0.954 when v is right)
// v is the predictive variance of what the targets are: a new observation y*
// (noise included) for noisy targets, the latent f* for noise-free ones.
#pragma once

#include <optional>
#include <span>

namespace gpstream {

struct PredictionMetrics {
  double normalised_rmse = 0.0;
  double smse = 0.0;
  double mae = 0.0;
  std::optional<double> snlp;      // with variances
  std::optional<double> coverage;  // with variances
};

// All values in the same units; `variance` may be empty (then no SNLP or coverage).
PredictionMetrics evaluate_predictions(std::span<const double> truth, std::span<const double> mean,
                                       std::span<const double> variance, double training_mean,
                                       double training_variance);

// Eq. (16) alone.
double normalised_rmse(std::span<const double> truth, std::span<const double> mean, double training_variance);

}  // namespace gpstream

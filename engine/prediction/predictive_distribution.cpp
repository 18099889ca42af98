#include "engine/prediction/predictive_distribution.h"

#include "engine/core/error.h"

#include <cmath>

namespace gpstream {

PredictiveDistribution in_target_units(const ModelDescription& model, bool latent, std::span<const double> mean,
                                       std::span<const double> latent_variance, const double* x,
                                       std::size_t first_row) {
  const Standardisation& standardisation = model.standardisation;
  const MeanFunction& prior_mean = model.prior.mean;
  PredictiveDistribution distribution;
  distribution.mean.reserve(mean.size());
  const std::size_t d = model.columns;
  const bool add_prior_mean = !prior_mean.coefficients.empty();
  GPSTREAM_CHECK(mean.empty() || !add_prior_mean || x != nullptr, "a mean function needs the test inputs");
  for (std::size_t i = 0; i < mean.size(); ++i) {
    const double standardised = mean[i] + (add_prior_mean ? prior_mean.value(x + i * d) : 0.0);
    distribution.mean.push_back(standardisation.restore_target(standardised));
  }
  const double scale = standardisation.y_std * standardisation.y_std;
  const double noise = latent ? 0.0 : model.prior.kernel.noise_variance;
  distribution.variance.reserve(latent_variance.size());
  for (const double value : latent_variance) distribution.variance.push_back(scale * (value + noise));
  const auto check = [first_row](const std::vector<double>& values, const char* what) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      GPSTREAM_CHECK(std::isfinite(values[i]),
                     "the predicted {} of test row {} is {}: the model or the inputs hold values too large for "
                     "double precision (check the inputs for huge values, and the model's hyperparameters)",
                     what, first_row + i + 1, values[i]);
    }
  };
  check(distribution.mean, "mean");
  check(distribution.variance, "variance");
  return distribution;
}

}  // namespace gpstream

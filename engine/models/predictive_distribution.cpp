#include "engine/models/predictive_distribution.h"

namespace gpstream {

PredictiveDistribution in_target_units(const Standardisation& standardisation, double noise_variance, bool latent,
                                       std::span<const double> mean, std::span<const double> latent_variance) {
  PredictiveDistribution distribution;
  distribution.mean.reserve(mean.size());
  for (const double value : mean) distribution.mean.push_back(standardisation.restore_target(value));
  const double scale = standardisation.y_std * standardisation.y_std;
  const double noise = latent ? 0.0 : noise_variance;
  distribution.variance.reserve(latent_variance.size());
  for (const double value : latent_variance) distribution.variance.push_back(scale * (value + noise));
  return distribution;
}

}  // namespace gpstream

// Predictions in the target's own units: the engine predicts in the
// standardised units it trains in, of the residual from the prior mean; this
// adds the prior mean back and undoes the standardisation of the targets
// (data/standardisation.h) for the means and variances it returns.
#pragma once

#include "engine/prediction/model_description.h"

#include <span>
#include <vector>

namespace gpstream {

struct PredictiveDistribution {
  std::vector<double> mean;      // in the target's units
  std::vector<double> variance;  // of y* (noise included) or of f* (latent); empty when not asked for
};

// Means restored (the prior's mean m(x) added back, from the rows'
// standardised inputs `x`, mean.size()×d; null when the prior mean is
// zero); variances of y* = f* + noise (or of f* when `latent`) times
// y_std². `latent_variance` (standardised, of f*) may be empty. Throws
// naming the row (counted from `first_row`) when a value is not finite: no
// prediction is written as NaN or inf.
PredictiveDistribution in_target_units(const ModelDescription& model, bool latent, std::span<const double> mean,
                                       std::span<const double> latent_variance, const double* x,
                                       std::size_t first_row = 0);

}  // namespace gpstream

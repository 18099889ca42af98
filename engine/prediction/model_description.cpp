#include "engine/prediction/model_description.h"

#include "engine/core/error.h"

#include <cmath>

namespace gpstream {

void validate_model_description(const ModelDescription& description, const std::string& source) {
  const Standardisation& standardisation = description.standardisation;
  standardisation.validate(source, description.feature_names,
                           description.target_name.empty() ? "y" : description.target_name);
  const double scale = standardisation.y_std * standardisation.y_std;
  const MeanFunction& mean = description.prior.mean;
  mean.validate(description.columns, source);
  GPSTREAM_CHECK_ARGUMENT(mean.coefficients.empty() || mean.inputs.empty() || standardisation.standardises_inputs(),
                          "{}: a linear mean needs standardised inputs", source);
  const KernelHyperparameters& h = description.prior.kernel;
  for (const auto& [name, value] : {std::pair{"signal", h.signal_variance}, std::pair{"noise", h.noise_variance}}) {
    GPSTREAM_CHECK(std::isfinite(value) && value > 0 && std::isfinite(value * scale),
                   "{}: the {} variance {:g} is {} in the target's units (times its variance {:g}): no prediction "
                   "could be finite; give a smaller one",
                   source, name, value, std::isfinite(value * scale) ? "invalid" : "not finite", scale);
  }
}

void check_finite_values(std::span<const double> values, const std::string& what, const std::string& source) {
  for (std::size_t k = 0; k < values.size(); ++k) {
    GPSTREAM_CHECK(std::isfinite(values[k]),
                   "{}: {} holds a value that is not a finite number ({} at entry {} of {}): the file is damaged or "
                   "was written by a run that diverged",
                   source, what, values[k], k + 1, values.size());
  }
}

}  // namespace gpstream

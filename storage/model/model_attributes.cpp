#include "storage/model/model_attributes.h"

#include "engine/core/error.h"
#include "storage/hdf5/hdf5_handle.h"

namespace gpstream {

void write_kernel_attributes(hid_t object, const KernelHyperparameters& hyperparameters) {
  hdf5::write_attribute(object, "kernel", kernel_type_name(hyperparameters.type));
  hdf5::write_attribute(object, "lengthscales", hyperparameters.lengthscales);
  if (hyperparameters.type != KernelType::matern52) {
    std::vector<double> gamma;
    for (const double lengthscale : hyperparameters.lengthscales) gamma.push_back(gamma_from_lengthscale(lengthscale));
    hdf5::write_attribute(object, "gamma", gamma);
  }
  hdf5::write_attribute(object, "signal_variance", hyperparameters.signal_variance);
  hdf5::write_attribute(object, "noise_variance", hyperparameters.noise_variance);
}

KernelHyperparameters read_kernel_attributes(hid_t object, const std::string& context) {
  KernelHyperparameters hyperparameters;
  hyperparameters.type = parse_kernel_type(hdf5::read_string_attribute(object, "kernel", context));
  hyperparameters.lengthscales = hdf5::read_double_array_attribute(object, "lengthscales", context);
  hyperparameters.signal_variance = hdf5::read_double_attribute(object, "signal_variance", context);
  hyperparameters.noise_variance = hdf5::read_double_attribute(object, "noise_variance", context);
  return hyperparameters;
}

void write_standardisation_attributes(hid_t object, const Standardisation& standardisation) {
  hdf5::write_attribute(object, "standardised", std::int64_t{standardisation.standardises_inputs() ? 1 : 0});
  hdf5::write_attribute(object, "x_mean", standardisation.x_mean);
  hdf5::write_attribute(object, "x_std", standardisation.x_std);
  hdf5::write_attribute(object, "y_mean", standardisation.y_mean);
  hdf5::write_attribute(object, "y_std", standardisation.y_std);
}

Standardisation read_standardisation_attributes(hid_t object, const std::string& context) {
  Standardisation standardisation;
  if (hdf5::read_integer_attribute(object, "standardised", context) != 0) {
    standardisation.x_mean = hdf5::read_double_array_attribute(object, "x_mean", context);
    standardisation.x_std = hdf5::read_double_array_attribute(object, "x_std", context);
  }
  standardisation.y_mean = hdf5::read_double_attribute(object, "y_mean", context);
  standardisation.y_std = hdf5::read_double_attribute(object, "y_std", context);
  return standardisation;
}

}  // namespace gpstream

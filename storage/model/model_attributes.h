// How kernels, standardisations and training summaries are stored as HDF5
// attributes; shared by model files and checkpoints so both read alike.
#pragma once

#include "engine/data/standardisation.h"
#include "engine/kernels/kernel.h"
#include "engine/models/dense_model.h"

#include <hdf5.h>

#include <string>

namespace gpstream {

// kernel, lengthscales, signal_variance, noise_variance (gamma too, for SE kernels).
void write_kernel_attributes(hid_t object, const KernelHyperparameters& hyperparameters);
KernelHyperparameters read_kernel_attributes(hid_t object, const std::string& context);

// standardised (0/1), x_mean, x_std, y_mean, y_std.
void write_standardisation_attributes(hid_t object, const Standardisation& standardisation);
Standardisation read_standardisation_attributes(hid_t object, const std::string& context);

}  // namespace gpstream

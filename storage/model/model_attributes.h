// How kernels, standardisations and training summaries are stored as HDF5
// attributes; shared by model files and checkpoints so both read alike.
#pragma once

#include "engine/data/standardisation.h"
#include "engine/kernels/gaussian_process_prior.h"
#include "engine/prediction/model_description.h"

#include <hdf5.h>

#include <string>

namespace gpstream {

// kernel, lengthscales, signal_variance, noise_variance (gamma too, for SE kernels).
void write_kernel_attributes(hid_t object, const KernelHyperparameters& hyperparameters);
KernelHyperparameters read_kernel_attributes(hid_t object, const std::string& context);

// The kernel's attributes and the mean's: mean_intercept (0/1), mean_inputs (0-based), mean_coefficients.
void write_prior_attributes(hid_t object, const GaussianProcessPrior& prior);
GaussianProcessPrior read_prior_attributes(hid_t object, const std::string& context);

// standardised (0/1), x_mean, x_std, y_mean, y_std.
void write_standardisation_attributes(hid_t object, const Standardisation& standardisation);
Standardisation read_standardisation_attributes(hid_t object, const std::string& context);

// solver, stop_reason, iterations, convergence_measure, tolerance, training_seconds, kernel_evaluations.
void write_training_summary_attributes(hid_t object, const TrainingSummary& training);
TrainingSummary read_training_summary_attributes(hid_t object, const std::string& context);

// Everything in a ModelDescription: the prior, standardisation and training
// summary attributes above, dataset_path, dataset_fingerprint, rows, columns,
// feature_names, target_name. The reader checks the shape is positive.
void write_model_description_attributes(hid_t object, const ModelDescription& description);
void read_model_description_attributes(hid_t object, const std::string& context, ModelDescription& description);

// The model's identity: format "gpstream-model", version, model_type, created_by.
void write_model_header(hid_t object, const std::string& model_type);
// Checks the format and version and returns the model type ("dense", "sparse").
std::string read_model_type(hid_t object, const std::string& context);

}  // namespace gpstream

#include "storage/model/model_attributes.h"

#include "engine/core/error.h"
#include "storage/hdf5/contents_checksum.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/dense_model_file.h"

#include <fmt/format.h>

#include <cmath>

namespace gpstream {

namespace {

// A family's own parameter of term t (0: the first) as an attribute: "alpha", "term2_alpha", …
std::string family_attribute(std::size_t term, const char* name) {
  return term == 0 ? std::string(name) : fmt::format("term{}_{}", term + 1, name);
}

}  // namespace

void write_kernel_attributes(hid_t object, const KernelHyperparameters& hyperparameters) {
  hdf5::write_attribute(object, "kernel", kernel_name(hyperparameters));
  if (hyperparameters.term_count() > 1) {  // a sum: each further term's lengthscales (flattened) and signal variance
    std::vector<double> lengthscales, counts, signals;
    for (std::size_t t = 1; t < hyperparameters.term_count(); ++t) {
      const KernelTerm& term = hyperparameters.term(t);
      lengthscales.insert(lengthscales.end(), term.lengthscales.begin(), term.lengthscales.end());
      counts.push_back(static_cast<double>(term.lengthscales.size()));
      signals.push_back(term.signal_variance);
    }
    hdf5::write_attribute(object, "added_lengthscales", lengthscales);
    hdf5::write_attribute(object, "added_lengthscale_counts", counts);
    hdf5::write_attribute(object, "added_signal_variances", signals);
  }
  for (std::size_t t = 0; t < hyperparameters.term_count(); ++t) {
    const KernelTerm& term = hyperparameters.term(t);
    const auto specs = family_parameter_specs(term.type);
    for (std::size_t f = 0; f < specs.size(); ++f)
      hdf5::write_attribute(object, family_attribute(t, specs[f].name), term.family_parameters.at(f));
  }
  hdf5::write_attribute(object, "lengthscales", hyperparameters.lengthscales);
  if (hyperparameters.type == KernelType::squared_exponential_ard ||
      hyperparameters.type == KernelType::squared_exponential) {
    std::vector<double> gamma;
    for (const double lengthscale : hyperparameters.lengthscales) gamma.push_back(gamma_from_lengthscale(lengthscale));
    hdf5::write_attribute(object, "gamma", gamma);
  }
  hdf5::write_attribute(object, "signal_variance", hyperparameters.signal_variance);
  hdf5::write_attribute(object, "noise_variance", hyperparameters.noise_variance);
}

KernelHyperparameters read_kernel_attributes(hid_t object, const std::string& context) {
  KernelHyperparameters hyperparameters = parse_kernel_shape(hdf5::read_string_attribute(object, "kernel", context));
  hyperparameters.lengthscales = hdf5::read_double_array_attribute(object, "lengthscales", context);
  hyperparameters.signal_variance = hdf5::read_double_attribute(object, "signal_variance", context);
  hyperparameters.noise_variance = hdf5::read_double_attribute(object, "noise_variance", context);
  const std::size_t added = hyperparameters.term_count() - 1;
  if (added > 0) {
    const std::vector<double> lengthscales = hdf5::read_double_array_attribute(object, "added_lengthscales", context);
    const std::vector<double> counts = hdf5::read_double_array_attribute(object, "added_lengthscale_counts", context);
    const std::vector<double> signals = hdf5::read_double_array_attribute(object, "added_signal_variances", context);
    GPSTREAM_CHECK(counts.size() == added && signals.size() == counts.size(),
                   "{}: {} added kernel terms but {} lengthscale counts and {} signal variances", context, added,
                   counts.size(), signals.size());
    std::size_t next = 0;
    for (std::size_t t = 0; t < counts.size(); ++t) {
      GPSTREAM_CHECK(counts[t] >= 0 && counts[t] == std::floor(counts[t]) &&
                         static_cast<double>(next) + counts[t] <= static_cast<double>(lengthscales.size()),
                     "{}: invalid lengthscale count {} of added term {}", context, counts[t], t + 1);
      const std::size_t count = static_cast<std::size_t>(counts[t]);
      KernelTerm& term = hyperparameters.term(t + 1);
      term.lengthscales.assign(lengthscales.begin() + static_cast<std::ptrdiff_t>(next),
                               lengthscales.begin() + static_cast<std::ptrdiff_t>(next + count));
      term.signal_variance = signals[t];
      next += count;
    }
  }
  for (std::size_t t = 0; t < hyperparameters.term_count(); ++t) {
    KernelTerm& term = hyperparameters.term(t);
    const auto specs = family_parameter_specs(term.type);
    for (std::size_t f = 0; f < specs.size(); ++f)
      term.family_parameters[f] = hdf5::read_double_attribute(object, family_attribute(t, specs[f].name), context);
  }
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

void write_prior_attributes(hid_t object, const GaussianProcessPrior& prior) {
  write_kernel_attributes(object, prior.kernel);
  const MeanFunction& mean = prior.mean;
  hdf5::write_attribute(object, "mean_intercept", std::int64_t{mean.intercept ? 1 : 0});
  hdf5::write_attribute(object, "mean_inputs", std::vector<double>(mean.inputs.begin(), mean.inputs.end()));
  hdf5::write_attribute(object, "mean_coefficients", mean.coefficients);
}

GaussianProcessPrior read_prior_attributes(hid_t object, const std::string& context) {
  GaussianProcessPrior prior;
  prior.kernel = read_kernel_attributes(object, context);
  if (hdf5::has_attribute(object, "mean_intercept")) {  // files from before mean functions have none
    MeanFunction& mean = prior.mean;
    mean.intercept = hdf5::read_integer_attribute(object, "mean_intercept", context) != 0;
    for (const double column : hdf5::read_double_array_attribute(object, "mean_inputs", context)) {
      GPSTREAM_CHECK(column >= 0 && column < 1e9 && column == std::floor(column), "{}: invalid mean input {}", context,
                     column);
      mean.inputs.push_back(static_cast<std::size_t>(column));
    }
    mean.coefficients = hdf5::read_double_array_attribute(object, "mean_coefficients", context);
  }
  return prior;
}

void write_training_summary_attributes(hid_t object, const TrainingSummary& training) {
  hdf5::write_attribute(object, "solver", training.solver);
  hdf5::write_attribute(object, "stop_reason", training.stop_reason);
  hdf5::write_attribute(object, "iterations", static_cast<std::int64_t>(training.iterations));
  hdf5::write_attribute(object, "convergence_measure", training.convergence_measure);
  hdf5::write_attribute(object, "tolerance", training.tolerance);
  hdf5::write_attribute(object, "training_seconds", training.seconds);
  hdf5::write_attribute(object, "kernel_evaluations", static_cast<std::int64_t>(training.kernel_evaluations));
  hdf5::write_attribute(object, "precision", training.precision);
  hdf5::write_attribute(object, "exact_residuals_in_single_precision",
                        static_cast<std::int64_t>(training.exact_residuals_in_single_precision));
}

TrainingSummary read_training_summary_attributes(hid_t object, const std::string& context) {
  TrainingSummary training;
  training.solver = hdf5::read_string_attribute(object, "solver", context);
  training.stop_reason = hdf5::read_string_attribute(object, "stop_reason", context);
  training.iterations = static_cast<std::uint64_t>(hdf5::read_integer_attribute(object, "iterations", context));
  // Files written before the rename call it gradient_max_norm.
  training.convergence_measure = hdf5::read_double_attribute(
      object, hdf5::has_attribute(object, "convergence_measure") ? "convergence_measure" : "gradient_max_norm",
      context);
  training.tolerance = hdf5::read_double_attribute(object, "tolerance", context);
  training.seconds = hdf5::read_double_attribute(object, "training_seconds", context);
  training.kernel_evaluations =
      static_cast<std::uint64_t>(hdf5::read_integer_attribute(object, "kernel_evaluations", context));
  if (hdf5::has_attribute(object, "precision")) {  // files from before single precision have none: double
    training.precision = hdf5::read_string_attribute(object, "precision", context);
    training.exact_residuals_in_single_precision = static_cast<std::uint64_t>(
        hdf5::read_integer_attribute(object, "exact_residuals_in_single_precision", context));
  }
  return training;
}

void write_model_description_attributes(hid_t object, const ModelDescription& description) {
  write_prior_attributes(object, description.prior);
  write_standardisation_attributes(object, description.standardisation);
  hdf5::write_attribute(object, "dataset_path", description.dataset_path);
  hdf5::write_attribute(object, "dataset_fingerprint", description.dataset_fingerprint);
  hdf5::write_attribute(object, "rows", static_cast<std::int64_t>(description.rows));
  hdf5::write_attribute(object, "columns", static_cast<std::int64_t>(description.columns));
  hdf5::write_attribute(object, "feature_names", description.feature_names);
  hdf5::write_attribute(object, "target_name", description.target_name);
  write_training_summary_attributes(object, description.training);
}

void read_model_description_attributes(hid_t object, const std::string& context, ModelDescription& description) {
  description.prior = read_prior_attributes(object, context);
  description.standardisation = read_standardisation_attributes(object, context);
  description.dataset_path = hdf5::read_string_attribute(object, "dataset_path", context);
  description.dataset_fingerprint = hdf5::read_string_attribute(object, "dataset_fingerprint", context);
  const std::int64_t rows = hdf5::read_integer_attribute(object, "rows", context);
  const std::int64_t columns = hdf5::read_integer_attribute(object, "columns", context);
  GPSTREAM_CHECK(rows > 0 && columns > 0, "{}: invalid shape {} x {}", context, rows, columns);
  description.rows = static_cast<std::size_t>(rows);
  description.columns = static_cast<std::size_t>(columns);
  description.feature_names = hdf5::read_string_array_attribute(object, "feature_names", context);
  description.target_name = hdf5::read_string_attribute(object, "target_name", context);
  description.training = read_training_summary_attributes(object, context);
}

void write_model_header(hid_t object, const std::string& model_type) {
  hdf5::write_attribute(object, "format", std::string(kModelFormat));
  hdf5::write_attribute(object, "version", kModelVersion);
  hdf5::write_attribute(object, "model_type", model_type);
  hdf5::write_creation_attributes(object);
}

std::string read_model_type(hid_t object, const std::string& context) {
  if (hdf5::check_format(object, context, kModelFormat, kModelVersion) >= 2) {
    hdf5::check_contents_checksum(object, context, "model file");
  }
  return hdf5::read_string_attribute(object, "model_type", context);
}

}  // namespace gpstream

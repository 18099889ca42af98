#include "api/job_configuration.h"

#include "api/parameter_schema.h"
#include "engine/core/error.h"
#include "engine/training/training_method.h"
#include "storage/dataset/training_rows.h"

#include <filesystem>
#include <limits>

namespace gpstream {

namespace {

// The tolerance a method stops at: `tol` or `gap` as its kind takes, else its default.
double stopping_tolerance(const TrainingMethod& method, std::optional<double> tol, std::optional<double> gap) {
  return (method.stops_at_tol() ? tol : gap).value_or(default_tolerance(method.tolerance));
}

}  // namespace

TrainingConfiguration configure_fresh_job(const FreshJobParameters& parameters, const DatasetDescription& dataset) {
  const TrainingMethod* method = find_training_method(parameters.method);
  GPSTREAM_CHECK_ARGUMENT(method != nullptr, "`solver`/`model`: unknown method '{}' (choose {} or {})",
                          parameters.method, training_method_names(/*dense=*/true),
                          training_method_names(/*dense=*/false));
  TrainingConfiguration configuration;
  if (method->dense()) {
    check_choice("precision", parameters.solver.precision);
    configuration.solver = parameters.solver;
    configuration.solver.name = parameters.method;
    configuration.fit_subspace_steps_to_budget = !parameters.subspace_steps_given;
  } else {
    configuration.solver = {parameters.method, parameters.basis_size,
                            parameters.basis_candidates.value_or(kBasisCandidates)};
    configuration.cholqr = parameters.cholqr;
    configuration.online = parameters.online;
  }
  configuration.prior = parameters.prior;
  if (!parameters.standardise) {
    configuration.standardisation = unstandardised(dataset, configuration.prior.kernel);
    configuration.prior.mean = {};  // a file's mean is of the targets standardised as it says: not these
  } else if (parameters.prior_units) {
    GPSTREAM_CHECK_ARGUMENT(parameters.prior_units->x_mean.size() == dataset.columns,
                            "`hyper`: the values were learned on {} inputs, but the dataset has {}",
                            parameters.prior_units->x_mean.size(), dataset.columns);
    configuration.standardisation = *parameters.prior_units;
  } else {
    configuration.standardisation = dataset_standardisation(dataset);
  }
  configuration.seed = parameters.seed;
  configuration.dataset_path = dataset.path.empty() ? std::string() : std::filesystem::absolute(dataset.path).string();
  configuration.dataset_fingerprint = dataset.fingerprint;
  configuration.rows = dataset.rows;

  TrainingJob& job = configuration.job;
  job.stopping.tolerance = stopping_tolerance(*method, parameters.tol, parameters.gap);
  if (parameters.max_iterations > 0) job.stopping.max_iterations = parameters.max_iterations;
  if (parameters.time_limit_seconds > 0) job.stopping.time_limit_seconds = parameters.time_limit_seconds;
  job.stopping.refresh_every = parameters.refresh_every;
  job.checkpoint_every_seconds = parameters.checkpoint_every_seconds;
  const auto absolute = [](const std::string& path) {
    return path.empty() ? std::string() : std::filesystem::absolute(path).string();
  };
  job.output_path = absolute(parameters.output_path);
  job.log_path = absolute(parameters.log_path);
  job.overwrite_output = parameters.overwrite_output;
  return configuration;
}

}  // namespace gpstream

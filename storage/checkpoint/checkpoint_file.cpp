#include "storage/checkpoint/checkpoint_file.h"

#include "engine/core/error.h"
#include "storage/hdf5/contents_checksum.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/model_attributes.h"
#include "storage/output/atomic_output_file.h"

#include <cmath>
#include <limits>

namespace gpstream {
namespace {

// Auxiliary vectors and parameters are listed in attributes, in order, so
// reading them needs no HDF5 iteration callbacks.
constexpr const char* kAuxiliaryNames = "auxiliary_names";
constexpr const char* kParameterNames = "parameter_names";
constexpr const char* kParameters = "parameters";

// The settings of CholQR and the online GP that are not parameters of the
// schema (its parameters travel in /parameters).
void write_method_settings(hid_t root, const TrainingConfiguration& configuration) {
  const CholQrOptions& cholqr = configuration.cholqr;
  hdf5::write_attribute(root, "cholqr_swap_inducing_rows", static_cast<std::int64_t>(cholqr.swap_inducing_rows));
  hdf5::write_attribute(root, "cholqr_swaps_per_epoch", static_cast<std::int64_t>(cholqr.swaps_per_epoch));
  hdf5::write_attribute(root, "cholqr_hyperparameter_evaluations",
                        static_cast<std::int64_t>(cholqr.hyperparameter_evaluations));
  hdf5::write_attribute(root, "cholqr_min_noise_variance", cholqr.min_noise_variance);
  hdf5::write_attribute(root, "online_rows_per_iteration",
                        static_cast<std::int64_t>(configuration.online.rows_per_iteration));
}

std::size_t read_count(hid_t root, const char* name, const std::string& path) {
  const std::int64_t value = hdf5::read_integer_attribute(root, name, path);
  GPSTREAM_CHECK(value >= 0, "{}: invalid {} {}", path, name, value);
  return static_cast<std::size_t>(value);
}

void read_method_settings(hid_t root, const std::string& path, TrainingConfiguration& configuration) {
  CholQrOptions& cholqr = configuration.cholqr;
  cholqr.swap_inducing_rows = read_count(root, "cholqr_swap_inducing_rows", path) != 0;
  cholqr.swaps_per_epoch = read_count(root, "cholqr_swaps_per_epoch", path);
  cholqr.hyperparameter_evaluations = read_count(root, "cholqr_hyperparameter_evaluations", path);
  cholqr.min_noise_variance = hdf5::read_double_attribute(root, "cholqr_min_noise_variance", path);
  configuration.online.rows_per_iteration = read_count(root, "online_rows_per_iteration", path);
}

void write_parameters(hid_t root, std::span<const StoredParameter> parameters) {
  std::vector<std::string> names;
  hdf5::Handle group = hdf5::create_group(root, kParameters);
  for (const StoredParameter& parameter : parameters) {
    names.push_back(parameter.name);
    std::visit([&](const auto& value) { hdf5::write_attribute(group.get(), parameter.name, value); },
               parameter.value);
  }
  hdf5::write_attribute(root, kParameterNames, names);
  group.close("the parameters group");
}

std::vector<StoredParameter> read_parameters(hid_t root, const std::string& path) {
  std::vector<StoredParameter> parameters;
  hdf5::Handle group = hdf5::open_group(root, kParameters, path);
  const std::string context = path + ": parameters";
  for (std::string& name : hdf5::read_string_array_attribute(root, kParameterNames, path)) {
    StoredValue value;
    switch (hdf5::attribute_class(group.get(), name, context)) {
      case H5T_INTEGER:
        value = hdf5::read_integer_attribute(group.get(), name, context);
        break;
      case H5T_FLOAT:
        value = hdf5::read_double_attribute(group.get(), name, context);
        break;
      default:
        value = hdf5::read_string_attribute(group.get(), name, context);
    }
    parameters.push_back({std::move(name), std::move(value)});
  }
  return parameters;
}

}  // namespace

void write_checkpoint(const std::string& path, const TrainingConfiguration& configuration,
                      std::span<const StoredParameter> parameters, const SolverState& state,
                      const CheckpointMeasure& measure) {
  hdf5::write_file(path, ExistingOutput::replace, "checkpoint", [&](hid_t root) {
    hdf5::write_attribute(root, "format", std::string(kCheckpointFormat));
    hdf5::write_attribute(root, "version", kCheckpointVersion);
    hdf5::write_creation_attributes(root);
    write_parameters(root, parameters);
    hdf5::write_attribute(root, "dataset_path", configuration.dataset_path);
    hdf5::write_attribute(root, "dataset_fingerprint", configuration.dataset_fingerprint);
    hdf5::write_attribute(root, "rows", static_cast<std::int64_t>(configuration.rows));
    write_prior_attributes(root, configuration.prior);
    write_standardisation_attributes(root, configuration.standardisation);
    hdf5::write_attribute(root, "iteration", static_cast<std::int64_t>(state.iteration));
    hdf5::write_attribute(root, "elapsed_seconds", state.elapsed_seconds);
    hdf5::write_attribute(root, "kernel_evaluations", static_cast<std::int64_t>(state.kernel_evaluations));
    hdf5::write_attribute(root, "random_state", serialise_random(state.random));
    if (std::isfinite(measure.value)) {
      hdf5::write_attribute(root, "convergence_measure", measure.value);
      hdf5::write_attribute(root, "convergence_measure_name", measure.name);
    }
    const TrainingJob& job = configuration.job;
    hdf5::write_attribute(root, "output_path", job.output_path);
    hdf5::write_attribute(root, "overwrite_output", static_cast<std::int64_t>(job.overwrite_output));
    hdf5::write_attribute(root, "log_path", job.log_path);
    write_method_settings(root, configuration);
    if (!state.alpha.empty()) {  // dense solvers; a sparse basis selection keeps its state in /auxiliary
      hdf5::write_vector(root, "alpha", state.alpha);
      hdf5::write_vector(root, "gradient", state.gradient);
    }
    std::vector<std::string> names;
    hdf5::Handle auxiliary = hdf5::create_group(root, "auxiliary");
    for (const auto& [name, values] : state.auxiliary) {
      names.push_back(name);
      hdf5::write_vector(auxiliary.get(), name, values);
    }
    hdf5::write_attribute(root, kAuxiliaryNames, names);
    auxiliary.close("the auxiliary group");
  });
}

Checkpoint read_checkpoint(const std::string& path) {
  hdf5::Handle file = hdf5::open_file(path);
  const hid_t root = file.get();
  const std::int64_t version = hdf5::check_format(root, path, kCheckpointFormat, kCheckpointVersion);
  // Versions 2 to 5 stored the parameters under names of their own.
  GPSTREAM_CHECK(version >= kCheckpointVersion,
                 "{}: a version-{} checkpoint, from a gpstream older than this one reads; start the run again", path,
                 version);
  hdf5::check_contents_checksum(root, path, "checkpoint", "; resume from another checkpoint, or start the run again");
  Checkpoint checkpoint;
  TrainingConfiguration& configuration = checkpoint.configuration;
  SolverState& state = checkpoint.state;
  checkpoint.parameters = read_parameters(root, path);
  configuration.dataset_path = hdf5::read_string_attribute(root, "dataset_path", path);
  configuration.dataset_fingerprint = hdf5::read_string_attribute(root, "dataset_fingerprint", path);
  const std::int64_t rows = hdf5::read_integer_attribute(root, "rows", path);
  GPSTREAM_CHECK(rows > 0, "{}: invalid row count {}", path, rows);
  configuration.rows = static_cast<std::size_t>(rows);
  configuration.prior = read_prior_attributes(root, path);
  configuration.standardisation = read_standardisation_attributes(root, path);
  state.iteration = read_count(root, "iteration", path);
  state.elapsed_seconds = hdf5::read_double_attribute(root, "elapsed_seconds", path);
  GPSTREAM_CHECK(std::isfinite(state.elapsed_seconds) && state.elapsed_seconds >= 0, "{}: invalid elapsed_seconds {}",
                 path, state.elapsed_seconds);
  state.kernel_evaluations = read_count(root, "kernel_evaluations", path);
  state.random = deserialise_random(hdf5::read_string_attribute(root, "random_state", path));
  if (hdf5::has_attribute(root, "convergence_measure")) {
    checkpoint.measure.value = hdf5::read_double_attribute(root, "convergence_measure", path);
    checkpoint.measure.name = hdf5::read_string_attribute(root, "convergence_measure_name", path);
  }
  TrainingJob& job = configuration.job;
  job.output_path = hdf5::read_string_attribute(root, "output_path", path);
  job.overwrite_output = hdf5::read_integer_attribute(root, "overwrite_output", path) != 0;
  job.log_path = hdf5::read_string_attribute(root, "log_path", path);
  if (hdf5::has_link(root, "alpha")) {
    state.alpha = hdf5::read_vector(root, "alpha", path, configuration.rows);
    state.gradient = hdf5::read_vector(root, "gradient", path, configuration.rows);
  }
  hdf5::Handle auxiliary = hdf5::open_group(root, "auxiliary", path);
  for (const std::string& name : hdf5::read_string_array_attribute(root, kAuxiliaryNames, path)) {
    state.auxiliary[name] = hdf5::read_vector(auxiliary.get(), name, path + ": auxiliary");
  }
  read_method_settings(root, path, configuration);
  return checkpoint;
}

bool is_checkpoint(const std::string& path) { return hdf5::has_format(path, kCheckpointFormat); }

}  // namespace gpstream

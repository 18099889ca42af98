#include "storage/checkpoint/checkpoint_file.h"

#include "engine/core/error.h"
#include "storage/hdf5/contents_checksum.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/model_attributes.h"
#include "storage/output/atomic_output_file.h"

#include <xxhash.h>

#include <cmath>
#include <limits>

namespace gpstream {
namespace {

// Auxiliary vectors are listed in an attribute, in order, so reading them
// needs no HDF5 iteration callbacks.
constexpr const char* kAuxiliaryNames = "auxiliary_names";

void write_method_settings(hid_t root, const TrainingConfiguration& configuration) {
  const CholQrOptions& cholqr = configuration.cholqr;
  hdf5::write_attribute(root, "cholqr_information_pivots", static_cast<std::int64_t>(cholqr.information_pivots));
  hdf5::write_attribute(root, "cholqr_objective", std::string(inducing_objective_name(cholqr.objective)));
  hdf5::write_attribute(root, "cholqr_learn_hyperparameters", static_cast<std::int64_t>(cholqr.learn_hyperparameters));
  hdf5::write_attribute(root, "cholqr_swap_inducing_rows", static_cast<std::int64_t>(cholqr.swap_inducing_rows));
  hdf5::write_attribute(root, "cholqr_swaps_per_epoch", static_cast<std::int64_t>(cholqr.swaps_per_epoch));
  hdf5::write_attribute(root, "cholqr_hyperparameter_evaluations",
                        static_cast<std::int64_t>(cholqr.hyperparameter_evaluations));
  hdf5::write_attribute(root, "cholqr_min_noise_variance", cholqr.min_noise_variance);
  const OnlineGpOptions& online = configuration.online;
  hdf5::write_attribute(root, "online_novelty", online.novelty);
  hdf5::write_attribute(root, "online_passes", static_cast<std::int64_t>(online.passes));
  hdf5::write_attribute(root, "online_rows_per_iteration", static_cast<std::int64_t>(online.rows_per_iteration));
}

std::size_t read_count(hid_t root, const char* name, const std::string& path) {
  const std::int64_t value = hdf5::read_integer_attribute(root, name, path);
  GPSTREAM_CHECK(value >= 0, "{}: invalid {} {}", path, name, value);
  return static_cast<std::size_t>(value);
}

void read_method_settings(hid_t root, const std::string& path, TrainingConfiguration& configuration) {
  CholQrOptions& cholqr = configuration.cholqr;
  cholqr.information_pivots = read_count(root, "cholqr_information_pivots", path);
  cholqr.objective = parse_inducing_objective(hdf5::read_string_attribute(root, "cholqr_objective", path));
  cholqr.learn_hyperparameters = read_count(root, "cholqr_learn_hyperparameters", path) != 0;
  cholqr.swap_inducing_rows = read_count(root, "cholqr_swap_inducing_rows", path) != 0;
  cholqr.swaps_per_epoch = read_count(root, "cholqr_swaps_per_epoch", path);
  cholqr.hyperparameter_evaluations = read_count(root, "cholqr_hyperparameter_evaluations", path);
  cholqr.min_noise_variance = hdf5::read_double_attribute(root, "cholqr_min_noise_variance", path);
  OnlineGpOptions& online = configuration.online;
  online.novelty = hdf5::read_double_attribute(root, "online_novelty", path);
  online.passes = read_count(root, "online_passes", path);
  online.rows_per_iteration = read_count(root, "online_rows_per_iteration", path);
}

// XXH3 of the run's state — the counters, the RNG and every vector, in a
// fixed order — stored in the 'checksum' attribute of version 4, which left
// the configuration out (an edited noise variance resumed from a gradient of
// another K̄); version 5 checks all of the file's contents instead
// (hdf5/contents_checksum.h).
std::string state_checksum(const SolverState& state) {
  XXH3_state_t* hash = XXH3_createState();
  GPSTREAM_CHECK(hash != nullptr, "out of memory for a checksum");
  XXH3_64bits_reset(hash);
  const auto add = [hash](const void* data, std::size_t bytes) { XXH3_64bits_update(hash, data, bytes); };
  const auto add_vector = [&](const std::vector<double>& values) {
    const std::uint64_t size = values.size();
    add(&size, sizeof size);
    add(values.data(), values.size() * sizeof(double));
  };
  add(&state.iteration, sizeof state.iteration);
  add(&state.kernel_evaluations, sizeof state.kernel_evaluations);
  add(&state.elapsed_seconds, sizeof state.elapsed_seconds);
  const std::string random = serialise_random(state.random);
  add(random.data(), random.size());
  add_vector(state.alpha);
  add_vector(state.gradient);
  for (const auto& [name, values] : state.auxiliary) {
    add(name.data(), name.size() + 1);
    add_vector(values);
  }
  const std::uint64_t digest = XXH3_64bits_digest(hash);
  XXH3_freeState(hash);
  return fmt::format("{:016x}", digest);
}

}  // namespace

void write_checkpoint(const std::string& path, const TrainingConfiguration& configuration, const SolverState& state,
                      const CheckpointMeasure& measure) {
  hdf5::write_file(path, ExistingOutput::replace, "checkpoint", [&](hid_t root) {
    hdf5::write_attribute(root, "format", std::string(kCheckpointFormat));
    hdf5::write_attribute(root, "version", kCheckpointVersion);
    hdf5::write_creation_attributes(root);
    hdf5::write_attribute(root, "solver", configuration.solver.name);
    hdf5::write_attribute(root, "active_set_size", static_cast<std::int64_t>(configuration.solver.active_set_size));
    hdf5::write_attribute(root, "candidates", static_cast<std::int64_t>(configuration.solver.candidates));
    hdf5::write_attribute(root, "subspace_steps", static_cast<std::int64_t>(configuration.solver.subspace_steps));
    hdf5::write_attribute(root, "seed", static_cast<std::int64_t>(configuration.seed));
    hdf5::write_attribute(root, "dataset_path", configuration.dataset_path);
    hdf5::write_attribute(root, "dataset_fingerprint", configuration.dataset_fingerprint);
    hdf5::write_attribute(root, "rows", static_cast<std::int64_t>(configuration.rows));
    write_kernel_attributes(root, configuration.hyperparameters);
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
    hdf5::write_attribute(root, "tolerance", job.stopping.tolerance);
    const bool limited = job.stopping.max_iterations != std::numeric_limits<std::uint64_t>::max();
    hdf5::write_attribute(root, "max_iterations", limited ? static_cast<std::int64_t>(job.stopping.max_iterations) : 0);
    hdf5::write_attribute(root, "time_limit_seconds", job.stopping.time_limit_seconds);
    hdf5::write_attribute(root, "refresh_every", static_cast<std::int64_t>(job.stopping.refresh_every));
    hdf5::write_attribute(root, "output_path", job.output_path);
    hdf5::write_attribute(root, "overwrite_output", static_cast<std::int64_t>(job.overwrite_output));
    hdf5::write_attribute(root, "log_path", job.log_path);
    hdf5::write_attribute(root, "checkpoint_every_seconds", job.checkpoint_every_seconds);
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
  // Version 2 kept the sparse models' settings as unnamed vectors, and nothing checked its contents.
  GPSTREAM_CHECK(version >= 3,
                 "{}: a version-{} checkpoint, from a gpstream older than this one reads; start the run again", path,
                 version);
  if (version >= 5) {
    hdf5::check_contents_checksum(root, path, "checkpoint", "; resume from another checkpoint, or start the run again");
  }
  Checkpoint checkpoint;
  TrainingConfiguration& configuration = checkpoint.configuration;
  SolverState& state = checkpoint.state;
  configuration.solver.name = hdf5::read_string_attribute(root, "solver", path);
  configuration.solver.active_set_size = read_count(root, "active_set_size", path);
  configuration.solver.candidates = read_count(root, "candidates", path);
  // Checkpoints from before the subspace acceleration resume as the plain BCD they were.
  configuration.solver.subspace_steps =
      hdf5::has_attribute(root, "subspace_steps") ? read_count(root, "subspace_steps", path) : 0;
  GPSTREAM_CHECK(configuration.solver.active_set_size > 0 && configuration.solver.candidates > 0,
                 "{}: invalid active set or basis size {} with {} candidates", path,
                 configuration.solver.active_set_size, configuration.solver.candidates);
  // Any 64 bits are a seed (written as the signed integer of the same bits).
  configuration.seed = static_cast<std::uint64_t>(hdf5::read_integer_attribute(root, "seed", path));
  configuration.dataset_path = hdf5::read_string_attribute(root, "dataset_path", path);
  configuration.dataset_fingerprint = hdf5::read_string_attribute(root, "dataset_fingerprint", path);
  const std::int64_t rows = hdf5::read_integer_attribute(root, "rows", path);
  GPSTREAM_CHECK(rows > 0, "{}: invalid row count {}", path, rows);
  configuration.rows = static_cast<std::size_t>(rows);
  configuration.hyperparameters = read_kernel_attributes(root, path);
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
  job.stopping.tolerance = hdf5::read_double_attribute(root, "tolerance", path);
  const std::int64_t max_iterations = hdf5::read_integer_attribute(root, "max_iterations", path);
  GPSTREAM_CHECK(max_iterations >= 0, "{}: invalid max_iterations {}", path, max_iterations);
  if (max_iterations > 0) job.stopping.max_iterations = static_cast<std::uint64_t>(max_iterations);
  job.stopping.time_limit_seconds = hdf5::read_double_attribute(root, "time_limit_seconds", path);
  const std::int64_t refresh_every = hdf5::read_integer_attribute(root, "refresh_every", path);
  GPSTREAM_CHECK(refresh_every >= 0, "{}: invalid refresh_every {}", path, refresh_every);
  job.stopping.refresh_every = static_cast<std::uint64_t>(refresh_every);
  job.output_path = hdf5::read_string_attribute(root, "output_path", path);
  job.overwrite_output = hdf5::read_integer_attribute(root, "overwrite_output", path) != 0;
  job.log_path = hdf5::read_string_attribute(root, "log_path", path);
  job.checkpoint_every_seconds = hdf5::read_double_attribute(root, "checkpoint_every_seconds", path);
  GPSTREAM_CHECK(std::isfinite(job.stopping.tolerance) && job.stopping.tolerance > 0 &&
                     job.stopping.time_limit_seconds > 0 && job.checkpoint_every_seconds > 0,
                 "{}: the saved stopping rule is invalid (tolerance {}, time limit {}, checkpoint every {} s)", path,
                 job.stopping.tolerance, job.stopping.time_limit_seconds, job.checkpoint_every_seconds);
  if (hdf5::has_link(root, "alpha")) {
    state.alpha = hdf5::read_vector(root, "alpha", path, configuration.rows);
    state.gradient = hdf5::read_vector(root, "gradient", path, configuration.rows);
  }
  hdf5::Handle auxiliary = hdf5::open_group(root, "auxiliary", path);
  for (const std::string& name : hdf5::read_string_array_attribute(root, kAuxiliaryNames, path)) {
    state.auxiliary[name] = hdf5::read_vector(auxiliary.get(), name, path + ": auxiliary");
  }
  if (version == 4) {
    const std::string saved = hdf5::read_string_attribute(root, "checksum", path);
    GPSTREAM_CHECK(saved == state_checksum(state),
                   "{}: the checkpoint's contents do not match its checksum: it was changed or damaged after it was "
                   "written; resume from another checkpoint, or start the run again",
                   path);
  }
  read_method_settings(root, path, configuration);
  return checkpoint;
}

bool is_checkpoint(const std::string& path) { return hdf5::has_format(path, kCheckpointFormat); }

}  // namespace gpstream

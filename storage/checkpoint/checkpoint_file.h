// Checkpoints: a snapshot of a training run in progress, for resuming it.
// Not a model file — different contents, different compatibility promise
// (a checkpoint is only read by the gpstream that wrote its format version).
//
//   root attributes: format "gpstream-checkpoint", version 6, created_by,
//     dataset_path, dataset_fingerprint, rows, kernel attributes,
//     standardisation attributes, iteration, elapsed_seconds,
//     kernel_evaluations, random_state (the RNG's text form); the job's
//     output_path, overwrite_output, log_path; the settings of CholQR and
//     the online GP that are not parameters (cholqr_swap_inducing_rows,
//     cholqr_swaps_per_epoch, cholqr_hyperparameter_evaluations,
//     cholqr_min_noise_variance, online_rows_per_iteration);
//     parameter_names, in order
//   /parameters         the job's parameters, one attribute each, named as
//                       the parameter schema names them (api/
//                       parameter_schema.h: `solver` or `model`,
//                       `active_set_size` or `basis_size`, `candidates`,
//                       `random_state`, `tol` or `gap`, `max_iter`, …): the
//                       API layer decides which and binds them to the
//                       configuration; this file stores them as given
//   /alpha, /gradient   float64 [n] (dense solvers only)
//   contents_checksum: XXH3 of every attribute and dataset, the parameters
//     included, checked on reading (a checkpoint changed after it was
//     written is refused; hdf5/contents_checksum.h)
//   /auxiliary/<name>   solver-specific vectors (CG's search direction, …;
//                       a sparse basis selection's basis, factors and bounds)
//
// Versions 2 to 5 kept the parameters as root attributes of their own names
// and are refused: start such a run again.
//
// A sparse model's greedy basis selection is checkpointed in the same file:
// its parameters are the model's (`model`, `basis_size`, …).
//
// Written to a temporary file, fsynced and renamed over the previous
// checkpoint: a crash at any instant leaves the previous one intact.
#pragma once

#include "engine/solvers/solver_state.h"
#include "engine/training/training_configuration.h"

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace gpstream {

inline constexpr const char* kCheckpointFormat = "gpstream-checkpoint";
inline constexpr std::int64_t kCheckpointVersion = 6;

// Where the run stood when the checkpoint was written, for `gpstream info`:
// its stopping rule's measure (a resumed run computes its own). NaN when the
// checkpoint does not record it (those written before 2026-11-26).
struct CheckpointMeasure {
  double value = std::numeric_limits<double>::quiet_NaN();
  std::string name;  // as IterativeMethod::measure_name(): "|g|/|y|", "gap"
};

// One of the job's parameters as stored: a whole number, a real or a text.
using StoredValue = std::variant<std::int64_t, double, std::string>;
struct StoredParameter {
  std::string name;  // the parameter schema's
  StoredValue value;
  bool operator==(const StoredParameter&) const = default;
};

struct Checkpoint {
  // What this file holds itself: the dataset, kernel, standardisation and
  // job outputs. The fields the parameters set are left at their defaults
  // by read_checkpoint: api's read_training_checkpoint sets them.
  TrainingConfiguration configuration;
  std::vector<StoredParameter> parameters;
  SolverState state;
  CheckpointMeasure measure;
};

// Writes straight from the run's own configuration and state: a copy of α
// and g would double the O(n) vectors at every checkpoint (at 10M rows, 153
// MiB more than a 512 MiB container has).
void write_checkpoint(const std::string& path, const TrainingConfiguration& configuration,
                      std::span<const StoredParameter> parameters, const SolverState& state,
                      const CheckpointMeasure& measure = {});
inline void write_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  write_checkpoint(path, checkpoint.configuration, checkpoint.parameters, checkpoint.state, checkpoint.measure);
}
Checkpoint read_checkpoint(const std::string& path);
// Whether `path` is a training checkpoint (of any version), without reading it whole.
bool is_checkpoint(const std::string& path);

}  // namespace gpstream

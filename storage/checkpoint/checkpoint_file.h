// Checkpoints: a snapshot of a training run in progress, for resuming it.
// Not a model file — different contents, different compatibility promise
// (a checkpoint is only read by the gpstream that wrote its format version).
//
//   root attributes: format "gpstream-checkpoint", version 2, created_by,
//     solver, active_set_size, candidates, seed, dataset_path,
//     dataset_fingerprint, rows, kernel attributes, standardisation
//     attributes, iteration, elapsed_seconds, kernel_evaluations,
//     random_state (the RNG's text form); the job (version 2): tolerance,
//     max_iterations (0: none), time_limit_seconds (inf: none),
//     refresh_every, output_path, overwrite_output, log_path,
//     checkpoint_every_seconds; CholQR's and the online GP's settings
//     (version 3; version 2 kept them in /auxiliary/settings, and is no
//     longer read): cholqr_*, online_*
//   /alpha, /gradient   float64 [n] (dense solvers only)
//   checksum (version 4 only): XXH3 of the counters, the RNG and every vector
//   contents_checksum (version 5): XXH3 of every attribute and dataset, the
//     configuration's included, checked on reading (a checkpoint changed
//     after it was written is refused; hdf5/contents_checksum.h)
//   /auxiliary/<name>   solver-specific vectors (CG's search direction, …;
//                       a sparse basis selection's basis, factors and bounds)
//
// A sparse model's greedy basis selection is checkpointed in the same file:
// `solver` is the model (sggp, mpgp, sgma), active_set_size its basis size.
//
// Written to a temporary file, fsynced and renamed over the previous
// checkpoint: a crash at any instant leaves the previous one intact.
#pragma once

#include "engine/solvers/solver_state.h"
#include "engine/training/training_configuration.h"

#include <limits>
#include <string>

namespace gpstream {

inline constexpr const char* kCheckpointFormat = "gpstream-checkpoint";
inline constexpr std::int64_t kCheckpointVersion = 5;

// Where the run stood when the checkpoint was written, for `gpstream info`:
// its stopping rule's measure (a resumed run computes its own). NaN when the
// checkpoint does not record it (those written before 2026-11-26).
struct CheckpointMeasure {
  double value = std::numeric_limits<double>::quiet_NaN();
  std::string name;  // as IterativeMethod::measure_name(): "|g|/|y|", "gap"
};

struct Checkpoint {
  TrainingConfiguration configuration;
  SolverState state;
  CheckpointMeasure measure;
};

// Writes straight from the run's own configuration and state: a copy of α
// and g would double the O(n) vectors at every checkpoint (at 10M rows, 153
// MiB more than a 512 MiB container has).
void write_checkpoint(const std::string& path, const TrainingConfiguration& configuration, const SolverState& state,
                      const CheckpointMeasure& measure = {});
inline void write_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  write_checkpoint(path, checkpoint.configuration, checkpoint.state, checkpoint.measure);
}
Checkpoint read_checkpoint(const std::string& path);
// Whether `path` is a training checkpoint (of any version), without reading it whole.
bool is_checkpoint(const std::string& path);

}  // namespace gpstream

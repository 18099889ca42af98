// What defines a training run — the method and its settings, the kernel,
// the standardisation, the data — and how the launched job ends: what
// train and Python's fit build, the Training API runs, and a checkpoint
// keeps (storage/checkpoint/checkpoint_file.h stores it; it is not the
// file format's).
#pragma once

#include "engine/data/standardisation.h"
#include "engine/kernels/gaussian_process_prior.h"
#include "engine/solvers/dense_solver.h"
#include "engine/solvers/solver_driver.h"
#include "engine/training/training_method.h"

#include <cstdint>
#include <string>

namespace gpstream {

// How the launched job ends and where its results go: kept in the checkpoint
// so that `train --resume` continues the job that was launched; an option
// given again on resume overrides its entry (and the next checkpoint keeps
// the override). A version-1 checkpoint has none of it: defaults apply.
struct TrainingJob {
  // tolerance: what the method's entry says it is (TrainingMethod::tolerance:
  // a relative residual, a gap, a relative decrease); iterations and time
  // are totals over the run and all its resumptions.
  StoppingRule stopping;
  std::string output_path;  // absolute
  bool overwrite_output = false;
  std::string log_path;  // absolute, or "" for no log
  double checkpoint_every_seconds = 60;
};

// What defines a training run: a resumed run must agree on all of it but the job.
struct TrainingConfiguration {
  TrainingJob job;
  SolverOptions solver;        // name: the solver or the sparse model; active_set_size: m, or the basis size
  CholQrOptions cholqr;        // cholqr's settings (basis size and seed are the ones above)
  OnlineGpOptions online;      // the online GP's settings
  GaussianProcessPrior prior;  // learned, or given; in the units `standardisation` makes
  Standardisation standardisation;
  std::uint64_t seed = 1;
  std::string dataset_path;
  std::string dataset_fingerprint;
  std::size_t rows = 0;
  // A fresh run's past steps are the default, not asked for: fewer are taken
  // when they do not fit the memory budget (not stored: a resumed run keeps
  // the steps its state was made with).
  bool fit_subspace_steps_to_budget = false;
};

// The sparse model's typed settings of a configuration.
SparseMethodOptions sparse_method_options(const TrainingConfiguration& configuration);

}  // namespace gpstream

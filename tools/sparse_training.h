// `gpstream train --model NAME`: the sparse models, after train has set up
// the run's configuration, data and kernel. The iterative ones (greedy basis
// selections, CholQR, the online GP) run
// through the solver driver with the same progress line, training log,
// checkpoints and --resume as the dense solvers.
#pragma once

#include "engine/core/stop_flag.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/solver_driver.h"
#include "engine/sparse/cholqr_selection.h"
#include "engine/sparse/online_gp.h"
#include "engine/sparse/sparse_model.h"
#include "storage/checkpoint/checkpoint_file.h"

#include <optional>
#include <span>
#include <string>

namespace gpstream::cli {

// sd, sr, sgma, mpgp, sggp, nystrom, cholqr, online (srm-trans and bcm are trained by predict).
bool is_sparse_model(const std::string& name);
// The sparse models trained iteration by iteration (checkpointed, resumable).
bool is_iterative_sparse_model(const std::string& name);
inline constexpr const char* kSparseModelNames = "sd, sr, sgma, mpgp, sggp, nystrom, cholqr or online";

struct SparseTrainingRun {
  SparseTrainingRun(const TrainingConfiguration& run_configuration, KernelMatrix& run_kernel,
                    std::span<const double> targets)
      : configuration(run_configuration), kernel(run_kernel), y(targets) {}

  const TrainingConfiguration& configuration;  // solver.name is the model, active_set_size its basis size
  KernelMatrix& kernel;
  std::span<const double> y;
  std::optional<SolverState> resumed;  // an iterative model's checkpointed state
  std::string checkpoint_path;         // "" for none
  double checkpoint_every = 60;
  StoppingRule rule;                   // tolerance: the sggp gap, CholQR's relative decrease per epoch
  CholQrOptions cholqr;                // its basis size and seed come from the configuration
  OnlineGpOptions online;              // its basis budget comes from the configuration
  std::string log_path;
  bool quiet = false;
  const StopFlag* stop = nullptr;
  std::string output;  // the model file, for the resume command printed on Ctrl-C
};

struct SparseTrainingResult {
  SparseModel model;  // its kernel (learned by CholQR) but not the rest of the metadata, which train adds
  SolverRun run;
};

// Throws when the model would hold more than the memory budget (CholQR keeps
// O(n m) factors), saying what the limit is.
void check_sparse_memory(const SparseTrainingRun& run);

// Throws Cancelled when the run was interrupted (after writing its checkpoint).
SparseTrainingResult train_sparse_model(SparseTrainingRun& run);

}  // namespace gpstream::cli

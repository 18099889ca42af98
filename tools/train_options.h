// train's options and the job's configuration made from them: what
// command_train.cpp runs. One file for the options (train_options.cpp), one
// for the run.
#pragma once

#include "engine/training/training_method.h"
#include "engine/training/training_configuration.h"
#include "storage/checkpoint/checkpoint_file.h"
#include "tools/command_line.h"
#include "tools/hyperparameter_learning.h"

#include <string>

namespace gpstream::cli {

struct TrainOptions {
  std::string dataset, output, solver, model, kernel, hyper_file, checkpoint, resume, log, save_hyper;
  std::string resumed_log;  // on --resume: the training log the checkpoint's run wrote (absolute; "" for none)
  std::string objective = "var";
  ColumnCacheOptions cache;
  std::size_t active_set_size = 500, candidates = kGreedyCandidates, subspace_steps = SolverOptions{}.subspace_steps,
              basis = 1000, information_pivots = 16, passes = 1;
  double novelty = 1e-6;
  std::uint64_t seed = 1, max_iterations = 0, refresh_every = 0;
  double tolerance = 0, time_limit = 0, checkpoint_every = 60, gap = 0.025;  // tolerance 0: the method's default
  ComputeOptions compute;
  KernelValueOptions kernel_values;
  HyperparameterLearningOptions learning;
  bool quiet = false;
  bool profile = false;  // --profile: the time of each phase of an iteration, printed at the end
};

// The command's synopsis, description and options, bound to `options`.
void describe_command(CommandSpec& spec, TrainOptions& options);
// The checks that need no file: ranges of the options, an existing --save-hyper.
void validate(TrainOptions& options, const po::variables_map& values);

// A fresh run's configuration, from the options (and the dataset's description).
TrainingConfiguration configure_fresh(TrainOptions& options, const po::variables_map& values);
// A resumed run's configuration and state, from its checkpoint (options given again override the job).
Checkpoint configure_resumed(TrainOptions& options, const po::variables_map& values);

// The registry's entry of a configuration's method (a checkpoint's name is checked when it is read).
const TrainingMethod& method_of(const TrainingConfiguration& configuration);

}  // namespace gpstream::cli

// train's options and the job's configuration made from them: what
// command_train.cpp runs. One file for the options (train_options.cpp), one
// for the run.
#pragma once

#include "tools/command_line.h"
#include "tools/hyperparameter_learning.h"

#include <string>

namespace gpstream::cli {

struct TrainOptions {
  // The schema's parameters (api/parameter_schema.h: their defaults are set by the options parsed from it)
  // that the command reads itself: on --resume, against the checkpoint's job or over it. The job reads
  // every one given as its pairs (job_specification()).
  std::string solver, model, kernel, precision;
  std::size_t active_set_size = 0, candidates = 0, subspace_steps = 0, basis = 0;
  std::uint64_t seed = 0, max_iterations = 0, refresh_every = 0;
  double tolerance = 0, time_limit = 0, checkpoint_every = 0, gap = 0;  // tolerance 0: the method's default
  // The command line's own.
  std::string dataset, output, hyper_file, checkpoint, resume, log, save_hyper;
  std::string resumed_log;  // on --resume: the training log the checkpoint's run wrote (absolute; "" for none)
  ColumnCacheOptions cache;
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

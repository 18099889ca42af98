// The command-line side of hyperparameters: the kernel's values as options
// (train's kernel, the search's start), and hyperparameter learning as
// `gpstream hyper` and `gpstream train --learn-hyper` share it — the options,
// the trace of the search's evaluations, and the file of learned values. The
// learning itself is the engine's (engine/hyper/subset_learning.h).
#pragma once

#include "api/learning_plan.h"
#include "api/search_checkpoints.h"
#include "tools/command_line.h"
#include "tools/progress_line.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace gpstream::cli {

// --lengthscales, --gamma, --signal-var, --noise-var, --kernel-parameters: kernel values on the
// command line (standardised units). train takes them as the kernel, over a
// --hyper file's values; hyper and train --learn-hyper as the search's first
// start, over an --init file's.
struct KernelValueOptions {
  std::string lengthscales, gamma, kernel_parameters;
  double signal_variance = 1.0, noise_variance = 0.0;

  void add(po::options_description& options);
  // The values the user gave; UsageError for both --lengthscales and
  // --gamma, or a value that is not positive.
  StartingPoint given(const po::variables_map& values) const;
};

// --init, --subset, --restarts, --hyper-tol, --min-noise, --max-evaluations,
// --mean, --mean-fit, --learn-on, --vecchia-neighbours, --exact-rows, --all-rows-steps, --probes, --all-rows-tol.
// The job reads them as its pairs (job_specification()); the command itself only --init's path.
struct HyperparameterLearningOptions {
  std::string init_file;

  void add(po::options_description& options);
};

// What to learn (api/learning_plan.h) from the options given (api/job_specification.h: `kernel` auto unless
// given), the kernel values given (--gamma too) as the first start; UsageError naming the option at fault.
LearningPlan plan_learning(const KernelValueOptions& kernel_values, const po::variables_map& values,
                           const DatasetDescription& dataset, const std::string& name);

// The notes a user acts on after a search: values on a bound of the search
// and values that never moved from the start (engine/hyper/hyperparameter_search.h).
std::vector<std::string> learning_notes(const LearnedModel& learned, const ModelLearningOptions& options);

// The table of the kernels compared (one line each: kernel, −log p on the
// subset and on all rows, lengthscales, noise variance, the chosen one
// marked), and the learned mean in the target's units.
std::vector<std::string> describe_learning(const LearnedModel& learned, const ModelLearningOptions& options,
                                           const Standardisation& standardisation,
                                           const std::vector<std::string>& feature_names);

// One line per objective evaluation: start, evaluation, −log p(y|X),
// ‖gradient‖∞, signal and noise variance.
class SearchTraceObserver final : public RunObserver {
 public:
  explicit SearchTraceObserver(std::FILE* out) : out_(out) {}
  void on_start(const IterationReport& report) override;
  void on_iteration(const IterationReport& report) override;

 private:
  std::FILE* out_;
};

// The live progress line of a search (train --learn-hyper): its evaluations
// so far, the current −log p and gradient, the elapsed time.
class SearchProgressObserver final : public RunObserver {
 public:
  explicit SearchProgressObserver(ProgressLine& line) : line_(line) {}
  void on_iteration(const IterationReport& report) override;
  void on_warning(const std::string& message) override;

 private:
  ProgressLine& line_;
  std::size_t evaluations_ = 0;
};

// The search checkpoints of the command line: api/search_checkpoints.h,
// warning on stderr.
SearchCheckpoints command_line_search_checkpoints(std::string path, double every_seconds, SearchCheckpoint identity,
                                                  bool root, SearchCheckpoint replay = {});

// "lengthscales [...], signal variance s², noise variance σ²" for reports.
std::string describe_hyperparameters(const KernelHyperparameters& hyperparameters);

}  // namespace gpstream::cli

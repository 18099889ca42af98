// The command-line side of hyperparameters: the kernel's values as options
// (train's kernel, the search's start), and hyperparameter learning as
// `gpstream hyper` and `gpstream train --learn-hyper` share it — the options,
// the trace of the search's evaluations, and the file of learned values. The
// learning itself is the engine's (engine/hyper/subset_learning.h).
#pragma once

#include "engine/core/progress.h"
#include "engine/data/standardisation.h"
#include "engine/hyper/subset_learning.h"
#include "tools/command_line.h"

#include <cstdio>
#include <string>
#include <vector>

namespace gpstream::cli {

// Parses "1.5,2,0.3" for `option` (UsageError naming it and the word at fault).
std::vector<double> parse_number_list(const std::string& text, const char* option);

// --lengthscales, --gamma, --signal-var, --noise-var: kernel values on the
// command line (standardised units). train takes them as the kernel, over a
// --hyper file's values; hyper and train --learn-hyper as the search's first
// start, over an --init file's.
struct KernelValueOptions {
  std::string lengthscales, gamma;
  double signal_variance = 1.0, noise_variance = 0.0;

  void add(po::options_description& options);
  // The values the user gave; UsageError for both --lengthscales and
  // --gamma, or a value that is not positive.
  StartingPoint given(const po::variables_map& values) const;
};

// --init, --subset, --restarts, --hyper-tol, --min-noise, --max-evaluations.
struct HyperparameterLearningOptions {
  SubsetLearningOptions learning;
  std::string init_file;

  void add(po::options_description& options);
};

// What to learn: the kernel and the checked options with their first start.
struct LearningPlan {
  KernelType kernel = KernelType::squared_exponential_ard;
  SubsetLearningOptions options;
  std::string start_origin;  // "informed by the data", "--init FILE", ... for reports
};

// The options checked against the dataset's `rows` (UsageError naming the
// option at fault), and the first start: the --init file's values, converted
// from the file's standardisation to the dataset's `standardisation`,
// overridden by the `kernel_values` the user gave. The kernel is --kernel
// when given, else the --init file's, else `kernel_name` (its default).
LearningPlan plan_learning(const HyperparameterLearningOptions& learning, const KernelValueOptions& kernel_values,
                           const std::string& kernel_name, const po::variables_map& values, std::size_t rows,
                           const std::string& dataset, const Standardisation& standardisation);

// The notes a user acts on after a search: values on a bound of the search
// and values that never moved from the start (engine/hyper/hyperparameter_search.h).
std::vector<std::string> learning_notes(const LearnedOnSubset& learned, const SubsetLearningOptions& options);

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

// Writes the learned values with how they were learned (see
// storage/hyper/hyperparameter_file.h).
void save_learned_hyperparameters(const std::string& path, const LearnedOnSubset& learned,
                                  const SubsetLearningOptions& options, std::uint64_t seed, const std::string& dataset,
                                  const std::string& fingerprint, const Standardisation& standardisation,
                                  bool overwrite);

// "lengthscales [...], signal variance s², noise variance σ²" for reports.
std::string describe_hyperparameters(const KernelHyperparameters& hyperparameters);

}  // namespace gpstream::cli

// The command-line side of hyperparameter learning, shared by `gpstream
// hyper` and `gpstream train --learn-hyper`: the options, the trace of the
// search's evaluations, and the file of learned values. The learning itself
// is the engine's (engine/hyper/subset_learning.h).
#pragma once

#include "engine/core/progress.h"
#include "engine/data/standardisation.h"
#include "engine/hyper/subset_learning.h"
#include "tools/command_line.h"

#include <cstdio>

namespace gpstream::cli {

// --subset, --restarts, --hyper-tol, --min-noise, --max-evaluations.
struct HyperparameterLearningOptions {
  SubsetLearningOptions learning;

  void add(po::options_description& options);
  // The options checked against the dataset's `rows` (UsageError naming the option at fault).
  const SubsetLearningOptions& checked(std::size_t rows, const std::string& dataset) const;
};

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

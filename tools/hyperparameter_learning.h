// Hyperparameter learning as `gpstream hyper` and `gpstream train
// --learn-hyper` both do it: a random subset of the (standardised) training
// rows, the marginal-likelihood search of engine/hyper on it, and a report.
#pragma once

#include "engine/core/stop_flag.h"
#include "engine/data/standardisation.h"
#include "engine/data/row_source.h"
#include "engine/hyper/hyperparameter_search.h"
#include "tools/command_line.h"

#include <cstdio>

namespace gpstream::cli {

// --subset, --restarts, --hyper-tol, --min-noise, --max-evaluations.
struct HyperparameterLearningOptions {
  std::size_t subset = 2000;  // GBCD paper §3
  std::size_t restarts = 2;   // as the reference files in shared/data/hyper
  double tolerance = 1e-4;    // GBCD paper §3
  double min_noise_variance = 1e-6;
  std::size_t max_evaluations = 500;

  void add(po::options_description& options);
};

struct LearnedOnSubset {
  HyperparameterSearchResult search;
  std::size_t subset_size = 0;
  std::size_t evaluations = 0;
  double seconds = 0.0;
};

// Draws min(--subset, n) rows without replacement (seeded), gathers them and
// learns `kernel`'s hyperparameters; a --subset larger than n is an error
// naming both. Each evaluation is written to `trace` (nullptr: not at all).
LearnedOnSubset learn_on_subset(RowSource& rows, const std::string& dataset, KernelType kernel,
                                const HyperparameterLearningOptions& options, std::uint64_t seed, std::FILE* trace,
                                const StopFlag* stop);

// Writes the learned values with how they were learned (see
// storage/hyper/hyperparameter_file.h).
void save_learned_hyperparameters(const std::string& path, const LearnedOnSubset& learned,
                                  const HyperparameterLearningOptions& options, std::uint64_t seed,
                                  const std::string& dataset, const std::string& fingerprint,
                                  const Standardisation& standardisation, bool overwrite);

// "lengthscales [...], signal variance s², noise variance σ²" for reports.
std::string describe_hyperparameters(const KernelHyperparameters& hyperparameters);

}  // namespace gpstream::cli

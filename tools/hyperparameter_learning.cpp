#include "tools/hyperparameter_learning.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/row_source_utilities.h"
#include "engine/linalg/blas_threads.h"
#include "storage/hyper/hyperparameter_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>

namespace gpstream::cli {

void HyperparameterLearningOptions::add(po::options_description& options) {
  options.add_options()
      ("subset", po::value(&subset)->default_value(2000), "rows the marginal likelihood is computed on (random, without replacement)")
      ("restarts", po::value(&restarts)->default_value(2), "random restarts of the optimiser after the fixed start")
      ("hyper-tol", po::value(&tolerance)->default_value(1e-4, "1e-4"), "stop when the objective and every log-hyperparameter change by less")
      ("min-noise", po::value(&min_noise_variance)->default_value(1e-6, "1e-6"), "lower bound of the noise variance (standardised targets)")
      ("max-evaluations", po::value(&max_evaluations)->default_value(500), "objective evaluations per start");
}

LearnedOnSubset learn_on_subset(RowSource& rows, const std::string& dataset, KernelType kernel,
                                const HyperparameterLearningOptions& options, std::uint64_t seed, std::FILE* trace,
                                const StopFlag* stop) {
  const std::size_t n = rows.rows();
  if (options.subset < 2) throw UsageError(fmt::format("--subset must be at least 2, not {}", options.subset));
  if (options.subset > n) {
    throw UsageError(fmt::format("--subset {} is larger than the {} rows of '{}'; give --subset {} or less",
                                 options.subset, n, dataset, n));
  }
  if (!(options.tolerance > 0)) throw UsageError(fmt::format("--hyper-tol must be positive, not {}", options.tolerance));
  if (!(options.min_noise_variance > 0)) {
    throw UsageError(fmt::format("--min-noise must be positive, not {}", options.min_noise_variance));
  }
  GPSTREAM_CHECK(rows.has_targets(), "'{}' has no targets to learn hyperparameters from", dataset);

  const std::size_t d = rows.columns();
  const std::vector<std::size_t> subset = random_row_subset(n, options.subset, seed);
  std::vector<double> x(checked_multiply(subset.size(), d)), y(subset.size());
  rows.gather_rows(subset, x.data(), y.data());

  HyperparameterSearchOptions search;
  search.kernel = kernel;
  search.restarts = options.restarts;
  search.tolerance = options.tolerance;
  search.max_evaluations = options.max_evaluations;
  search.min_noise_variance = options.min_noise_variance;
  search.seed = seed;
  if (trace != nullptr) {
    fmt::print(trace, "{:>5} {:>5} {:>16} {:>10} {:>11} {:>11}\n", "start", "eval", "-log p(y|X)", "|grad|inf",
               "signal var", "noise var");
  }
  SearchObserver observer;
  if (trace != nullptr) {
    observer = [trace](const SearchEvaluation& e) {
      fmt::print(trace, "{:>5} {:>5} {:>16.6f} {:>10.3e} {:>11.5g} {:>11.5g}\n", e.start, e.evaluation, e.objective,
                 e.gradient_norm, e.hyperparameters.signal_variance, e.hyperparameters.noise_variance);
      std::fflush(trace);
    };
  }
  // One O(n³) factorisation after another: BLAS may use every core here.
  const ScopedBlasThreads blas_threads(
      static_cast<int>(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)));
  const auto started = std::chrono::steady_clock::now();
  LearnedOnSubset learned;
  learned.search = learn_hyperparameters(x.data(), y, d, search, observer, stop);
  learned.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  learned.subset_size = subset.size();
  for (const SearchStart& start : learned.search.starts) learned.evaluations += start.evaluations;
  return learned;
}

void save_learned_hyperparameters(const std::string& path, const LearnedOnSubset& learned,
                                  const HyperparameterLearningOptions& options, std::uint64_t seed,
                                  const std::string& dataset, const std::string& fingerprint,
                                  const Standardisation& standardisation, bool overwrite) {
  HyperparameterProvenance provenance;
  provenance.negative_log_marginal_likelihood = learned.search.objective;
  provenance.subset_size = learned.subset_size;
  provenance.seed = seed;
  provenance.restarts = options.restarts;
  provenance.tolerance = options.tolerance;
  provenance.evaluations = learned.evaluations;
  provenance.seconds = learned.seconds;
  provenance.dataset_path = std::filesystem::absolute(dataset).string();
  provenance.dataset_fingerprint = fingerprint;
  write_hyperparameter_file(path, learned.search.hyperparameters, standardisation, provenance, overwrite);
}

std::string describe_hyperparameters(const KernelHyperparameters& h) {
  std::vector<std::string> lengthscales;
  for (const double lengthscale : h.lengthscales) lengthscales.push_back(fmt::format("{:.4g}", lengthscale));
  return fmt::format("kernel {}, lengthscales [{}], signal variance {:.4g}, noise variance {:.4g}",
                     kernel_type_name(h.type), fmt::join(lengthscales, ", "), h.signal_variance, h.noise_variance);
}

}  // namespace gpstream::cli

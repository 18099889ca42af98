#include "tools/hyperparameter_learning.h"

#include "engine/core/error.h"
#include "storage/hyper/hyperparameter_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

namespace gpstream::cli {

void HyperparameterLearningOptions::add(po::options_description& options) {
  // clang-format off
  options.add_options()
      ("subset", po::value(&learning.subset)->default_value(learning.subset), "rows the marginal likelihood is computed on (random, without replacement)")
      ("restarts", po::value(&learning.restarts)->default_value(learning.restarts), "random restarts of the optimiser after the fixed start")
      ("hyper-tol", po::value(&learning.tolerance)->default_value(learning.tolerance, "1e-4"), "stop when the objective and every log-hyperparameter change by less")
      ("min-noise", po::value(&learning.min_noise_variance)->default_value(learning.min_noise_variance, "1e-6"), "lower bound of the noise variance (standardised targets)")
      ("max-evaluations", po::value(&learning.max_evaluations)->default_value(learning.max_evaluations), "objective evaluations per start");
  // clang-format on
}

const SubsetLearningOptions& HyperparameterLearningOptions::checked(std::size_t rows,
                                                                    const std::string& dataset) const {
  if (learning.subset < 2) throw UsageError(fmt::format("--subset must be at least 2, not {}", learning.subset));
  if (learning.subset > rows) {
    throw UsageError(fmt::format("--subset {} is larger than the {} rows of '{}'; give --subset {} or less",
                                 learning.subset, rows, dataset, rows));
  }
  if (!(learning.tolerance > 0))
    throw UsageError(fmt::format("--hyper-tol must be positive, not {}", learning.tolerance));
  if (!(learning.min_noise_variance > 0)) {
    throw UsageError(fmt::format("--min-noise must be positive, not {}", learning.min_noise_variance));
  }
  return learning;
}

void SearchTraceObserver::on_start(const IterationReport&) {
  fmt::print(out_, "{:>5} {:>5} {:>16} {:>10} {:>11} {:>11}\n", "start", "eval", "-log p(y|X)", "|grad|inf",
             "signal var", "noise var");
}

void SearchTraceObserver::on_iteration(const IterationReport& report) {
  const std::size_t p = report.point.size();
  fmt::print(out_, "{:>5} {:>5} {:>16.6f} {:>10.3e} {:>11.5g} {:>11.5g}\n", report.done, report.iteration,
             report.objective, report.convergence_measure, p >= 2 ? report.point[p - 2] : 0.0,
             p >= 2 ? report.point[p - 1] : 0.0);
  std::fflush(out_);
}

void save_learned_hyperparameters(const std::string& path, const LearnedOnSubset& learned,
                                  const SubsetLearningOptions& options, std::uint64_t seed, const std::string& dataset,
                                  const std::string& fingerprint, const Standardisation& standardisation,
                                  bool overwrite) {
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

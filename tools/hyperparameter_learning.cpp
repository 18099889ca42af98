#include "tools/hyperparameter_learning.h"

#include "engine/core/error.h"
#include "storage/hyper/hyperparameter_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <boost/algorithm/string/classification.hpp>
#include <boost/algorithm/string/split.hpp>

#include <cmath>
#include <filesystem>

namespace gpstream::cli {

std::vector<double> parse_number_list(const std::string& text, const char* option) {
  std::vector<std::string> words;
  boost::split(words, text, boost::is_any_of(","));
  std::vector<double> values;
  for (const std::string& word : words) {
    try {
      std::size_t used = 0;
      values.push_back(std::stod(word, &used));
      if (used != word.size()) throw std::invalid_argument(word);
    } catch (const std::exception&) {
      throw UsageError(fmt::format("{}: \"{}\" is not a number", option, word));
    }
    if (!std::isfinite(values.back())) throw UsageError(fmt::format("{}: {} is not a finite number", option, word));
  }
  return values;
}

void KernelValueOptions::add(po::options_description& options) {
  // clang-format off
  options.add_options()
      ("lengthscales", po::value(&lengthscales), "comma-separated lengthscales (one per input, or one for all)")
      ("gamma", po::value(&gamma), "comma-separated gamma_l = 1/(2 l^2) instead of --lengthscales")
      ("signal-var", po::value(&signal_variance), "signal variance s^2 (train: 1 unless a --hyper file gives it)")
      ("noise-var", po::value(&noise_variance), "noise variance sigma^2");
  // clang-format on
}

StartingPoint KernelValueOptions::given(const po::variables_map& values) const {
  const bool have_lengthscales = values.count("lengthscales") != 0, have_gamma = values.count("gamma") != 0;
  if (have_lengthscales && have_gamma) throw UsageError("give --lengthscales or --gamma, not both");
  StartingPoint point;
  if (have_lengthscales) point.lengthscales = parse_number_list(lengthscales, "--lengthscales");
  if (have_gamma) {
    // γ = 1/(2ℓ²): the range of γ that gives lengthscales a kernel takes (kernels/kernel.h).
    const double largest = gamma_from_lengthscale(kMinimumLengthscale);
    for (const double value : parse_number_list(gamma, "--gamma")) {
      if (!(value > 0 && value <= largest)) {
        throw UsageError(
            fmt::format("--gamma: values must be positive and at most {:g} (a lengthscale of {:g}), not {}", largest,
                        kMinimumLengthscale, value));
      }
      point.lengthscales.push_back(lengthscale_from_gamma(value));
    }
  }
  for (const double lengthscale : point.lengthscales) {
    if (!(lengthscale > 0))
      throw UsageError(fmt::format("--lengthscales: values must be positive, not {}", lengthscale));
  }
  if (values.count("signal-var") != 0) {
    if (!(signal_variance > 0)) throw UsageError(fmt::format("--signal-var must be positive, not {}", signal_variance));
    point.signal_variance = signal_variance;
  }
  if (values.count("noise-var") != 0) {
    if (!(noise_variance > 0)) throw UsageError(fmt::format("--noise-var must be positive, not {}", noise_variance));
    point.noise_variance = noise_variance;
  }
  return point;
}

void HyperparameterLearningOptions::add(po::options_description& options) {
  // clang-format off
  options.add_options()
      ("init", po::value(&init_file), "start the search from this hyperparameter file (JSON); --lengthscales, --gamma, --signal-var and --noise-var override its values, and values given by neither are informed by the data")
      ("subset", po::value(&learning.subset)->default_value(learning.subset), "rows the marginal likelihood is computed on (random, without replacement)")
      ("restarts", po::value(&learning.restarts)->default_value(learning.restarts), "random restarts of the optimiser after the fixed start")
      ("hyper-tol", po::value(&learning.tolerance)->default_value(learning.tolerance, "1e-4"), "stop when the objective and every log-hyperparameter change by less")
      ("min-noise", po::value(&learning.min_noise_variance)->default_value(learning.min_noise_variance, "1e-6"), "lower bound of the noise variance (standardised targets)")
      ("max-evaluations", po::value(&learning.max_evaluations)->default_value(learning.max_evaluations), "objective evaluations per start");
  // clang-format on
}

LearningPlan plan_learning(const HyperparameterLearningOptions& learning, const KernelValueOptions& kernel_values,
                           const std::string& kernel_name, const po::variables_map& values, std::size_t rows,
                           const std::string& dataset, const Standardisation& standardisation) {
  LearningPlan plan;
  plan.options = learning.learning;
  const SubsetLearningOptions& options = plan.options;
  if (options.subset < 2) throw UsageError(fmt::format("--subset must be at least 2, not {}", options.subset));
  if (options.subset > rows) {
    throw UsageError(fmt::format("--subset {} is larger than the {} rows of '{}'; give --subset {} or less",
                                 options.subset, rows, dataset, rows));
  }
  if (!(options.tolerance > 0))
    throw UsageError(fmt::format("--hyper-tol must be positive, not {}", options.tolerance));
  if (options.max_evaluations < 1) {
    throw UsageError(fmt::format("--max-evaluations must be at least 1, not {}", options.max_evaluations));
  }
  if (!(options.min_noise_variance > 0)) {
    throw UsageError(fmt::format("--min-noise must be positive, not {}", options.min_noise_variance));
  }

  plan.kernel = parse_kernel_type(kernel_name);
  StartingPoint& start = plan.options.start;
  std::vector<std::string> origins;
  if (!learning.init_file.empty()) {
    const HyperparameterFile file = read_hyperparameter_file(learning.init_file);
    if (!given(values, "kernel")) plan.kernel = file.hyperparameters.type;
    const std::size_t columns = standardisation.x_std.size(), count = file.hyperparameters.lengthscales.size();
    if (file.standardisation && file.standardisation->x_std.size() != columns) {
      throw UsageError(fmt::format("--init: '{}' was learned on {} inputs, but '{}' has {}", learning.init_file,
                                   file.standardisation->x_std.size(), dataset, columns));
    }
    if (count > 1 && count != columns) {
      throw UsageError(fmt::format("--init: '{}' has {} lengthscales, but '{}' has {} inputs", learning.init_file,
                                   count, dataset, columns));
    }
    // The file's values are in the standardised units it was learned under.
    const KernelHyperparameters h = file.standardisation
                                        ? restandardised(file.hyperparameters, *file.standardisation, standardisation)
                                        : file.hyperparameters;
    if (default_lengthscale_count(plan.kernel, columns) > 0) start.lengthscales = h.lengthscales;
    start.signal_variance = h.signal_variance;
    start.noise_variance = h.noise_variance;
    origins.push_back("--init " + learning.init_file);
  }
  const StartingPoint command_line = kernel_values.given(values);
  if (!command_line.empty()) origins.emplace_back("the kernel options");
  if (!command_line.lengthscales.empty()) start.lengthscales = command_line.lengthscales;
  if (command_line.signal_variance) start.signal_variance = command_line.signal_variance;
  if (command_line.noise_variance) start.noise_variance = command_line.noise_variance;
  if (plan.kernel == KernelType::histogram_intersection && !command_line.lengthscales.empty())
    throw UsageError("--lengthscales/--gamma: the hik kernel has no lengthscales");
  plan.start_origin = origins.empty() ? "informed by the data" : fmt::format("{}", fmt::join(origins, " and "));
  const bool lengthscales_missing =
      start.lengthscales.empty() && default_lengthscale_count(plan.kernel, standardisation.x_std.size()) > 0;
  if (!origins.empty() && (lengthscales_missing || !start.signal_variance || !start.noise_variance))
    plan.start_origin += ", the rest informed by the data";
  return plan;
}

std::vector<std::string> learning_notes(const LearnedOnSubset& learned, const SubsetLearningOptions& options) {
  std::vector<std::string> notes = values_on_bounds(learned.search.hyperparameters, options.min_noise_variance);
  for (std::string& note : values_at_start(learned.search.starts.at(learned.search.best_start)))
    notes.push_back(std::move(note));
  return notes;
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

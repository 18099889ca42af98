#include "tools/hyperparameter_learning.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

namespace gpstream::cli {

namespace {

// The API's parser (api/job_specification.h); its error is a usage error.
std::vector<double> numbers_given(const std::string& text, std::string_view name) {
  try {
    return parse_number_list(text, name);
  } catch (const InvalidArgument& error) {
    throw UsageError(error.what());
  }
}

}  // namespace

void KernelValueOptions::add(po::options_description& options) {
  add_parameter(options, "length_scale", lengthscales);
  options.add_options()("gamma", po::value(&gamma), "comma-separated gamma_l = 1/(2 l^2) instead of --lengthscales");
  add_parameter(options, "signal_variance", signal_variance);
  add_parameter(options, "noise_variance", noise_variance);
  add_parameter(options, "kernel_parameters", kernel_parameters);
}

StartingPoint KernelValueOptions::given(const po::variables_map& values) const {
  const bool have_lengthscales = values.count("lengthscales") != 0, have_gamma = values.count("gamma") != 0;
  if (have_lengthscales && have_gamma) throw UsageError("give --lengthscales or --gamma, not both");
  StartingPoint point;
  if (have_lengthscales) point.lengthscales = numbers_given(lengthscales, "length_scale");
  if (have_gamma) {
    // γ = 1/(2ℓ²): the range of γ that gives lengthscales a kernel takes (kernels/kernel.h).
    const double largest = gamma_from_lengthscale(kMinimumLengthscale);
    for (const double value : numbers_given(gamma, "gamma")) {
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
  // Their ranges are the schema's, checked as the options were read.
  if (values.count("signal-var") != 0) point.signal_variance = signal_variance;
  if (values.count("noise-var") != 0) point.noise_variance = noise_variance;
  if (values.count("kernel-parameters") != 0) point.family_parameters = parse_named_values(kernel_parameters);
  return point;
}

void HyperparameterLearningOptions::add(po::options_description& options) {
  // Names, defaults and help from the schema's learning group (api/parameter_schema.h).
  add_parameter(options, "init", init_file);
  add_parameter<std::size_t>(options, "subset");
  add_parameter<std::size_t>(options, "restarts");
  add_parameter<double>(options, "hyper_tol");
  add_parameter<double>(options, "min_noise");
  add_parameter<std::size_t>(options, "max_evaluations");
  add_parameter<std::string>(options, "mean");
  add_parameter<std::string>(options, "mean_fit");
  add_parameter<std::string>(options, "learn_on");
  add_parameter<std::size_t>(options, "vecchia_neighbours");
  add_parameter<std::size_t>(options, "max_terms");
  add_parameter<std::size_t>(options, "exact_rows");
  add_parameter<std::size_t>(options, "all_rows_steps");
  add_parameter<std::size_t>(options, "probes");
  add_parameter<double>(options, "all_rows_tol");
}

LearningPlan plan_learning(const KernelValueOptions& kernel_values, const po::variables_map& values,
                           const DatasetDescription& dataset, const std::string& name) {
  try {
    LearningRequest request = job_specification(values).learning();
    request.start = kernel_values.given(values);  // --gamma too
    LearningPlan plan = gpstream::plan_learning(request, dataset, name);
    plan.start_origin = for_command_line(plan.start_origin);
    return plan;
  } catch (const InvalidArgument& error) {
    throw UsageError(error.what());
  }
}

std::vector<std::string> learning_notes(const LearnedModel& learned, const ModelLearningOptions& options) {
  const CandidateFit& best = learned.best();
  std::vector<std::string> notes = values_on_bounds(best.hyperparameters, options.subset.min_noise_variance);
  if (!learned.all_rows && learned.refinements.empty()) {  // else the values moved on from the subset's search
    const HyperparameterSearchResult& search = best.subset.search;
    for (std::string& note : values_at_start(search.starts.at(search.best_start))) notes.push_back(std::move(note));
  }
  return notes;
}

namespace {

// The learned prior mean in the target's units, and the inputs left out of its trend.
std::vector<std::string> describe_mean(const LearnedModel& learned, const Standardisation& standardisation,
                                       const std::vector<std::string>& feature_names) {
  std::vector<std::string> lines;
  const GaussianProcessPrior prior = learned_prior(learned);
  const MeanFunction& mean = prior.mean;
  if (!learned.mean_inputs_left_out.empty()) {
    std::vector<std::string> names;
    for (const std::size_t l : learned.mean_inputs_left_out) {
      names.push_back(l < feature_names.size() ? feature_names[l] : fmt::format("{}", l + 1));
    }
    lines.push_back(
        fmt::format("mean: {} left out of the linear trend (constant, or a combination of the other inputs)",
                    fmt::join(names, ", ")));
  }
  if (!mean.empty()) {
    // In the target's units: y = y_mean + y_std (β₀ + Σ β_l (x_l − x_mean_l) / x_std_l).
    const double y_std = standardisation.y_std;
    double intercept = standardisation.y_mean + (mean.intercept ? y_std * mean.coefficients[0] : 0.0);
    std::vector<std::string> terms;
    for (std::size_t k = 0; k < mean.inputs.size(); ++k) {
      const std::size_t l = mean.inputs[k];
      const double spread = standardisation.x_std.at(l) > 0 ? standardisation.x_std[l] : 1.0;
      const double slope = y_std * mean.coefficients[(mean.intercept ? 1 : 0) + k] / spread;
      intercept -= slope * standardisation.x_mean.at(l);
      terms.push_back(fmt::format("{:+.4g} {}", slope, l < feature_names.size() ? feature_names[l] : "x"));
    }
    lines.push_back(
        fmt::format("mean ({}): {:.4g} {}", mean.describe(feature_names), intercept, fmt::join(terms, " ")));
  }
  return lines;
}

}  // namespace

std::vector<std::string> describe_learning(const LearnedModel& learned, const ModelLearningOptions& options,
                                           const Standardisation& standardisation,
                                           const std::vector<std::string>& feature_names) {
  std::vector<std::string> lines;
  const std::string whole = learned.all_rows ? fmt::format("all {} rows (Vecchia, m = {})", format_count(learned.rows),
                                                           options.vecchia.neighbours)
                                             : std::string("all rows: not used");
  lines.push_back(fmt::format("{:<24} {:>16} {:>24} {:>6} {:>8}  {}", "kernel", "-log p (subset)",
                              "-log p (" + whole + ")", "params", "seconds", "lengthscales; signal, noise variance"));
  // "[ℓ…]; s², σ²" and, for each further term of a sum, " + [ℓ…]; s²".
  const auto values_of = [](const KernelHyperparameters& h) {
    const auto list = [](const std::vector<double>& values) {
      std::vector<std::string> words;
      for (const double value : values) words.push_back(fmt::format("{:.3g}", value));
      return fmt::format("[{}]", fmt::join(words, ", "));
    };
    std::string values;
    for (std::size_t t = 0; t < h.term_count(); ++t) {
      const KernelTerm& term = h.term(t);
      values += fmt::format("{}{}; {:.3g}", t == 0 ? "" : " + ", list(term.lengthscales), term.signal_variance);
      if (!term.family_parameters.empty()) values += fmt::format(" ({})", list(term.family_parameters));
      if (t == 0) values += fmt::format(", {:.3g}", h.noise_variance);
    }
    return values;
  };
  for (std::size_t c = 0; c < learned.candidates.size(); ++c) {
    const CandidateFit& fit = learned.candidates[c];
    const KernelHyperparameters& h = fit.hyperparameters;
    const std::string values = values_of(h);
    const std::string mark =
        !fit.resolved   ? std::string("  (not compared: a term shorter than the rows' spacing)")
        : !fit.compared ? fmt::format("  (not compared: Vecchia off by {:.2g} nats per row)", fit.check.error_per_row)
        : learned.candidates.size() > 1 && c == learned.chosen ? "  <- chosen"
        : fit.raced ? "  (raced: stopped where it could not catch the chosen one)"
                    : "";
    lines.push_back(fmt::format("{:<24} {:>16} {:>24} {:>6} {:>8.1f}  {}{}", fit.name,
                                fit.composed ? std::string("-") : fmt::format("{:.2f}", fit.subset.search.objective),
                                learned.all_rows ? fmt::format("{:.2f}", fit.objective) : std::string("-"),
                                log_parameters(h).size() + fit.mean_coefficients.size(),
                                fit.subset.seconds + fit.all_rows_seconds, values, mark));
  }
  std::vector<std::string> skipped;
  for (const CandidateFit& fit : learned.candidates) {
    if (fit.subset.search.restarts_skipped > 0) skipped.push_back(fit.name);
  }
  if (!skipped.empty()) {
    lines.push_back(
        fmt::format("restarts skipped for {}: a first start trailed the best criterion on the subset by "
                    "more than {:g} nats",
                    fmt::join(skipped, ", "), kRestartMargin));
  }
  if (learned.declined) {
    std::vector<std::string> checks;
    for (const CandidateFit& fit : learned.candidates) {
      checks.push_back(fmt::format("{} {:.2g}", fit.name, fit.check.error_per_row));
    }
    lines.push_back(fmt::format(
        "not refined on all rows: the Vecchia likelihood (m = {}) is off the exact one on {} random rows by ({}) "
        "nats per row, trusted within {:g}: its optimum would not be better than the subset's (more --vecchia-neighbours "
        "may help)",
        options.vecchia.neighbours, format_count(learned.candidates.front().check.rows), fmt::join(checks, ", "),
        options.trusted_error_per_row));
  }
  for (const LearnedOnSubset& rung : learned.refinements) {
    const KernelHyperparameters& h = rung.search.hyperparameters;
    lines.push_back(
        fmt::format("refined {} by the exact likelihood on {} random rows: -log p {:.2f} ({} evaluations, "
                    "{:.1f} s); {}",
                    learned.best().name, format_count(rung.subset_size), rung.search.objective, rung.evaluations,
                    rung.seconds, values_of(h)));
  }
  if (learned.stochastic) {
    const StochasticRefinement& refined = *learned.stochastic;
    const KernelHyperparameters& h = refined.hyperparameters;
    double largest = 0.0;  // of the log-values' standard errors: relative errors of the values
    for (const double error : refined.standard_errors) largest = std::max(largest, error);
    const std::string held = refined.held == 0
                                 ? std::string()
                                 : fmt::format(
                                       ", {} held where the likelihood hardly depends on {} (an irrelevant input's "
                                       "lengthscale)",
                                       refined.held, refined.held == 1 ? "it" : "them");
    lines.push_back(fmt::format(
        "refined {} on all {} rows by the exact likelihood's stochastic gradient ({} probes): {} estimates, {} "
        "solve iterations, {:.1f} s; {}; values within {:.1f} % (one standard error){}; stopped: {}",
        learned.best().name, format_count(learned.rows), options.stochastic.gradient.probes, refined.estimates,
        format_count(refined.iterations), refined.seconds, values_of(h), 100.0 * largest, held, refined.stop_reason));
  }
  for (std::string& line : describe_mean(learned, standardisation, feature_names)) lines.push_back(std::move(line));
  return lines;
}

void SearchTraceObserver::on_start(const IterationReport&) {
  fmt::print(out_, "{:>5} {:>5} {:>16} {:>10} {:>11} {:>11}\n", "start", "eval", "-log p(y|X)", "|grad|inf",
             "signal var", "noise var");
}

void SearchTraceObserver::on_iteration(const IterationReport& report) {
  if (report.inner_iteration > 0) return;  // a solve inside an all-rows estimate: its line comes when it is done
  // An all-rows estimate has a gradient, not a value.
  const std::string objective = report.kind == ReportKind::gradient_estimate ? std::string("(all rows)")
                                                                             : fmt::format("{:.6f}", report.objective);
  // A sum's signal variances, term by term: 0.101+0.094+0.165.
  std::vector<std::string> signal;
  for (const double variance : report.signal_variances) signal.push_back(fmt::format("{:.5g}", variance));
  fmt::print(out_, "{:>5} {:>5} {:>16} {:>10.3e} {:>11} {:>11.5g}\n", report.done, report.iteration, objective,
             report.convergence_measure, fmt::format("{}", fmt::join(signal, "+")), report.noise_variance);
  std::fflush(out_);
}

void SearchProgressObserver::on_iteration(const IterationReport& report) {
  if (report.kind == ReportKind::gradient_estimate) {  // engine/hyper/stochastic_refinement.h
    if (report.inner_iteration == 0) return;
    line_.update(fmt::format(
        "learning on all rows: estimate {} of at most {}, solves at iteration {}, residuals {:.3g}x "
        "their tolerance, elapsed {:.0f}s",
        report.done, report.total, report.inner_iteration, report.convergence_measure, line_.elapsed_seconds()));
    return;
  }
  ++evaluations_;
  line_.update(fmt::format("learning: evaluation {} (search {}), -log p {:.6g}, |gradient|inf {:.2e}, elapsed {:.0f}s",
                           evaluations_, report.done, report.objective, report.convergence_measure,
                           line_.elapsed_seconds()));
}

void SearchProgressObserver::on_warning(const std::string& message) {
  line_.finish();
  fmt::print(stderr, "learning: warning: {}\n", for_command_line(message));
}

SearchCheckpoints command_line_search_checkpoints(std::string path, double every_seconds, SearchCheckpoint identity,
                                                  bool root, SearchCheckpoint replay) {
  return SearchCheckpoints(std::move(path), every_seconds, std::move(identity), root, std::move(replay),
                           [](const std::string& message) {
                             fmt::print(stderr, "warning: {}\n", for_command_line(message));
                           });
}

std::string describe_hyperparameters(const KernelHyperparameters& h) {
  const auto list = [](const std::vector<double>& values) {
    std::vector<std::string> words;
    for (const double value : values) words.push_back(fmt::format("{:.4g}", value));
    return fmt::format("[{}]", fmt::join(words, ", "));
  };
  // "lengthscales [ℓ…], signal variance s²" and the family's own parameters under their names.
  const auto values_of = [&](const KernelTerm& term) {
    std::string values =
        fmt::format("lengthscales {}, signal variance {:.4g}", list(term.lengthscales), term.signal_variance);
    const auto specs = family_parameter_specs(term.type);
    for (std::size_t f = 0; f < specs.size(); ++f)
      values += fmt::format(", {} {:.4g}", specs[f].name, term.family_parameters[f]);
    return values;
  };
  std::string text =
      fmt::format("kernel {}, {}, noise variance {:.4g}", kernel_name(h), values_of(h), h.noise_variance);
  for (std::size_t t = 1; t < h.term_count(); ++t)
    text += fmt::format("; + {}: {}", kernel_type_name(h.term(t).type), values_of(h.term(t)));
  return text;
}

}  // namespace gpstream::cli

#include "api/learning_plan.h"

#include "engine/core/error.h"
#include "storage/dataset/training_rows.h"
#include "storage/hyper/hyperparameter_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

namespace gpstream {
namespace {

// The `init` file's kernel (when `kernel` is not given) and its values as the search's start, in the
// dataset's standardisation; returns the note for the user of inputs matched by position ("" for none).
std::string start_from_file(const LearningRequest& request, bool kernel_given, const DatasetDescription& dataset,
                            const std::string& name, const Standardisation& standardisation,
                            KernelHyperparameters& shape, StartingPoint& start) {
  HyperparameterFile file = read_hyperparameter_file(request.init_file);
  std::string note = match_inputs(file, dataset.feature_names, request.init_file, name);
  if (!kernel_given) {
    shape = file.prior.kernel;
    for (std::size_t t = 1; t < shape.term_count(); ++t) shape.term(t).lengthscales.clear();  // start informed
  }
  const std::size_t columns = dataset.columns, count = file.prior.kernel.lengthscales.size();
  GPSTREAM_CHECK_ARGUMENT(!file.standardisation || file.standardisation->x_std.size() == columns,
                          "`init`: '{}' was learned on {} inputs, but '{}' has {}", request.init_file,
                          file.standardisation ? file.standardisation->x_std.size() : 0, name, columns);
  GPSTREAM_CHECK_ARGUMENT(count <= 1 || count == columns, "`init`: '{}' has {} lengthscales, but '{}' has {} inputs",
                          request.init_file, count, name, columns);
  // The file's values are in the standardised units it was learned under.
  const KernelHyperparameters h = file.standardisation
                                      ? restandardised(file.prior.kernel, *file.standardisation, standardisation)
                                      : file.prior.kernel;
  if (default_lengthscale_count(shape.type, columns) > 0) start.lengthscales = h.lengthscales;
  start.signal_variance = h.signal_variance;
  start.noise_variance = h.noise_variance;
  return note;
}

}  // namespace

LearningPlan plan_learning(const LearningRequest& request, const DatasetDescription& dataset, const std::string& name) {
  const auto given = [&](const char* parameter) {
    return std::find(request.given.begin(), request.given.end(), parameter) != request.given.end();
  };
  LearningPlan plan;
  ModelLearningOptions& model = plan.options;
  const std::size_t rows = dataset.rows;
  GPSTREAM_CHECK(rows > 1, "'{}' has {} rows: a dataset of one row or none has nothing to learn hyperparameters from",
                 name, rows);
  model.subset = request.subset;
  if (model.subset.subset > rows) {
    GPSTREAM_CHECK_ARGUMENT(!given("subset"),
                            "`subset` {} is larger than the {} rows of '{}'; give `subset` {} or less",
                            model.subset.subset, rows, name, rows);
    model.subset.subset = rows;  // the default subset of a small dataset: all of its rows
  }
  model.all_rows = request.learn_on == "all";
  model.vecchia.neighbours = request.vecchia_neighbours;
  model.exact_rows = request.exact_rows;
  model.stochastic = request.stochastic;
  if (model.stochastic.max_steps > 0) {
    const StochasticGradientOptions& gradient = model.stochastic.gradient;
    GPSTREAM_CHECK_ARGUMENT(gradient.probes % gradient.groups == 0, "`probes` must be a multiple of {}, not {}",
                            gradient.groups, gradient.probes);  // (its range is the schema's)
  }
  model.leave_out_redundant_mean_inputs = !given("mean");
  model.input_names = dataset.feature_names;
  try {
    model.mean = parse_mean_function(request.mean, dataset.feature_names);
  } catch (const Error& error) {
    GPSTREAM_THROW_ARGUMENT("`mean`: {}", error.what());
  }
  model.mean_fit = request.mean_fit == "ols" ? ModelLearningOptions::MeanFit::least_squares
                                             : ModelLearningOptions::MeanFit::generalised_least_squares;
  const Standardisation standardisation = dataset_standardisation(dataset);

  KernelHyperparameters shape;  // the kernel's types; its values are what is learned
  const bool automatic = request.kernel == kAutomaticKernel;
  if (!automatic) shape = parse_kernel_shape(request.kernel);
  StartingPoint& start = model.subset.start;
  std::vector<std::string> origins;
  if (!request.init_file.empty()) {
    const std::string note = start_from_file(request, given("kernel"), dataset, name, standardisation, shape, start);
    if (!note.empty()) plan.notes.push_back(note);
    origins.push_back("`init` " + request.init_file);
  }
  const bool compare = automatic && (request.init_file.empty() || given("kernel"));
  if (compare) {
    model.kernels.clear();
    for (const KernelType type : kAutoKernelCandidates)
      model.kernels.push_back(KernelHyperparameters(type, {}, 1.0, 0.1));
    model.max_terms = request.max_terms;
  } else {
    GPSTREAM_CHECK_ARGUMENT(!given("max_terms"), "`max_terms` is for `kernel` auto");
    model.kernels = {shape};
  }
  const StartingPoint& asked = request.start;
  if (!asked.empty()) origins.emplace_back("the kernel options");
  if (!asked.lengthscales.empty()) start.lengthscales = asked.lengthscales;
  if (asked.signal_variance) start.signal_variance = asked.signal_variance;
  if (asked.noise_variance) start.noise_variance = asked.noise_variance;
  if (!asked.family_parameters.empty()) start.family_parameters = asked.family_parameters;
  GPSTREAM_CHECK_ARGUMENT(compare || default_lengthscale_count(shape.type, 1) > 0 || asked.lengthscales.empty(),
                          "`length_scale`: the {} kernel has no lengthscales", kernel_type_name(shape.type));
  plan.start_origin = origins.empty() ? "informed by the data" : fmt::format("{}", fmt::join(origins, " and "));
  const bool lengthscales_missing =
      start.lengthscales.empty() && default_lengthscale_count(shape.type, dataset.columns) > 0;
  if (!origins.empty() && (lengthscales_missing || !start.signal_variance || !start.noise_variance))
    plan.start_origin += ", the rest informed by the data";
  return plan;
}

void save_learned_hyperparameters(const std::string& path, const LearnedModel& learned,
                                  const ModelLearningOptions& options, std::uint64_t seed, const std::string& dataset,
                                  const std::string& fingerprint, const Standardisation& standardisation,
                                  const std::vector<std::string>& input_names, bool overwrite) {
  const CandidateFit& best = learned.best();
  HyperparameterProvenance provenance;
  provenance.negative_log_marginal_likelihood = best.objective;
  std::string objective = learned.all_rows ? fmt::format(
                                                 "Vecchia, {} neighbours per row, on all rows (from the exact "
                                                 "likelihood's optimum on the subset)",
                                                 options.vecchia.neighbours)
                          : learned.refinements.empty()
                              ? std::string("exact, on a random subset")
                              : fmt::format(
                                    "exact, on a random subset of {} rows (refined from the optimum on {} "
                                    "rows)",
                                    learned.refinements.back().subset_size, best.subset.subset_size);
  if (learned.stochastic) {
    objective += fmt::format(
        "; the values then refined on all {} rows by the exact likelihood's stochastic "
        "gradient ({} estimates), where its value is not computed",
        learned.rows, learned.stochastic->estimates);
  }
  provenance.objective = objective;
  provenance.rows = learned.rows;
  for (const CandidateFit& fit : learned.candidates) provenance.candidates.emplace_back(fit.name, fit.objective);
  provenance.subset_size = best.subset.subset_size;
  provenance.seed = seed;
  provenance.restarts = options.subset.restarts;
  provenance.tolerance = options.subset.tolerance;
  provenance.evaluations = learned.evaluations;
  provenance.seconds = learned.seconds;
  provenance.dataset_path = std::filesystem::absolute(dataset).string();
  provenance.dataset_fingerprint = fingerprint;
  provenance.input_names = input_names;
  write_hyperparameter_file(path, learned_prior(learned), standardisation, provenance, overwrite);
}

}  // namespace gpstream

// gpstream hyper DATA.h5 -o HYPER.json [--kernel se-ard] [--subset 2000] [--restarts 2] [--init START.json]
#include "api/job_interrupted.h"
#include "api/training.h"
#include "tools/commands.h"
#include "tools/hyperparameter_learning.h"
#include "tools/interrupt_handler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <optional>

namespace gpstream::cli {

namespace {

struct HyperOptions {
  std::string dataset, output, kernel, checkpoint;
  double checkpoint_every = 0;
  std::uint64_t seed = 0;
  HyperparameterLearningOptions learning;
  KernelValueOptions start_values;
  ComputeOptions compute;
};

void describe_command(CommandSpec& spec, HyperOptions& options) {
  spec.name = "hyper";
  spec.usage = "gpstream hyper DATA.h5 -o HYPER.json [options]";
  spec.description =
      "Learn the model: the kernel (--kernel auto compares rbf and the Matern family by evidence), its\n"
      "hyperparameters and the prior mean (--mean, linear by default, fitted by least squares). Each\n"
      "candidate is fitted by the exact marginal likelihood on a random subset of rows (L-BFGS from\n"
      "NLopt, in log-space, with bounds and random restarts), then refined on all rows by the Vecchia\n"
      "likelihood (--learn-on all; each row conditioned on its --vecchia-neighbours nearest earlier rows) where\n"
      "that is within 0.01 nats per row of the exact likelihood on a sample; else the chosen candidate\n"
      "is refined by the exact likelihood on subsets of twice the rows, up to --exact-rows (8000), then\n"
      "on all rows by Newton steps on its stochastic gradient (--all-rows-steps, --probes).\n"
      "The lowest -log p, penalised by the parameters' count (BIC), wins. Inputs and targets are standardised\n"
      "with the dataset's statistics, which the file records; `gpstream train --hyper HYPER.json` trains\n"
      "with the result. Prints the objective at every evaluation, the table of kernels compared, then\n"
      "the learned values, and notes when a value ends on a bound of the search. See docs/model.md.";
  // clang-format off
  spec.options.add_options()
      ("dataset", po::value(&options.dataset)->required(), "training dataset (from gpstream convert or generate)")
      ("output,o", po::value(&options.output)->required(), "hyperparameter file to write (JSON)")
      ("checkpoint", po::value(&options.checkpoint), "save the search's evaluations to this file every --checkpoint-every seconds and when interrupted; the same command run again continues the search from them, to the same answer")
      ("force", "overwrite the output if it exists")
      ("quiet,q", "print only the learned values, not the objective trace");
  // clang-format on
  // The schema's, as train --learn-hyper takes them: the same seed learns the same model.
  add_parameter(spec.options, "kernel", options.kernel);
  add_parameter(spec.options, "random_state", options.seed);
  add_parameter(spec.options, "checkpoint_every", options.checkpoint_every);
  options.learning.add(spec.options);
  po::options_description start_options("Starting point (standardised units; over --init's values)");
  options.start_values.add(start_options);
  spec.options.add(start_options);
  options.compute.add(spec.options);
  spec.positional.add("dataset", 1);
}

// The search a --checkpoint file holds, when it is this one (the same arguments on the same data) or
// Python's on the same data (the journal checks its points: api/search_checkpoints.h); none for no file.
// Another search's file, or a file that is not a search checkpoint, is not ours to replace.
SearchCheckpoint continued_search(const std::string& checkpoint, const SearchCheckpoint& identity, bool overwrite) {
  const bool taken = !checkpoint.empty() && resolve_output(checkpoint, "--checkpoint").kind == OutputTarget::Kind::regular;
  if (taken && !is_search_checkpoint(checkpoint)) {
    GPSTREAM_CHECK(overwrite,
                   "--checkpoint: '{}' already exists and is not a search checkpoint; give another path, or --force "
                   "to replace it",
                   checkpoint);
    return {};
  }
  if (!taken) return {};
  SearchCheckpoint saved = read_search_checkpoint(checkpoint);
  const bool same =
      (saved.command == identity.command && saved.arguments == identity.arguments) || saved.command == kPythonSearch;
  GPSTREAM_CHECK(same && saved.dataset_fingerprint == identity.dataset_fingerprint,
                 "--checkpoint: '{}' holds another search (gpstream {} {}); give another file, or remove it",
                 checkpoint, saved.command, fmt::join(saved.arguments, " "));
  fmt::print(stderr, "hyper: continuing the search saved in '{}' ({} evaluations)\n", checkpoint, saved.entries.size());
  return saved;
}

// The starts of the chosen kernel's search, the table of kernels compared, the learned values, the notes.
void report(const LearnedModel& learned, const LearningPlan& plan, const DatasetDescription& description,
            const std::string& output) {
  const ModelLearningOptions& options = plan.options;
  const CandidateFit& best = learned.best();
  const HyperparameterSearchResult& search = best.subset.search;
  for (std::size_t i = 0; i < search.starts.size(); ++i) {
    const SearchStart& start = search.starts[i];
    fmt::print("start {}: -log p(y|X) {:.6f} after {} evaluations ({}){}\n", i, start.objective, start.evaluations,
               start.stop_reason, i == search.best_start ? "  <- best" : "");
    fmt::print("  from {}{}\n", describe_hyperparameters(start.initial),
               i == 0 ? fmt::format(" ({})", plan.start_origin) : std::string(" (a random restart around start 0)"));
  }
  const Standardisation standardisation = dataset_standardisation(description);
  for (const std::string& line : describe_learning(learned, options, standardisation, description.feature_names)) {
    fmt::print("{}\n", line);
  }
  const KernelHyperparameters& h = best.hyperparameters;
  fmt::print("learned on {} of {} rows in {:.1f} s: {}\n", learned.rows, description.rows, learned.seconds,
             describe_hyperparameters(h));
  std::vector<std::string> gamma;
  for (const double lengthscale : h.lengthscales)
    gamma.push_back(fmt::format("{:.4g}", gamma_from_lengthscale(lengthscale)));
  // After all-rows steps the objective is not computed (they estimate its gradient only): the last value is the
  // one before them, on fewer rows.
  fmt::print("gamma [{}]; -log p(y|X) {:.6f}{}; wrote {}\n", fmt::join(gamma, ", "), best.objective,
             learned.stochastic ? " before the all-rows steps (not computed after them)" : "", output);
  for (const std::string& note : learning_notes(learned, options)) fmt::print("note: {}\n", note);
}

}  // namespace

int run_hyper(const std::vector<std::string>& args) {
  CommandSpec spec;
  HyperOptions options;
  describe_command(spec, options);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;
  const std::string& dataset = options.dataset;
  const std::string& output = options.output;
  const std::string& checkpoint = options.checkpoint;

  // Validate.
  if (!options.kernel.empty() && options.kernel != kAutomaticKernel) parse_kernel_shape(options.kernel);  // named
  const bool overwrite = values.count("force") != 0;
  check_new_output(output, "-o", overwrite);
  check_distinct_files({{"the dataset", dataset}, {"--init", options.learning.init_file}},
                       {{"-o", output}, {"--checkpoint", checkpoint}});
  if (!checkpoint.empty()) check_output_directory(checkpoint, "--checkpoint");

  // Configure.
  Context context(options.compute.context_settings(options.seed));
  const DatasetDescription description = read_dataset_description(dataset);
  const Standardisation standardisation = dataset_standardisation(description);
  const LearningPlan plan = plan_learning(options.start_values, values, description, dataset);
  if (values.count("quiet") == 0) {
    for (const std::string& note : plan.notes) fmt::print(stderr, "hyper: note: {}\n", note);
  }

  // Run.
  const ContextInterrupts interrupts(context);
  SearchTraceObserver trace(stdout);
  std::optional<Context::ObserverScope> observe;
  if (values.count("quiet") == 0) observe.emplace(context, std::vector<RunObserver*>{&trace});
  const SearchCheckpoint identity{"hyper", args, description.fingerprint, {}};
  SearchCheckpoints checkpoints = command_line_search_checkpoints(checkpoint, options.checkpoint_every, identity, true,
                                                                  continued_search(checkpoint, identity, overwrite));
  const LearnedModel learned = [&] {
    try {
      return checkpoints.run([&](SearchJournal& journal) {
        return learn_hyperparameters(context, TrainingData::file(dataset), standardisation, plan.options, &journal);
      });
    } catch (const JobInterrupted& stopped) {
      if (stopped.checkpoint_path.empty()) throw Cancelled(stopped.what());
      throw Cancelled(fmt::format("{}; {} evaluations saved in '{}': run the same command again to continue",
                                  stopped.what(), stopped.evaluations_saved, checkpoint));
    }
  }();
  save_learned_hyperparameters(output, learned, plan.options, options.seed, dataset, description.fingerprint,
                               standardisation, description.feature_names, overwrite);
  report(learned, plan, description, output);
  return 0;
}

}  // namespace gpstream::cli

// train's options: their description and checks, and the job's
// configuration made from them (a fresh run) or from a checkpoint (a resumed one).
#include "tools/train_options.h"

#include "api/job_configuration.h"
#include "api/training.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <limits>

namespace gpstream::cli {
namespace {

// The prior from --hyper (its inputs matched to the dataset's by name), its kernel overridden by any
// hyperparameter given on the command line.
GaussianProcessPrior prior_from(const TrainOptions& options, const po::variables_map& values,
                                const DatasetDescription& dataset,
                                std::optional<Standardisation>& file_standardisation) {
  GaussianProcessPrior prior;
  KernelHyperparameters& hyper = prior.kernel;
  bool have_lengthscales = false, have_noise = false;
  if (!options.hyper_file.empty()) {
    HyperparameterFile file = read_hyperparameter_file(options.hyper_file);
    const std::string note = match_inputs(file, dataset.feature_names, options.hyper_file, options.dataset);
    if (!note.empty() && !options.quiet) fmt::print(stderr, "train: note: {}\n", note);
    prior = std::move(file.prior);
    file_standardisation = file.standardisation;
    have_lengthscales = have_noise = true;
  }
  if (given(values, "kernel")) hyper.set_type(parse_kernel_type(options.kernel));  // else the file's, or rbf
  const StartingPoint command_line = options.kernel_values.given(values);
  if (!command_line.lengthscales.empty()) {
    hyper.lengthscales = command_line.lengthscales;
    have_lengthscales = true;
  }
  if (command_line.signal_variance) hyper.signal_variance = *command_line.signal_variance;
  set_family_parameters(hyper, command_line.family_parameters);
  if (command_line.noise_variance) {
    hyper.noise_variance = *command_line.noise_variance;
    have_noise = true;
  }
  if (default_lengthscale_count(hyper.type, 1) == 0) {
    if (!command_line.lengthscales.empty()) {
      throw UsageError(
          fmt::format("--lengthscales/--gamma: the {} kernel has no lengthscales", kernel_type_name(hyper.type)));
    }
    hyper.lengthscales.clear();
    have_lengthscales = true;
  }
  if (!have_lengthscales) throw UsageError("give the kernel's --lengthscales (or --gamma), or a --hyper file");
  if (!have_noise) throw UsageError("give the --noise-var, or a --hyper file");
  return prior;
}

// A resumed run keeps the configuration it was started with.
void check_resume_compatible(const TrainOptions& options, const po::variables_map& values,
                             const TrainingConfiguration& saved, const std::string& checkpoint) {
  auto conflict = [&](const char* option, const std::string& given, const std::string& kept) {
    throw Error(
        fmt::format("--{}{} conflicts with checkpoint '{}', which was started with {}; a resumed run keeps "
                    "its configuration (start a new run without --resume to change it)",
                    option, given.empty() ? "" : " " + given, checkpoint, kept));
  };
  // The value as the user typed it (a flag has none).
  auto typed = [&](const char* option) -> std::string {
    const po::variable_value& value = values[option];
    if (value.empty()) return "";
    if (const auto* text = boost::any_cast<std::string>(&value.value())) return *text;
    if (const auto* number = boost::any_cast<double>(&value.value())) return fmt::format("{:g}", *number);
    if (const auto* count = boost::any_cast<std::size_t>(&value.value())) return std::to_string(*count);
    return "";
  };
  auto given = [&](const char* option) { return cli::given(values, option); };
  if (given("solver") && options.solver != saved.solver.name) conflict("solver", options.solver, saved.solver.name);
  if (given("model") && options.model != saved.solver.name) conflict("model", options.model, saved.solver.name);
  if (given("basis") && options.basis != saved.solver.active_set_size) {
    conflict("basis", std::to_string(options.basis), std::to_string(saved.solver.active_set_size));
  }
  if (given("active-set") && options.active_set_size != saved.solver.active_set_size) {
    conflict("active-set", std::to_string(options.active_set_size), std::to_string(saved.solver.active_set_size));
  }
  if (given("candidates") && options.candidates != saved.solver.candidates) {
    conflict("candidates", std::to_string(options.candidates), std::to_string(saved.solver.candidates));
  }
  if (given("subspace-steps") && options.subspace_steps != saved.solver.subspace_steps) {
    conflict("subspace-steps", std::to_string(options.subspace_steps), std::to_string(saved.solver.subspace_steps));
  }
  if (given("precision") && options.precision != saved.solver.precision)
    conflict("precision", options.precision, saved.solver.precision);
  if (given("seed") && options.seed != saved.seed)
    conflict("seed", std::to_string(options.seed), std::to_string(saved.seed));
  for (const char* option : {"kernel", "hyper", "lengthscales", "gamma", "signal-var", "noise-var", "kernel-parameters",
                             "no-standardise", "learn-hyper", "init"}) {
    if (given(option)) conflict(option, typed(option), "the kernel and standardisation saved in it");
  }
  for (const char* option : {"info-pivots", "objective", "fixed-hyper", "novelty", "passes"}) {
    if (given(option)) conflict(option, typed(option), "the model's settings saved in it");
  }
}

// On resume: the stopping rule, output, log and checkpoint cadence given again replace the checkpoint's
// (a fresh job's are api/job_configuration.h's).
void override_job(TrainingJob& job, const TrainOptions& options, const po::variables_map& values,
                  const TrainingMethod& method) {
  const auto given = [&](const char* option) { return cli::given(values, option); };
  const std::string saved_output = job.output_path;
  if (method.stops_at_tol() && given("tol")) job.stopping.tolerance = options.tolerance;
  if (!method.stops_at_tol() && given("gap")) job.stopping.tolerance = options.gap;
  if (given("max-iter")) {
    job.stopping.max_iterations =
        options.max_iterations > 0 ? options.max_iterations : std::numeric_limits<std::uint64_t>::max();
  }
  if (given("time-limit")) {
    job.stopping.time_limit_seconds =
        options.time_limit > 0 ? options.time_limit : std::numeric_limits<double>::infinity();
  }
  if (given("refresh-every")) job.stopping.refresh_every = options.refresh_every;
  if (given("output")) job.output_path = std::filesystem::absolute(options.output).string();
  // --force covers the outputs of the command that gives it: a resumed job keeps its launch's for the
  // model it was launched to write, and a model path new to the job needs the resumed command's own.
  const bool force = values.count("force") != 0;
  if (given("output") && !same_file(job.output_path, saved_output)) {
    job.overwrite_output = force;
  } else {
    job.overwrite_output = job.overwrite_output || force;
  }
  if (given("log"))
    job.log_path = options.log.empty() ? std::string() : std::filesystem::absolute(options.log).string();
  if (given("checkpoint-every")) job.checkpoint_every_seconds = options.checkpoint_every;
}

}  // namespace

const TrainingMethod& method_of(const TrainingConfiguration& configuration) {
  const TrainingMethod* method = find_training_method(configuration.solver.name);
  GPSTREAM_CHECK(method != nullptr, "unknown training method \"{}\"", configuration.solver.name);
  return *method;
}

TrainingConfiguration configure_fresh(TrainOptions& options, const po::variables_map& values) {
  if (options.dataset.empty()) throw UsageError("give the training dataset (or --resume CHECKPOINT)");
  const DatasetDescription description = read_dataset_description(options.dataset);
  // The job as the schema's pairs: its rules and parameters are the API's (api/job_specification.h).
  const JobSpecification job = job_specification(values);
  FreshJobParameters parameters;
  try {
    job.check_rules();
    parameters = job.fresh_job();
  } catch (const InvalidArgument& error) {
    throw UsageError(error.what());
  }
  if (values.count("learn-hyper") != 0) {
    if (values.count("hyper") != 0) {
      throw UsageError(
          "give --learn-hyper or --hyper, not both (to start the search from a file's values, give --init FILE)");
    }
  } else {
    if (!options.save_hyper.empty()) throw UsageError("--save-hyper needs --learn-hyper");
    parameters.prior = prior_from(options, values, description, parameters.prior_units);
  }
  // The method: --solver for the exact GP (--model dense), else --model; the schema's choices (checked as the
  // options were read).
  const TrainingMethod* method = find_training_method(parameters.method);
  GPSTREAM_CHECK(method != nullptr, "no training method \"{}\"", parameters.method);
  if (!method->dense()) {
    if (!method->iterative() && !options.checkpoint.empty()) {
      throw UsageError(
          fmt::format("--checkpoint: --model {} trains in one or two passes over the data and has nothing "
                      "to checkpoint (sgma, mpgp, sggp, cholqr and online do)",
                      options.model));
    }
  }
  if (!options.hyper_file.empty()) {  // a file learned on other data (make_kernel checks the rest)
    const KernelHyperparameters& kernel = parameters.prior.kernel;
    const std::size_t lengthscales = kernel.lengthscales.size();
    GPSTREAM_CHECK(lengthscales == default_lengthscale_count(kernel.type, description.columns) || lengthscales == 1 ||
                       lengthscales == description.columns,
                   "--hyper: '{}' has {} lengthscales, but '{}' has {} inputs; learn hyperparameters for this "
                   "dataset with gpstream hyper",
                   options.hyper_file, lengthscales, options.dataset, description.columns);
  }
  parameters.output_path = options.output;
  parameters.log_path = options.log;
  parameters.overwrite_output = values.count("force") != 0;
  try {
    return configure_fresh_job(parameters, description);
  } catch (const InvalidArgument& error) {
    throw UsageError(error.what());
  }
}

Checkpoint configure_resumed(TrainOptions& options, const po::variables_map& values) {
  Checkpoint checkpoint = read_training_checkpoint(options.resume);
  check_resume_compatible(options, values, checkpoint.configuration, options.resume);
  TrainingConfiguration& configuration = checkpoint.configuration;
  if (options.dataset.empty()) options.dataset = configuration.dataset_path;
  GPSTREAM_CHECK(!configuration.job.output_path.empty() || !options.output.empty(),
                 "checkpoint '{}' was written by an older gpstream that did not record the output: give -o MODEL.h5 "
                 "(and --tol, --max-iter, --time-limit as the job was launched)",
                 options.resume);
  options.resumed_log = configuration.job.log_path;
  check_job_rules_of({.method = configuration.solver.name, .resumed = true, .given = given_parameters(values)});
  override_job(configuration.job, options, values, method_of(configuration));
  return checkpoint;
}

void describe_command(CommandSpec& spec, TrainOptions& options) {
  spec.name = "train";
  spec.usage = "gpstream train DATA.h5 -o MODEL.h5 [options]\n       gpstream train --resume CHECKPOINT.h5 -o MODEL.h5";
  spec.description =
      "Train an exact GP: solve (K + noise I) alpha = y without forming the n x n matrix, by greedy block\n"
      "coordinate descent (gbcd, Bo & Sminchisescu 2008) or a reference solver. Inputs and targets are\n"
      "standardised with the dataset's statistics (or those of the --hyper file). Ctrl-C writes a\n"
      "checkpoint (with --checkpoint) and prints the command that resumes the run.";
  // The job's options: names, defaults and help from the schema (api/parameter_schema.h), in its order.
  po::options_description& out = spec.options;
  out.add_options()("dataset", po::value(&options.dataset), "training dataset (from gpstream convert or generate)")(
      "output,o", po::value(&options.output),
      "model file to write (on --resume: the one the job was launched with, unless given)");
  add_parameter(out, "solver", options.solver);
  add_parameter(out, "model", options.model);
  add_parameter(out, "basis_size", options.basis);
  add_parameter(out, "gap", options.gap);
  add_parameter<std::size_t>(out, "info_pivots");
  add_parameter<std::string>(out, "objective");
  add_parameter_switch(out, "fixed_hyper");
  add_parameter<double>(out, "novelty");
  add_parameter<std::size_t>(out, "passes");
  add_parameter(out, "active_set_size", options.active_set_size);
  add_parameter(out, "candidates", options.candidates);
  add_parameter(out, "subspace_steps", options.subspace_steps);
  add_parameter(out, "precision", options.precision);
  add_parameter(out, "random_state", options.seed);
  add_parameter(out, "tol", options.tolerance);
  add_parameter(out, "max_iter", options.max_iterations);
  add_parameter(out, "time_limit", options.time_limit);
  add_parameter(out, "refresh_every", options.refresh_every);
  add_parameter(out, "kernel", options.kernel);
  // clang-format off
  out.add_options()
      ("hyper", po::value(&options.hyper_file), "hyperparameter file (JSON, from gpstream hyper or as ../shared/data/hyper/*.json)")
      ("save-hyper", po::value(&options.save_hyper), "with --learn-hyper: also write the learned values to this JSON file")
      ("checkpoint", po::value(&options.checkpoint), "checkpoint file, written periodically and when the run stops");
  add_parameter_switch(out, "learn_hyper");
  add_parameter_switch(out, "standardise");
  add_parameter(out, "checkpoint_every", options.checkpoint_every);
  out.add_options()
      ("resume", po::value(&options.resume), "continue the job saved in this checkpoint: its stopping rule, output, log and checkpoint cadence, unless given again")
      ("log", po::value(&options.log), "training log (CSV: iteration, seconds, objective, convergence measure (|g|/|y| for the dense solvers), kernel evaluations, gradient drift, cache lookups, hits, hits from disk, bytes read from disk, estimated core-seconds saved)")
      ("force", "overwrite the outputs (-o, --checkpoint, --log, --save-hyper) if they exist; never a file the command reads")
      ("quiet,q", "no progress on stderr")
      ("profile", "print where an iteration's time goes, phase by phase (GBCD's selection, the block solve and product, the past steps), at the end");
  // clang-format on
  po::options_description kernel_options(
      "Kernel values (standardised units; over a --hyper file's, or with --learn-hyper the search's start)");
  options.kernel_values.add(kernel_options);
  spec.options.add(kernel_options);
  po::options_description cache_options("Kernel-column cache");
  options.cache.add(cache_options);
  spec.options.add(cache_options);
  options.compute.add(spec.options);
  po::options_description learning_options("Hyperparameter learning (with --learn-hyper)");
  options.learning.add(learning_options);
  spec.options.add(learning_options);
  spec.positional.add("dataset", 1);
}

void validate(TrainOptions& options, const po::variables_map& values) {
  options.quiet = values.count("quiet") != 0;
  options.profile = values.count("profile") != 0;
  if (options.resume.empty() && options.output.empty())
    throw UsageError("give the model file to write with -o MODEL.h5");
  options.cache.validate(values);
}

}  // namespace gpstream::cli

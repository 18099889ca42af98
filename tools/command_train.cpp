// gpstream train DATA.h5 -o MODEL.h5 [--solver gbcd ...]
// gpstream train --resume CHECKPOINT.h5 -o MODEL.h5
#include "engine/core/error.h"
#include "engine/data/row_source_utilities.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/solver_driver.h"
#include "engine/training/training_method.h"
#include "engine/sparse/inducing_objective.h"
#include "storage/checkpoint/checkpoint_file.h"
#include "storage/checkpoint/search_checkpoint.h"
#include "storage/hyper/hyperparameter_file.h"
#include "storage/model/dense_model_file.h"
#include "storage/model/sparse_model_file.h"
#include "storage/output/atomic_output_file.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/hyperparameter_learning.h"
#include "tools/interrupt_handler.h"
#include "storage/dataset/training_rows.h"
#include "tools/training_observers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>

namespace gpstream::cli {
namespace {

struct TrainOptions {
  std::string dataset, output, solver, model, kernel, hyper_file, checkpoint, resume, log, save_hyper;
  std::string objective = "var";
  ColumnCacheOptions cache;
  std::size_t active_set_size = 500, candidates = 60, basis = 1000, information_pivots = 16, passes = 1;
  double novelty = 1e-6;
  std::uint64_t seed = 1, max_iterations = 0, refresh_every = 0;
  double tolerance = 1e-4, time_limit = 0, checkpoint_every = 60, gap = 0.025;
  ComputeOptions compute;
  KernelValueOptions kernel_values;
  HyperparameterLearningOptions learning;
  bool quiet = false;
};

// The kernel from --hyper, overridden by any hyperparameter given on the command line.
KernelHyperparameters hyperparameters_from(const TrainOptions& options, const po::variables_map& values,
                                           std::optional<Standardisation>& file_standardisation) {
  KernelHyperparameters hyper;
  bool have_lengthscales = false, have_noise = false;
  if (!options.hyper_file.empty()) {
    HyperparameterFile file = read_hyperparameter_file(options.hyper_file);
    hyper = file.hyperparameters;
    file_standardisation = file.standardisation;
    have_lengthscales = have_noise = true;
  }
  if (given(values, "kernel") || options.hyper_file.empty()) hyper.type = parse_kernel_type(options.kernel);
  const StartingPoint command_line = options.kernel_values.given(values);
  if (!command_line.lengthscales.empty()) {
    hyper.lengthscales = command_line.lengthscales;
    have_lengthscales = true;
  }
  if (command_line.signal_variance) hyper.signal_variance = *command_line.signal_variance;
  if (command_line.noise_variance) {
    hyper.noise_variance = *command_line.noise_variance;
    have_noise = true;
  }
  if (hyper.type == KernelType::histogram_intersection) {
    if (!command_line.lengthscales.empty())
      throw UsageError("--lengthscales/--gamma: the hik kernel has no lengthscales");
    hyper.lengthscales.clear();
    have_lengthscales = true;
  }
  if (!have_lengthscales) throw UsageError("give the kernel's --lengthscales (or --gamma), or a --hyper file");
  if (!have_noise) throw UsageError("give the --noise-var, or a --hyper file");
  return hyper;
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
  if (given("seed") && options.seed != saved.seed)
    conflict("seed", std::to_string(options.seed), std::to_string(saved.seed));
  for (const char* option : {"kernel", "hyper", "lengthscales", "gamma", "signal-var", "noise-var", "no-standardise",
                             "learn-hyper", "init"}) {
    if (given(option)) conflict(option, typed(option), "the kernel and standardisation saved in it");
  }
  for (const char* option : {"info-pivots", "objective", "fixed-hyper", "novelty", "passes"}) {
    if (given(option)) conflict(option, typed(option), "the model's settings saved in it");
  }
}

// The registry's entry of a configuration's method (a checkpoint's name is checked when it is read).
const TrainingMethod& method_of(const TrainingConfiguration& configuration) {
  const TrainingMethod* method = find_training_method(configuration.solver.name);
  GPSTREAM_CHECK(method != nullptr, "unknown training method \"{}\"", configuration.solver.name);
  return *method;
}

// Which option sets a method's tolerance, from what the engine says it means.
bool stops_at_tol(const TrainingMethod& method) {
  return method.tolerance == ToleranceMeaning::gradient_norm || method.tolerance == ToleranceMeaning::relative_decrease;
}
bool stops_at_gap(const TrainingMethod& method) { return method.tolerance == ToleranceMeaning::gap; }

// The job's stopping rule, output, log and checkpoint cadence: all from the
// options for a fresh run; on resume, only those given again replace the
// checkpoint's.
void set_job(TrainingJob& job, const TrainOptions& options, const po::variables_map& values,
             const TrainingMethod& method, bool fresh) {
  auto set = [&](const char* option) { return fresh || given(values, option); };
  if (given(values, "tol") && !stops_at_tol(method)) {
    throw UsageError(fmt::format("--tol is for the dense solvers and cholqr; {}",
                                 stops_at_gap(method) ? std::string(method.name) + " stops at --gap"
                                                      : fmt::format("--model {} runs to --basis", method.name)));
  }
  if (given(values, "gap") && !stops_at_gap(method)) throw UsageError("--gap is for --model sggp");
  if (stops_at_tol(method) && set("tol")) job.stopping.tolerance = options.tolerance;
  if (!stops_at_tol(method) && set("gap")) job.stopping.tolerance = options.gap;
  if (set("max-iter")) {
    const bool limited = values.count("max-iter") != 0 && options.max_iterations > 0;
    job.stopping.max_iterations = limited ? options.max_iterations : std::numeric_limits<std::uint64_t>::max();
  }
  if (set("time-limit")) {
    const bool limited = values.count("time-limit") != 0 && options.time_limit > 0;
    job.stopping.time_limit_seconds = limited ? options.time_limit : std::numeric_limits<double>::infinity();
  }
  if (set("refresh-every")) job.stopping.refresh_every = options.refresh_every;
  if (set("output")) job.output_path = std::filesystem::absolute(options.output).string();
  if (set("force")) job.overwrite_output = values.count("force") != 0;
  if (set("log")) job.log_path = options.log.empty() ? std::string() : std::filesystem::absolute(options.log).string();
  if (set("checkpoint-every")) job.checkpoint_every_seconds = options.checkpoint_every;
}

// What a model file says about the run that made it, dense or sparse.
ModelDescription describe_model(const TrainingConfiguration& configuration, const DatasetDescription& dataset,
                                TrainingSummary training) {
  ModelDescription description;
  description.hyperparameters = configuration.hyperparameters;
  description.standardisation = configuration.standardisation;
  description.dataset_path = configuration.dataset_path;
  description.dataset_fingerprint = configuration.dataset_fingerprint;
  description.rows = dataset.rows;
  description.columns = dataset.columns;
  description.feature_names = dataset.feature_names;
  description.target_name = dataset.target_name;
  description.training = std::move(training);
  return description;
}

// A fresh run's configuration, from the options (and the dataset's description).
TrainingConfiguration configure_fresh(TrainOptions& options, const po::variables_map& values) {
  if (options.dataset.empty()) throw UsageError("give the training dataset (or --resume CHECKPOINT)");
  TrainingConfiguration configuration;
  std::optional<Standardisation> file_standardisation;
  const bool learn = values.count("learn-hyper") != 0;
  if (learn) {
    if (values.count("hyper") != 0) {
      throw UsageError(
          "give --learn-hyper or --hyper, not both (to start the search from a file's values, give --init FILE)");
    }
    if (values.count("no-standardise") != 0)
      throw UsageError("--learn-hyper learns on standardised data; drop --no-standardise");
  } else {
    if (!options.save_hyper.empty()) throw UsageError("--save-hyper needs --learn-hyper");
    if (const auto option = HyperparameterLearningOptions::first_given(values)) {
      throw UsageError(fmt::format("--{} is an option of learning: it needs --learn-hyper", *option));
    }
    configuration.hyperparameters = hyperparameters_from(options, values, file_standardisation);
  }
  if (options.model == "dense") {
    const TrainingMethod* solver = find_training_method(options.solver);
    if (solver == nullptr || !solver->dense()) {
      throw UsageError(fmt::format("--solver: unknown solver \"{}\" (choose {})", options.solver,
                                   training_method_names(/*dense=*/true)));
    }
    configuration.solver = {options.solver, options.active_set_size, options.candidates};
  } else {
    const TrainingMethod* method = find_training_method(options.model);
    if (method == nullptr || method->dense()) {
      throw UsageError(
          fmt::format("--model: '{}' is not dense or one of {} (srm-trans is trained by gpstream predict "
                      "--model srm-trans)",
                      options.model, training_method_names(/*dense=*/false)));
    }
    reject_options(values, {"solver"}, "--model dense; sparse models choose their own");
    if (!method->iterative() && !options.checkpoint.empty()) {
      throw UsageError(
          fmt::format("--checkpoint: --model {} trains in one or two passes over the data and has nothing "
                      "to checkpoint (sgma, mpgp, sggp, cholqr and online do)",
                      options.model));
    }
    if (options.model == "online") {
      if (options.passes == 0) throw UsageError("--passes must be at least 1");
      // A fraction of the prior variance: at 1 or more no row's novelty could ever exceed it.
      if (!(options.novelty >= 0 && options.novelty < 1))
        throw UsageError(fmt::format("--novelty is a fraction of the prior variance, at least 0 and below 1, not {}",
                                     options.novelty));
    } else {
      reject_options(values, {"novelty", "passes"}, "--model online");
    }
    if (options.model == "cholqr") {
      try {
        configuration.cholqr.objective = parse_inducing_objective(options.objective);
      } catch (const Error& error) {
        throw UsageError(fmt::format("--objective: {}", error.what()));
      }
      if (options.information_pivots == 0) throw UsageError("--info-pivots must be at least 1");
    } else {
      reject_options(values, {"info-pivots", "objective", "fixed-hyper"}, "--model cholqr");
    }
    if (options.basis == 0) throw UsageError("--basis must be at least 1");
    const std::size_t candidates = values["candidates"].defaulted() ? 59 : options.candidates;
    configuration.solver = {options.model, options.basis, candidates};
    configuration.cholqr.information_pivots = options.information_pivots;
    configuration.cholqr.learn_hyperparameters = values.count("fixed-hyper") == 0;
    configuration.online.novelty = options.novelty;
    configuration.online.passes = options.passes;
  }
  configuration.seed = options.seed;
  const DatasetDescription description = read_dataset_description(options.dataset);
  if (!options.hyper_file.empty()) {  // a file learned on other data (make_kernel checks the rest)
    const std::size_t lengthscales = configuration.hyperparameters.lengthscales.size();
    GPSTREAM_CHECK(lengthscales == default_lengthscale_count(configuration.hyperparameters.type, description.columns) ||
                       lengthscales == 1 || lengthscales == description.columns,
                   "--hyper: '{}' has {} lengthscales, but '{}' has {} inputs; learn hyperparameters for this "
                   "dataset with gpstream hyper",
                   options.hyper_file, lengthscales, options.dataset, description.columns);
  }
  if (values.count("no-standardise") != 0) {
    configuration.standardisation = Standardisation::identity();
  } else if (file_standardisation) {
    GPSTREAM_CHECK(file_standardisation->x_mean.size() == description.columns,
                   "--hyper: '{}' was learned on {} inputs, but '{}' has {}", options.hyper_file,
                   file_standardisation->x_mean.size(), options.dataset, description.columns);
    configuration.standardisation = *file_standardisation;
  } else {
    configuration.standardisation = dataset_standardisation(description);
  }
  const TrainingMethod& method = method_of(configuration);
  if (!method.dense() && configuration.solver.active_set_size > description.rows) {
    throw UsageError(fmt::format("--basis {} is larger than the {} training rows; give at most {}",
                                 configuration.solver.active_set_size, description.rows, description.rows));
  }
  configuration.dataset_path = std::filesystem::absolute(options.dataset).string();
  configuration.dataset_fingerprint = description.fingerprint;
  configuration.rows = description.rows;
  set_job(configuration.job, options, values, method, /*fresh=*/true);
  return configuration;
}

// A resumed run's configuration and state, from its checkpoint (options given again override the job).
Checkpoint configure_resumed(TrainOptions& options, const po::variables_map& values) {
  Checkpoint checkpoint = read_checkpoint(options.resume);
  check_resume_compatible(options, values, checkpoint.configuration, options.resume);
  TrainingConfiguration& configuration = checkpoint.configuration;
  if (options.dataset.empty()) options.dataset = configuration.dataset_path;
  GPSTREAM_CHECK(!configuration.job.output_path.empty() || !options.output.empty(),
                 "checkpoint '{}' was written by an older gpstream that did not record the output: give -o MODEL.h5 "
                 "(and --tol, --max-iter, --time-limit as the job was launched)",
                 options.resume);
  set_job(configuration.job, options, values, method_of(configuration), /*fresh=*/false);
  return checkpoint;
}

// The run's outputs: refused before any work when they exist (without
// --force), cannot be written, name an input or each other; then locked.
struct OutputLocks {
  OutputLocks(const std::string& output_path, const std::string& checkpoint_path, const std::string& log_path)
      : output(output_path, "-o") {
    if (!checkpoint_path.empty()) checkpoint.emplace(checkpoint_path, "--checkpoint");
    if (!log_path.empty()) log.emplace(log_path, "--log");
  }
  PathLock output;
  std::optional<PathLock> checkpoint, log;
};

std::unique_ptr<OutputLocks> claim_outputs(const TrainOptions& options, const TrainingJob& job,
                                           const std::string& checkpoint_path) {
  const std::vector<CommandFile> writes = {{"-o", job.output_path},
                                           {"--checkpoint", checkpoint_path},
                                           {"--log", job.log_path},
                                           {"--save-hyper", options.save_hyper}};
  for (const CommandFile& output : writes) {
    if (!output.path.empty()) check_output_directory(output.path, output.role);
  }
  // A resumed run writes its checkpoint where it read it: the one file both read and written.
  const bool rewrites_resumed = !options.resume.empty() && checkpoint_path == options.resume;
  check_distinct_files({{"the training dataset", options.dataset},
                        {"--hyper", options.hyper_file},
                        {"--init", options.learning.init_file},
                        {"--resume", rewrites_resumed ? std::string() : options.resume}},
                       writes);
  if (!job.overwrite_output && std::filesystem::exists(job.output_path)) {
    throw Error(fmt::format("output '{}' already exists (use --force to overwrite it)", job.output_path));
  }
  // Two runs may not write the same model, checkpoint or log at once.
  return std::make_unique<OutputLocks>(job.output_path, checkpoint_path, job.log_path);
}

// --learn-hyper: learns the model as `gpstream hyper` does (the kernel, its
// hyperparameters and the prior mean), reports it and, with --save-hyper, writes it.
void learn_and_report(Context& context, TrainingRows& data, const TrainOptions& options,
                      const po::variables_map& values, TrainingConfiguration& configuration, SearchJournal& journal) {
  const DatasetDescription& dataset = data.description();
  const Standardisation standardisation = dataset_standardisation(dataset);
  const std::string kernel = given(values, "kernel") ? options.kernel : "auto";
  const LearningPlan plan = plan_learning(options.learning, options.kernel_values, kernel, values, dataset.rows,
                                          options.dataset, standardisation, dataset.feature_names);
  const ModelLearningOptions& learning = plan.options;
  if (!options.quiet) {
    std::vector<std::string> kernels;
    for (const KernelHyperparameters& shape : learning.kernels) kernels.push_back(kernel_name(shape));
    fmt::print(stderr, "train: learning {} hyperparameters{} on {} random rows ({} restarts; start {}){}\n",
               fmt::join(kernels, ", "),
               learning.mean.empty() ? "" : " and a " + learning.mean.describe(dataset.feature_names) + " mean",
               learning.subset.subset, learning.subset.restarts, plan.start_origin,
               learning.all_rows ? fmt::format(", then on all {} rows", format_count(dataset.rows)) : "");
  }
  ProgressLine progress(!options.quiet);
  SearchProgressObserver observer(progress);
  const LearnedModel learned = [&] {
    const Context::ObserverScope observe(context, {&observer});
    return learn_model(context, data.rows(), data.partition(), learning, &journal);
  }();
  progress.finish();
  if (!options.quiet) {
    for (const std::string& line : describe_learning(learned, learning, standardisation, dataset.feature_names)) {
      fmt::print(stderr, "train: {}\n", line);
    }
    fmt::print(stderr, "train: learned in {:.1f} s ({} evaluations): {}\n", learned.seconds, learned.evaluations,
               describe_hyperparameters(learned.best().hyperparameters));
    for (const std::string& note : learning_notes(learned, learning)) fmt::print(stderr, "train: note: {}\n", note);
  }
  if (!options.save_hyper.empty() && context.communicator().is_root()) {
    save_learned_hyperparameters(options.save_hyper, learned, learning, options.seed, options.dataset,
                                 dataset.fingerprint, standardisation, values.count("force") != 0);
  }
  configuration.hyperparameters = learned.best().hyperparameters;
  configuration.standardisation = with_learned_mean(standardisation, learned, learning);
}

// The trained run, dense or sparse.
struct TrainedRun {
  SolverRun run;
  std::optional<DenseModel> dense;
  std::optional<SparseModel> sparse;
};

// The method on its state, made (and its memory held) before the run is announced.
struct PreparedRun {
  SolverState state;
  std::unique_ptr<DenseSolver> solver;
  std::unique_ptr<IterativeMethod> method;  // null for a direct sparse model
  SparseTrainingMethod* sparse = nullptr;   // the method, when it is a sparse model's
};

PreparedRun prepare_run(KernelMatrix& kernel_matrix, std::span<const double> y, const TrainingMethod& method,
                        const TrainingConfiguration& configuration, std::optional<SolverState> resumed) {
  PreparedRun prepared;
  if (!method.iterative()) return prepared;
  prepared.state = resumed ? std::move(*resumed)
                           : initial_solver_state(method.dense() ? y : std::span<const double>{}, configuration.seed);
  if (method.dense()) {
    prepared.solver = make_solver(configuration.solver, kernel_matrix);
    prepared.method = std::make_unique<DenseSolverRun>(*prepared.solver, kernel_matrix, prepared.state, y);
  } else {
    auto made = make_sparse_training_method(sparse_method_options(configuration), kernel_matrix, y, prepared.state);
    prepared.sparse = made.get();
    prepared.method = std::move(made);
  }
  return prepared;
}

// Runs the method under the driver with the progress line, the log and the
// checkpoint cadence as observers (a direct sparse model in one call).
TrainedRun run_training(Context& context, KernelMatrix& kernel_matrix, std::span<const double> y,
                        const TrainingMethod& method, const TrainingConfiguration& configuration, PreparedRun& prepared,
                        bool fresh, const std::string& checkpoint_path, const TrainOptions& options) {
  const std::string& name = configuration.solver.name;
  const TrainingJob& job = configuration.job;
  TrainedRun trained;
  if (!method.iterative()) {
    // One or two streamed passes on a random basis: nothing to checkpoint.
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t evaluations_before = kernel_matrix.kernel_evaluations();
    trained.sparse = fit_direct_sparse_model(sparse_method_options(configuration), kernel_matrix, y);
    trained.run.reason = StopReason::solved_directly;
    trained.run.last.iteration = 1;
    trained.run.last.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    trained.run.last.kernel_evaluations = kernel_matrix.kernel_evaluations() - evaluations_before;
    return trained;
  }
  SolverState& state = prepared.state;
  IterativeMethod* run = prepared.method.get();
  SparseTrainingMethod* sparse = prepared.sparse;
  Communicator& ranks = context.communicator();
  ProgressLine progress_line(!options.quiet);
  const TrainingObservers observers(
      std::make_unique<ProgressLineObserver>(progress_line, name, run->converges() ? job.stopping.tolerance : 0.0,
                                             run->measure_name(), run->planned_iterations()),
      ranks.is_root() ? job.log_path : std::string(),
      fresh ? std::nullopt : std::optional<std::uint64_t>(state.iteration), checkpoint_path,
      job.checkpoint_every_seconds,
      [&] {
        if (sparse != nullptr) sparse->store_state();
        if (ranks.size() == 1) {
          write_checkpoint(checkpoint_path, configuration, state);
          return;
        }
        // One checkpoint for the job: every rank's rows of α and g, in rank order, written by rank 0.
        SolverState whole = state;
        whole.alpha = ranks.all_gather(state.alpha);
        whole.gradient = ranks.all_gather(state.gradient);
        if (ranks.is_root()) write_checkpoint(checkpoint_path, configuration, whole);
      },
      [&ranks](bool due) { return ranks.any(due); });
  const Context::ObserverScope observe(context, observers.all());
  trained.run = run_iterations(*run, kernel_matrix, job.stopping, fresh);
  if (trained.run.reason == StopReason::interrupted) {
    throw interrupted_run(fmt::format("at iteration {}", state.iteration), checkpoint_path, job.output_path,
                          observers.checkpoints(), ranks.size());
  }
  if (sparse != nullptr) {
    trained.sparse = sparse->model();
  } else {
    trained.dense.emplace();
    trained.dense->alpha = ranks.size() == 1 ? std::move(state.alpha) : ranks.all_gather(state.alpha);
  }
  return trained;
}

// Writes the model with its description and reports what was trained.
void write_and_report(TrainedRun& trained, const TrainingMethod& method, const TrainingConfiguration& configuration,
                      const DatasetDescription& dataset, const TrainOptions& options) {
  const std::string& name = configuration.solver.name;
  const TrainingJob& job = configuration.job;
  const SolverRun& run = trained.run;
  const ExistingOutput existing = job.overwrite_output ? ExistingOutput::replace : ExistingOutput::keep;
  const bool has_tolerance =
      method.tolerance == ToleranceMeaning::gradient_norm || method.tolerance == ToleranceMeaning::gap;
  const TrainingSummary summary{name,
                                describe(run.reason),
                                run.last.iteration,
                                run.last.convergence_measure,
                                has_tolerance ? job.stopping.tolerance : 0.0,
                                run.last.elapsed_seconds,
                                run.last.kernel_evaluations};
  if (trained.dense) {
    DenseModel& model = *trained.dense;
    static_cast<ModelDescription&>(model) = describe_model(configuration, dataset, summary);
    write_dense_model(job.output_path, model, existing);
    if (options.quiet) return;
    fmt::print(stderr, "train: {} after {} iterations in {:.2f} s, |g|inf {:.3e}; wrote {}\n", describe(run.reason),
               run.last.iteration, run.last.elapsed_seconds, run.last.convergence_measure, job.output_path);
    if (run.reason == StopReason::iteration_limit || run.reason == StopReason::time_limit) {
      fmt::print(stderr, "train: warning: not converged to --tol {:.0e}; the model holds the current weights\n",
                 job.stopping.tolerance);
    }
    return;
  }
  SparseModel& model = *trained.sparse;
  const KernelHyperparameters trained_kernel = model.hyperparameters;  // CholQR learns its own; keep it
  static_cast<ModelDescription&>(model) = describe_model(configuration, dataset, summary);
  model.hyperparameters = trained_kernel;
  write_sparse_model(job.output_path, model, existing);
  if (!options.quiet) {
    // The diagnostics a user can act on, in words; the model file keeps them all.
    std::string details;
    const auto& diagnostics = model.diagnostics;
    if (diagnostics.contains("gap")) details += fmt::format(", gap of the bounds {:.3g}", diagnostics.at("gap"));
    if (diagnostics.contains("relative_trace_residual") && name != "sggp") {
      details +=
          fmt::format(", {:.3g} of the kernel's trace left unexplained", diagnostics.at("relative_trace_residual"));
    }
    if (diagnostics.contains("accepted_swaps"))
      details += fmt::format(", {:.0f} swaps accepted", diagnostics.at("accepted_swaps"));
    if (diagnostics.contains("deleted_basis_vectors")) {
      details += fmt::format(", {:.0f} basis vectors deleted", diagnostics.at("deleted_basis_vectors"));
    }
    if (diagnostics.contains("dropped_basis_rows") && diagnostics.at("dropped_basis_rows") > 0) {
      details +=
          fmt::format(", {:.0f} basis rows dropped as numerically dependent", diagnostics.at("dropped_basis_rows"));
    }
    const bool short_basis = model.basis_size() < configuration.solver.active_set_size;
    std::string how = describe(run.reason);
    if (short_basis && name != "online" && method.iterative() && run.reason == StopReason::complete) {
      how =
          "stopped early: every remaining row is numerically in the span of the basis, the kernel's numerical rank on "
          "these data";
    }
    fmt::print(stderr, "train: {} model with {} of {} basis rows ({}) in {:.2f} s{}; wrote {}\n", name,
               model.basis_size(), configuration.solver.active_set_size, how, run.last.elapsed_seconds, details,
               job.output_path);
    if (name == "cholqr") {
      const KernelHyperparameters& h = model.hyperparameters;
      fmt::print(stderr, "train: cholqr kernel: lengthscales [{:.4g}], signal variance {:.4g}, noise variance {:.4g}\n",
                 fmt::join(h.lengthscales, ", "), h.signal_variance, h.noise_variance);
    }
    if (short_basis && name == "online") {
      fmt::print(stderr,
                 "train: {} of {} basis vectors used: no other row's novelty exceeded --novelty {} of its prior "
                 "variance\n",
                 model.basis_size(), configuration.solver.active_set_size, configuration.online.novelty);
    }
    const double gap = configuration.job.stopping.tolerance;
    if (stops_at_gap(method) && diagnostics.at("gap") > gap) {
      fmt::print(stderr,
                 "train: the gap {:.3g} is above --gap {:g}: the model is further from the exact GP than asked\n",
                 diagnostics.at("gap"), gap);
    }
    if (name == "nystrom") {
      fmt::print(stderr,
                 "train: nystrom weights: max |w| {:.4g}, rms {:.4g} (large weights mean the rank-{} "
                 "approximation underestimates K; Schwaighofer & Tresp 2003 section 4.2)\n",
                 model.diagnostics.at("max_abs_weight"), model.diagnostics.at("rms_weight"), model.basis_size());
    }
  }
}

// The command's synopsis, description and options, bound to `options`.
void describe_command(CommandSpec& spec, TrainOptions& options) {
  spec.name = "train";
  spec.usage = "gpstream train DATA.h5 -o MODEL.h5 [options]\n       gpstream train --resume CHECKPOINT.h5 -o MODEL.h5";
  spec.description =
      "Train an exact GP: solve (K + noise I) alpha = y without forming the n x n matrix, by greedy block\n"
      "coordinate descent (gbcd, Bo & Sminchisescu 2008) or a reference solver. Inputs and targets are\n"
      "standardised with the dataset's statistics (or those of the --hyper file). Ctrl-C writes a\n"
      "checkpoint (with --checkpoint) and prints the command that resumes the run.";
  // clang-format off
  spec.options.add_options()
      ("dataset", po::value(&options.dataset), "training dataset (from gpstream convert or generate)")
      ("output,o", po::value(&options.output), "model file to write (on --resume: the one the job was launched with, unless given)")
      ("solver", po::value(&options.solver)->default_value("gbcd"), ("the exact GP's solver: " + training_method_help(/*dense=*/true)).c_str())
      ("model", po::value(&options.model)->default_value("dense"), ("dense (the exact GP, by --solver), or a sparse model (docs/sparse-models.md): " + training_method_help(/*dense=*/false)).c_str())
      ("basis", po::value(&options.basis)->default_value(1000), "sparse models: basis size m (rows of the subset for sd)")
      ("gap", po::value(&options.gap)->default_value(0.025, "0.025"), "sggp: stop when the relative gap of the bounds falls below this")
      ("info-pivots", po::value(&options.information_pivots)->default_value(16), "cholqr: information pivots z ranking the swap candidates")
      ("objective", po::value(&options.objective)->default_value("var"), "cholqr: var (variational free energy) or mle (projected-process likelihood)")
      ("fixed-hyper", "cholqr: keep the hyperparameters; only the inducing set is optimised")
      ("novelty", po::value(&options.novelty)->default_value(1e-6, "1e-6"), "online: a row joins the basis when its novelty exceeds this fraction of its prior variance")
      ("passes", po::value(&options.passes)->default_value(1), "online: passes over the data")
      ("active-set", po::value(&options.active_set_size)->default_value(500), "active set size m (gbcd, bcd-*)")
      ("candidates", po::value(&options.candidates)->default_value(60), "random candidates kappa per greedy step (gbcd 60; sgma, mpgp, sggp 59)")
      ("seed", po::value(&options.seed)->default_value(1), "random seed")
      ("tol", po::value(&options.tolerance)->default_value(1e-4, "1e-4"), "dense solvers: stop when |g|inf <= tol (standardised targets); cholqr: when an epoch decreases its objective by less than tol, relatively")
      ("max-iter", po::value(&options.max_iterations), "stop after this many iterations in all, resumptions included (0: no limit)")
      ("time-limit", po::value(&options.time_limit), "stop after this many seconds of training in all, resumptions included (0: no limit)")
      ("refresh-every", po::value(&options.refresh_every)->default_value(0), "recompute g exactly every K iterations and report the drift (0: never)")
      ("kernel", po::value(&options.kernel)->default_value("rbf"), kernel_names().c_str())
      ("hyper", po::value(&options.hyper_file), "hyperparameter file (JSON, from gpstream hyper or as ../shared/data/hyper/*.json)")
      ("learn-hyper", "learn the model first, as gpstream hyper does: the kernel (default auto), its hyperparameters and the mean (with --kernel, --mean, --learn-on, --subset, ...)")
      ("save-hyper", po::value(&options.save_hyper), "with --learn-hyper: also write the learned values to this JSON file")
      ("no-standardise", "use inputs and targets as they are")
      ("checkpoint", po::value(&options.checkpoint), "checkpoint file, written periodically and when the run stops")
      ("checkpoint-every", po::value(&options.checkpoint_every)->default_value(60), "seconds between checkpoints")
      ("resume", po::value(&options.resume), "continue the job saved in this checkpoint: its stopping rule, output, log and checkpoint cadence, unless given again")
      ("log", po::value(&options.log), "training log (CSV: iteration, seconds, objective, |g|inf, kernel evaluations, gradient drift, cache lookups, hits, hits from disk, bytes read from disk, estimated core-seconds saved)")
      ("force", "overwrite the model file if it exists")
      ("quiet,q", "no progress on stderr");
  // clang-format on
  po::options_description kernel_options(
      "Kernel values (standardised units; over a --hyper file's, or with --learn-hyper the search's start)");
  options.kernel_values.add(kernel_options);
  spec.options.add(kernel_options);
  po::options_description cache_options("Kernel-column cache");
  options.cache.add(cache_options, "the bcd family and the greedy bases (sgma, mpgp, sggp)");
  spec.options.add(cache_options);
  options.compute.add(spec.options);
  po::options_description learning_options("Hyperparameter learning (with --learn-hyper)");
  options.learning.add(learning_options);
  spec.options.add(learning_options);
  spec.positional.add("dataset", 1);
}

// The checks that need no file: ranges of the options, an existing --save-hyper.
void validate(TrainOptions& options, const po::variables_map& values) {
  options.quiet = values.count("quiet") != 0;
  if (options.resume.empty() && options.output.empty())
    throw UsageError("give the model file to write with -o MODEL.h5");
  if (options.tolerance <= 0) throw UsageError(fmt::format("--tol must be positive, not {}", options.tolerance));
  if (options.time_limit < 0)
    throw UsageError(fmt::format("--time-limit must be positive (0: no limit), not {}", options.time_limit));
  if (options.checkpoint_every <= 0) throw UsageError("--checkpoint-every must be positive");
  options.cache.validate(values);
  if (!(options.gap > 0)) throw UsageError(fmt::format("--gap must be positive, not {}", options.gap));
  if (options.active_set_size == 0) throw UsageError("--active-set must be at least 1");
  if (values.count("force") == 0 && !options.save_hyper.empty() && std::filesystem::exists(options.save_hyper)) {
    throw Error(fmt::format("--save-hyper: '{}' already exists (use --force to overwrite it)", options.save_hyper));
  }
}

// What a distributed run can do so far: the methods whose products and
// sums each rank forms over its own rows (TrainingMethod::runs_on_ranks).
void check_distributable(const TrainingMethod& method) {
  if (!method.runs_on_ranks) {
    std::vector<std::string> distributable;
    for (const TrainingMethod& candidate : training_methods()) {
      if (candidate.runs_on_ranks) distributable.emplace_back(candidate.name);
    }
    throw UsageError(fmt::format("{} does not run on several ranks yet (only {} do): run it without mpirun",
                                 method.name, fmt::join(distributable, ", ")));
  }
}

// A checkpoint holds every row's α and g: a rank keeps its own.
void take_own_rows(SolverState& state, const RowPartition& partition) {
  const auto own = [&](std::vector<double>& values) {
    GPSTREAM_CHECK(values.size() == partition.global_rows, "the checkpoint holds {} values for {} rows", values.size(),
                   partition.global_rows);
    values = std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(partition.first),
                                 values.begin() + static_cast<std::ptrdiff_t>(partition.first + partition.count));
  };
  own(state.alpha);
  own(state.gradient);
}

}  // namespace

int run_train_alone(const std::vector<std::string>& args) {
  SingleProcess alone;
  return run_train(args, alone);
}

namespace {

// A training job; `replay`: the evaluations of its hyperparameter search so far (a job interrupted while learning).
int run_train_job(const std::vector<std::string>& args, Communicator& ranks, std::vector<SearchJournal::Entry> replay) {
  CommandSpec spec;
  TrainOptions options;
  describe_command(spec, options);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;
  if (!options.resume.empty() && is_search_checkpoint(options.resume)) {
    // Interrupted while learning its hyperparameters: the job as launched, its search replayed.
    for (const std::string& word : args) {
      if (word != "--resume" && word != options.resume && word != "-q" && word != "--quiet") {
        throw UsageError(
            fmt::format("'{}' holds a job still learning its hyperparameters: resume it with "
                        "gpstream train --resume {} alone (it keeps the options it was launched with)",
                        options.resume, shell_quoted(options.resume)));
      }
    }
    SearchCheckpoint saved = read_search_checkpoint(options.resume);
    GPSTREAM_CHECK(saved.command == "train",
                   "'{}' holds a search of gpstream {}, not a training job's: continue it "
                   "with that command",
                   options.resume, saved.command);
    if (values.count("quiet") != 0) saved.arguments.push_back("-q");
    if (!options.quiet) {
      fmt::print(stderr, "train: resuming the hyperparameter search saved in '{}' ({} evaluations)\n", options.resume,
                 saved.entries.size());
    }
    return run_train_job(saved.arguments, ranks, std::move(saved.entries));
  }

  // Validate.
  validate(options, values);
  const bool distributed = ranks.size() > 1;
  if (!ranks.is_root()) options.quiet = true;  // rank 0 reports for the job

  // Configure: from the checkpoint, or from the options.
  std::optional<SolverState> resumed_state;
  TrainingConfiguration configuration;
  if (!options.resume.empty()) {
    Checkpoint checkpoint = configure_resumed(options, values);
    configuration = std::move(checkpoint.configuration);
    resumed_state = std::move(checkpoint.state);
  } else {
    configuration = configure_fresh(options, values);
  }
  const TrainingMethod& method = method_of(configuration);
  if (distributed) check_distributable(method);
  const std::string checkpoint_path = !options.checkpoint.empty() ? options.checkpoint : options.resume;
  const TrainingJob& job = configuration.job;
  // From here on Ctrl-C, SIGTERM and SIGHUP stop the run at the next iteration, with a checkpoint
  // (installed before the outputs are claimed: whoever sees the claim may signal at once).
  Context::Settings settings = options.compute.context_settings(configuration.seed);
  settings.communicator = &ranks;
  Context context(settings);
  const ContextInterrupts interrupts(context);
  // Rank 0 writes the job's files (gathering what the other ranks hold).
  const auto locks = ranks.is_root() ? claim_outputs(options, job, checkpoint_path) : nullptr;
  if (resumed_state && !options.quiet) {
    fmt::print(stderr, "train: resuming {} from '{}' at iteration {}: {}; writing {}{}\n", configuration.solver.name,
               options.resume, resumed_state->iteration,
               describe_stopping_rule(job.stopping, configuration.solver.name), job.output_path,
               job.log_path.empty() ? "" : ", log " + job.log_path);
  }
  if (!checkpoint_path.empty() && !options.quiet) {
    // Said at the start: after a crash or a reboot nothing else is printed.
    fmt::print(stderr,
               "train: a checkpoint every {:g} s to {}; if the run stops (Ctrl-C, a crash, a reboot), resume "
               "it with: {}gpstream train --resume {}\n",
               job.checkpoint_every_seconds, checkpoint_path, launcher(ranks.size()), shell_quoted(checkpoint_path));
  }
  const bool dense = method.dense();
  const auto open_data = [&] {
    return open_training_rows(
        options.dataset, configuration.standardisation, context,
        {.vectors_per_row = method.vectors + (job.stopping.refresh_every > 0 ? 1 : 0),
         .expected_fingerprint =
             resumed_state ? std::optional<std::string>(configuration.dataset_fingerprint) : std::nullopt,
         .expected_by = "checkpoint '" + options.resume + "'",
         .rank = ranks.rank(),
         .ranks = ranks.size()});
  };
  std::unique_ptr<TrainingRows> data = open_data();
  if (values.count("learn-hyper") != 0 && !resumed_state) {
    // The search checkpoints into --checkpoint until the solver's first checkpoint replaces it.
    SearchCheckpoints searching(checkpoint_path, job.checkpoint_every_seconds,
                                {"train", args, data->description().fingerprint, {}}, ranks.is_root(),
                                std::move(replay));
    try {
      learn_and_report(context, *data, options, values, configuration, searching.journal());
    } catch (const Cancelled& stopped) {
      if (checkpoint_path.empty()) throw;
      searching.write_now();
      throw Cancelled(
          fmt::format("{} while learning the hyperparameters; {} evaluations saved in {}. Resume with:\n  "
                      "{}gpstream train --resume {}",
                      stopped.what(), searching.journal().entries().size(), checkpoint_path, launcher(ranks.size()),
                      shell_quoted(checkpoint_path)));
    }
    if (!configuration.standardisation.mean.coefficients.empty()) {
      data.reset();  // the targets the solver sees are the residuals of the learned mean
      data = open_data();
    }
  }
  const DatasetDescription& dataset = data->description();
  const std::unique_ptr<Kernel> kernel = make_kernel(configuration.hyperparameters, dataset.columns);
  // Before any work: a model whose variances overflow in the target's units could not predict.
  validate_model_description(describe_model(configuration, dataset, {}), "the model of '" + options.dataset + "'");
  KernelMatrix kernel_matrix(context, data->rows(), data->partition(), *kernel);
  const std::vector<double> y = read_all_targets(data->rows());  // this rank's
  if (resumed_state && distributed) take_own_rows(*resumed_state, data->partition());
  const bool fresh = !resumed_state;
  PreparedRun prepared = prepare_run(kernel_matrix, y, method, configuration, std::move(resumed_state));
  std::string cache = configure_column_cache(
      kernel_matrix, {configuration.solver.name, method.column_reuse, configuration.solver.active_set_size},
      options.cache.settings(job.output_path, "model file", context));
  // The engine says why auto chose; naming the flag that overrides it is the command line's part.
  if (cache.starts_with("kernel-column cache off (auto")) cache += "; --cache ram forces it";
  if (!options.quiet) {
    std::string what =
        dense ? fmt::format("{} on", configuration.solver.name)
              : fmt::format("{} model, basis {}, on", configuration.solver.name, configuration.solver.active_set_size);
    if (distributed) {
      const RowPartition& own = data->partition();
      what = fmt::format("{} ranks (rank 0: rows 1 to {}; the budget below is each rank's), {}", ranks.size(),
                         format_count(own.count), what);
    }
    fmt::print(stderr, "train: {} {} ({} rows x {} inputs), kernel {}, noise variance {:.4g}\ntrain: {}; {}; {}\n",
               what, options.dataset, format_count(dataset.rows), dataset.columns, kernel->name(),
               kernel->noise_variance(), context.memory().describe(),
               data->in_memory() ? "X held in memory" : "X streamed from the file in blocks", cache);
  }

  // Run.
  TrainedRun trained =
      run_training(context, kernel_matrix, y, method, configuration, prepared, fresh, checkpoint_path, options);

  // Report.
  if (ranks.is_root()) write_and_report(trained, method, configuration, dataset, options);
  if (distributed && !options.quiet) {
    const CommunicationStatistics communication = ranks.statistics();
    const double iterations = static_cast<double>(std::max<std::uint64_t>(trained.run.last.iteration, 1));
    fmt::print(stderr,
               "train: communication of rank 0: {} collectives, {} sent, {:.2f} s in them ({:.2f} ms and {} per "
               "iteration, waits for the slowest rank included)\n",
               format_count(communication.calls), format_bytes(static_cast<double>(communication.bytes)),
               communication.seconds, 1e3 * communication.seconds / iterations,
               format_bytes(static_cast<double>(communication.bytes) / iterations));
  }
  return 0;
}

}  // namespace

int run_train(const std::vector<std::string>& args, Communicator& ranks) { return run_train_job(args, ranks, {}); }

}  // namespace gpstream::cli

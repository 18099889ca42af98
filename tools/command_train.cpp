// gpstream train DATA.h5 -o MODEL.h5 [--solver gbcd ...]
// gpstream train --resume CHECKPOINT.h5 -o MODEL.h5
// The run: outputs claimed, hyperparameters learned when asked, the method
// run under the driver with its observers, the model written and reported.
// The options and the configuration made from them: train_options.cpp.
#include "api/file_description.h"
#include "api/training_job.h"
#include "api/training_observers.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/hyperparameter_learning.h"
#include "tools/interrupt_handler.h"
#include "tools/train_options.h"
#include "tools/training_observers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>

namespace gpstream::cli {
namespace {

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

// The files a continuing job owns: the checkpoint (or search checkpoint) it continues from, and the
// training log that checkpoint's run wrote; nothing else. `force`: this command's own --force (a job
// launched with --force keeps it for its own model only: override_job in train_options.cpp).
std::unique_ptr<OutputLocks> claim_outputs(const TrainOptions& options, const TrainingJob& job,
                                           const std::string& checkpoint_path, const std::string& continued_from,
                                           bool force) {
  const std::vector<CommandFile> writes = {{"-o", job.output_path},
                                           {"--checkpoint", checkpoint_path},
                                           {"--log", job.log_path},
                                           {"--save-hyper", options.save_hyper}};
  // A continuing run writes its checkpoint where it read it: the one file both read and written.
  const bool own_checkpoint = !continued_from.empty() && same_file(checkpoint_path, continued_from);
  check_distinct_files({{"the training dataset", options.dataset},
                        {"--hyper", options.hyper_file},
                        {"--init", options.learning.init_file},
                        {"--resume", own_checkpoint ? std::string() : options.resume}},
                       writes);
  for (const CommandFile& output : writes) {
    if (!output.path.empty()) check_output_directory(output.path, output.role);
  }
  // Two runs may not write the same model, checkpoint or log at once (said first: a run that holds
  // the path may well have written it already).
  auto locks = std::make_unique<OutputLocks>(job.output_path, checkpoint_path, job.log_path);
  // No output replaces a file the job did not make unless --force names it.
  check_new_output(job.output_path, "-o", job.overwrite_output);
  if (!options.save_hyper.empty()) check_new_output(options.save_hyper, "--save-hyper", force);
  if (!checkpoint_path.empty() && !own_checkpoint && !force &&
      resolve_output(checkpoint_path, "--checkpoint").kind == OutputTarget::Kind::regular) {
    const bool resumable = is_checkpoint(checkpoint_path) || is_search_checkpoint(checkpoint_path);
    throw Error(fmt::format(
        "--checkpoint: '{}' already exists{}; give another path, or --force to replace it", checkpoint_path,
        resumable
            ? fmt::format(" and holds a run that gpstream train --resume {} continues", shell_quoted(checkpoint_path))
            : ""));
  }
  if (!job.log_path.empty() && !force && resolve_output(job.log_path, "--log").kind == OutputTarget::Kind::regular) {
    const bool own_log = !continued_from.empty() && same_file(job.log_path, options.resumed_log);
    if (!(own_log && is_training_log(job.log_path))) {
      throw Error(fmt::format("--log: '{}' already exists{}; give another path, or --force to replace it", job.log_path,
                              own_log ? " and is not a gpstream training log" : ""));
    }
  }
  return locks;
}

// What `gpstream train` shows of its job (api/training_job.h) on stderr: the learning's plan, progress and
// result (written to --save-hyper too), the run's start and its progress line. Nothing with --quiet.
class CommandLineJobEvents final : public TrainingJobEvents {
 public:
  CommandLineJobEvents(Context& context, const TrainOptions& options, const po::variables_map& values,
                       const LearningPlan* plan)
      : context_(context),
        options_(options),
        values_(values),
        plan_(plan),
        search_line_(!options.quiet),
        search_observer_(search_line_),
        run_line_(!options.quiet) {}

  void on_learning(const Training& training, const ModelLearningOptions& learning, std::size_t) override {
    if (options_.quiet) return;
    const DatasetDescription& dataset = training.dataset();
    for (const std::string& note : plan_->notes) fmt::print(stderr, "train: note: {}\n", note);
    std::vector<std::string> kernels;
    for (const KernelHyperparameters& shape : learning.kernels) kernels.push_back(kernel_name(shape));
    fmt::print(stderr, "train: learning {} hyperparameters{} on {} random rows ({} restarts; start {}){}\n",
               fmt::join(kernels, ", "),
               learning.mean.empty() ? "" : " and a " + learning.mean.describe(dataset.feature_names) + " mean",
               learning.subset.subset, learning.subset.restarts, plan_->start_origin,
               learning.all_rows ? fmt::format(", then on all {} rows", format_count(dataset.rows)) : "");
  }
  RunObserver* search_progress() override { return &search_observer_; }

  void on_learned(const Training& training, const ModelLearningOptions& learning,
                  const LearnedModel& learned) override {
    search_line_.finish();
    const DatasetDescription& dataset = training.dataset();
    const Standardisation standardisation = dataset_standardisation(dataset);
    if (!options_.quiet) {
      for (const std::string& line : describe_learning(learned, learning, standardisation, dataset.feature_names)) {
        fmt::print(stderr, "train: {}\n", line);
      }
      fmt::print(stderr, "train: learned in {:.1f} s ({} evaluations): {}\n", learned.seconds, learned.evaluations,
                 describe_hyperparameters(learned.best().hyperparameters));
      for (const std::string& note : learning_notes(learned, learning)) fmt::print(stderr, "train: note: {}\n", note);
    }
    if (!options_.save_hyper.empty() && context_.communicator().is_root()) {
      save_learned_hyperparameters(options_.save_hyper, learned, learning, options_.seed, options_.dataset,
                                   dataset.fingerprint, standardisation, dataset.feature_names,
                                   values_.count("force") != 0);
    }
  }

  void on_prepared(const Training& training, const std::string& description) override {
    std::string cache = description;
    // The engine says why auto chose; naming the flag that overrides it is the command line's part.
    if (cache.starts_with("kernel-column cache off (auto")) cache += "; --cache ram forces it";
    if (!options_.quiet) describe_start(training, cache);
  }

  RunObserver* training_progress(const Training& training) override {
    const TrainingConfiguration& configuration = training.configuration();
    progress_.emplace(run_line_, configuration.solver.name,
                      training.converges() ? configuration.job.stopping.tolerance : 0.0, training.measure_name(),
                      training.planned_iterations());
    return &*progress_;
  }

  void on_warning(const std::string& message) override {
    fmt::print(stderr, "warning: {}\n", for_command_line(message));
  }

 private:
  // "train: gbcd on DATA (n rows x d inputs), kernel …, noise variance …", the memory, where X lives, the cache,
  // and what auto chose.
  void describe_start(const Training& training, const std::string& cache) const {
    const DatasetDescription& dataset = training.dataset();
    const TrainingConfiguration& trained = training.configuration();
    const Communicator& ranks = context_.communicator();
    std::string what = !training.method().dense()
                           ? fmt::format("{} model, basis {}, on", trained.solver.name, trained.solver.active_set_size)
                       : vectors_held(training.method(), trained.solver).of_every_row > 0
                           ? fmt::format("{} with {} past steps on", trained.solver.name, trained.solver.subspace_steps)
                           : fmt::format("{} on", trained.solver.name);
    if (ranks.size() > 1) {
      what = fmt::format("{} ranks (rank 0: rows 1 to {}; the budget below is each rank's), {}", ranks.size(),
                         format_count(training.partition().count), what);
    }
    fmt::print(stderr, "train: {} {} ({} rows x {} inputs), kernel {}, noise variance {:.4g}\ntrain: {}; {}; {}\n",
               what, options_.dataset, format_count(dataset.rows), dataset.columns, training.kernel().name(),
               training.kernel().noise_variance(), context_.memory().describe(),
               training.in_memory() ? "X held in memory" : "X streamed from the file in blocks", cache);
    if (!training.solver_choice().empty()) fmt::print(stderr, "train: {}\n", training.solver_choice());
    if (!training.precision_choice().empty())
      fmt::print(stderr, "train: {}\n", for_command_line(training.precision_choice()));
    for (const std::string& note : training.notes()) fmt::print(stderr, "train: note: {}\n", for_command_line(note));
  }

  Context& context_;
  const TrainOptions& options_;
  const po::variables_map& values_;
  const LearningPlan* plan_;  // with --learn-hyper
  ProgressLine search_line_;
  SearchProgressObserver search_observer_;
  ProgressLine run_line_;
  std::optional<ProgressLineObserver> progress_;
};

// Writes the model and reports what was trained.
void write_and_report(const TrainingResult& trained, const TrainingMethod& method,
                      const TrainingConfiguration& configuration, const TrainOptions& options) {
  const std::string& name = configuration.solver.name;
  const TrainingJob& job = configuration.job;
  const SolverRun& run = trained.run;
  trained.model->save(job.output_path, job.overwrite_output ? ExistingOutput::replace : ExistingOutput::keep);
  if (const DenseModel* dense = trained.model->dense()) {
    if (options.quiet) return;
    const TrainingSummary& summary = dense->training;
    const std::string precision =
        summary.precision == "double"
            ? std::string()
            : "; precision " + describe_precision(summary.precision, summary.exact_residuals_in_single_precision);
    fmt::print(stderr, "train: {} after {} iterations in {:.2f} s, |g|/|y| {:.3e}{}; wrote {}\n", describe(run.reason),
               run.last.iteration, run.last.elapsed_seconds, run.last.convergence_measure, precision, job.output_path);
    if (run.reason == StopReason::iteration_limit || run.reason == StopReason::time_limit) {
      fmt::print(stderr, "train: warning: not converged to --tol {:.0e}; the model holds the current weights\n",
                 job.stopping.tolerance);
    }
    return;
  }
  const SparseModel& model = *trained.model->sparse();
  if (!options.quiet) {
    // The diagnostics a user can act on, in words; the model file keeps them all.
    std::string details;
    const auto& diagnostics = model.diagnostics;
    if (diagnostics.contains("gap")) details += fmt::format(", gap of the bounds {:.3g}", diagnostics.at("gap"));
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
    if (short_basis && method.basis_ends_at_rank && run.reason == StopReason::complete) {
      how =
          "stopped early: every remaining row is numerically in the span of the basis, the kernel's numerical rank on "
          "these data";
    }
    fmt::print(stderr, "train: {} model with {} of {} basis rows ({}) in {:.2f} s{}; wrote {}\n", name,
               model.basis_size(), configuration.solver.active_set_size, how, run.last.elapsed_seconds, details,
               job.output_path);
    if (method.summarise != nullptr) {
      for (const std::string& line : method.summarise(model, sparse_method_options(configuration)))
        fmt::print(stderr, "train: {}\n", for_command_line(line));
    }
    const double gap = configuration.job.stopping.tolerance;
    if (method.stops_at_gap() && diagnostics.at("gap") > gap) {
      fmt::print(stderr,
                 "train: the gap {:.3g} is above --gap {:g}: the model is further from the exact GP than asked\n",
                 diagnostics.at("gap"), gap);
    }
  }
}

// --profile: each phase's milliseconds per iteration, and what is left of the iteration's wall time.
void report_phases(const PhaseTimes& times, const SolverRun& run) {
  const double iterations = static_cast<double>(std::max<std::uint64_t>(run.last.iteration, 1));
  std::string phases;
  double timed = 0.0;
  for (std::size_t k = 0; k < kPhaseCount; ++k) {
    const auto phase = static_cast<Phase>(k);
    if (times.entries(phase) == 0) continue;
    timed += times.seconds(phase);
    phases += fmt::format("{}{} {:.3f}", phases.empty() ? "" : ", ", phase_name(phase),
                          1e3 * times.seconds(phase) / iterations);
  }
  fmt::print(stderr, "train: profile, ms per iteration over {} iterations: {}; the rest {:.3f}; in all {:.3f}\n",
             run.last.iteration, phases, 1e3 * (run.last.elapsed_seconds - timed) / iterations,
             1e3 * run.last.elapsed_seconds / iterations);
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

}  // namespace

int run_train_alone(const std::vector<std::string>& args) {
  SingleProcess alone;
  return run_train(args, alone);
}

namespace {

// A job stopped while learning (--resume SEARCH_CHECKPOINT): the search checkpoint, its arguments those the
// job was launched with (and -q when given now). Refuses any other option: the job keeps its own.
SearchCheckpoint launched_job(const std::vector<std::string>& args, const TrainOptions& options,
                              const po::variables_map& values) {
  SearchCheckpoint saved = read_search_checkpoint(options.resume);
  GPSTREAM_CHECK(saved.command == "train",
                 "'{}' holds the hyperparameter search of gpstream {}, not a training job: continue it with {}",
                 options.resume, saved.command, resume_command(options.resume, &saved));
  for (const std::string& word : args) {
    if (word != "--resume" && word != options.resume && word != "-q" && word != "--quiet") {
      throw UsageError(
          fmt::format("'{}' holds a job still learning its hyperparameters: resume it with "
                      "gpstream train --resume {} alone (it keeps the options it was launched with)",
                      options.resume, shell_quoted(options.resume)));
    }
  }
  const auto quiet = [](const std::string& word) { return word == "-q" || word == "--quiet"; };
  if (values.count("quiet") != 0 && std::none_of(saved.arguments.begin(), saved.arguments.end(), quiet)) {
    saved.arguments.push_back("-q");
  }
  if (values.count("quiet") == 0) {
    fmt::print(stderr, "train: resuming the hyperparameter search saved in '{}' ({} evaluations)\n", options.resume,
               saved.entries.size());
  }
  return saved;
}

// A training job; `replay`: its hyperparameter search so far (a job interrupted while learning), read from
// `replayed_from`.
int run_train_job(const std::vector<std::string>& args, Communicator& ranks, SearchCheckpoint replay,
                  const std::string& replayed_from) {
  CommandSpec spec;
  TrainOptions options;
  describe_command(spec, options);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;
  if (!options.resume.empty() && is_search_checkpoint(options.resume)) {
    // Interrupted while learning its hyperparameters: the job as launched, its search replayed.
    SearchCheckpoint saved = launched_job(args, options, values);
    std::vector<std::string> arguments = saved.arguments;
    return run_train_job(arguments, ranks, std::move(saved), options.resume);
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
  if (distributed) check_distributable(method_of(configuration));
  const std::string checkpoint_path = !options.checkpoint.empty() ? options.checkpoint : options.resume;
  const TrainingJob job = configuration.job;
  // From here on Ctrl-C, SIGTERM and SIGHUP stop the run at the next iteration, with a checkpoint
  // (installed before the outputs are claimed: whoever sees the claim may signal at once).
  Context::Settings settings = options.compute.context_settings(configuration.seed);
  settings.communicator = &ranks;
  PhaseTimes phase_times;
  if (options.profile) settings.phase_times = &phase_times;
  Context context(settings);
  const ContextInterrupts interrupts(context);
  // Rank 0 writes the job's files (gathering what the other ranks hold).
  const std::string continued_from = !options.resume.empty() ? options.resume : replayed_from;
  const auto locks = ranks.is_root()
                         ? claim_outputs(options, job, checkpoint_path, continued_from, values.count("force") != 0)
                         : nullptr;
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
  TrainingJobSpecification specification{.data = TrainingData::file(options.dataset),
                                         .resumed_state = std::move(resumed_state),
                                         .resumed_from = options.resume,
                                         .checkpoint_path = checkpoint_path,
                                         .cache = options.cache.settings(job.output_path, "model file", context)};
  std::optional<LearningPlan> plan;
  if (values.count("learn-hyper") != 0 && !specification.resumed_state) {
    const DatasetDescription dataset = read_dataset_description(options.dataset);
    plan = plan_learning(options.kernel_values, values, dataset, options.dataset);
    specification.learning = plan->options;
    specification.search = {"train", args, {}, {}};
    specification.replay = std::move(replay);
  }
  specification.configuration = std::move(configuration);
  CommandLineJobEvents events(context, options, values, plan ? &*plan : nullptr);
  const TrainingResult result = [&] {
    try {
      return run_training_job(context, std::move(specification), events);
    } catch (const JobInterrupted& stopped) {
      throw interrupted_job(stopped, job.output_path, ranks.size());
    }
  }();

  // Report.
  if (ranks.is_root()) write_and_report(result, method_of(result.configuration), result.configuration, options);
  if (options.profile && ranks.is_root()) report_phases(phase_times, result.run);
  if (distributed && !options.quiet) {
    const CommunicationStatistics communication = ranks.statistics();
    const double iterations = static_cast<double>(std::max<std::uint64_t>(result.run.last.iteration, 1));
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

int run_train(const std::vector<std::string>& args, Communicator& ranks) { return run_train_job(args, ranks, {}, {}); }

}  // namespace gpstream::cli

#include "api/training.h"

#include "api/parameter_schema.h"
#include "api/rank_agreement.h"
#include "api/training_observers.h"
#include "engine/core/error.h"
#include "engine/core/human_readable.h"
#include "engine/data/row_source_utilities.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/sparse/sparse_fit.h"
#include "engine/sparse/sparse_training_method.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>

namespace gpstream {
namespace {

// What the model file says about the run that made it.
ModelDescription describe_model(const TrainingConfiguration& configuration, const DatasetDescription& dataset,
                                TrainingSummary training) {
  ModelDescription description;
  description.prior = configuration.prior;
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

// Text that changes whenever a number of the prior or the standardisation does (hex floats: exact).
std::string model_text(const TrainingConfiguration& configuration) {
  const KernelHyperparameters& h = configuration.prior.kernel;
  const MeanFunction& mean = configuration.prior.mean;
  const Standardisation& s = configuration.standardisation;
  std::string text = fmt::format("{} [{:a}]", kernel_name(h), fmt::join(hyperparameter_values(h), " "));
  text +=
      fmt::format("; [{:a}] [{:a}] {:a} {:a} {} [{}] [{:a}]", fmt::join(s.x_mean, " "), fmt::join(s.x_std, " "),
                  s.y_mean, s.y_std, mean.intercept, fmt::join(mean.inputs, " "), fmt::join(mean.coefficients, " "));
  return text;
}

// What the ranks of a distributed job must share (api/rank_agreement.h).
std::vector<AgreedPart> training_job_parts(const TrainingConfiguration& configuration,
                                           const DatasetDescription& dataset) {
  const StoppingRule& stop = configuration.job.stopping;
  const SolverOptions& solver = configuration.solver;
  return {
      {"the training data (a dataset of other contents)",
       digest_of(fmt::format("{} {} {}", dataset.fingerprint, dataset.rows, dataset.columns))},
      {"the prior (kernel, noise, mean) and the standardisation", digest_of(model_text(configuration))},
      {"the method, the seed and the stopping rule",
       digest_of(fmt::format("{} {} {} {} {} {:a} {} {:a} {} {} {:a} {}", solver.name, solver.active_set_size,
                             solver.candidates, solver.subspace_steps, configuration.seed, stop.tolerance,
                             stop.max_iterations, stop.time_limit_seconds, stop.refresh_every,
                             configuration.cholqr.information_pivots, configuration.online.novelty,
                             configuration.online.passes))},
  };
}

}  // namespace

LearnedModel learn_hyperparameters(Context& context, const TrainingData& data, const Standardisation& standardisation,
                                   const ModelLearningOptions& options, SearchJournal* journal) {
  const std::unique_ptr<TrainingRows> rows = open_training_rows(data, standardisation, MeanFunction{}, context);
  return learn_model(context, rows->rows(), rows->partition(), options, journal);
}

DatasetDescription describe_training_data(const TrainingData& data) {
  return data.from_arrays() ? describe_arrays(data.arrays) : read_dataset_description(data.path);
}

Training::Training(Context& context, TrainingData data, TrainingConfiguration configuration,
                   std::optional<SolverState> resumed, std::string resumed_from)
    : context_(context),
      data_(std::move(data)),
      configuration_(std::move(configuration)),
      method_([&] {
        const TrainingMethod* method = find_training_method(configuration_.solver.name);
        if (method == nullptr) {
          throw InvalidArgument(fmt::format("unknown training method \"{}\" (choose {}, or {})",
                                            configuration_.solver.name, training_method_names(/*dense=*/true),
                                            training_method_names(/*dense=*/false)));
        }
        return method;
      }()),
      resumed_(std::move(resumed)),
      resumed_from_(std::move(resumed_from)) {
  open_rows();
  dataset_ = rows_->description();  // kept here: learn() reopens the rows
  const DatasetDescription& dataset = dataset_;
  if (!resumed_) {
    if (configuration_.dataset_path.empty() && !data_.from_arrays()) {
      configuration_.dataset_path = std::filesystem::absolute(data_.path).string();
    }
    configuration_.dataset_fingerprint = dataset.fingerprint;
    configuration_.rows = dataset.rows;
  }
  // A basis larger than the rows: all of them, said (as scikit-learn's Nystroem does with n_components) — the
  // one rule for every front end; a checkpoint's basis was fitted to its rows already.
  std::size_t& basis = configuration_.solver.active_set_size;
  if (!method_->dense() && basis > dataset.rows) {
    if (resumed_) {
      throw InvalidArgument(fmt::format("a basis of {} rows is larger than the {} training rows", basis, dataset.rows));
    }
    notes_.push_back(
        fmt::format("`basis_size` {} is more than the {} training rows: using {}", basis, dataset.rows, dataset.rows));
    basis = dataset.rows;
  }
  check_ranks_agree(context_.communicator(), training_job_parts(configuration_, dataset));
  if (resumed_ && context_.communicator().size() > 1) take_own_rows(*resumed_, rows_->partition());
}

Training::~Training() = default;

void Training::open_rows() {
  Communicator& ranks = context_.communicator();
  const StoppingRule& stopping = configuration_.job.stopping;
  const auto open = [&] {
    const HeldVectors held = vectors_held(*method_, configuration_.solver);
    rows_.reset();  // its memory back in the budget before the rows are opened again
    rows_ = open_training_rows(
        data_, configuration_.standardisation, configuration_.prior.mean, context_,
        {.vectors_per_row = held.of_own_rows + (stopping.refresh_every > 0 ? 1 : 0),
         .vectors_of_every_row = held.of_every_row,
         .vectors_advice = held.of_every_row == 0
                               ? ""
                               : fmt::format(", or no past steps ({} of the vectors are the {} past "
                                             "steps of the subspace acceleration)",
                                             held.of_every_row, configuration_.solver.subspace_steps),
         .expected_fingerprint =
             resumed_ ? std::optional<std::string>(configuration_.dataset_fingerprint) : std::nullopt,
         .expected_by = resumed_from_,
         .verify_contents = !contents_verified_,
         .rank = ranks.rank(),
         .ranks = ranks.size()});
    contents_verified_ = true;  // once a job: learn() opens the rows again
  };
  std::size_t& steps = configuration_.solver.subspace_steps;
  if (resumed_ || !configuration_.fit_subspace_steps_to_budget || steps == 0) return open();
  // Default past steps shrink to what the budget holds (every rank alike), rather than refuse the job.
  const std::size_t wanted = steps;
  for (;;) {
    bool fits = true;
    try {
      open();
    } catch (const MemoryBudgetExceeded&) {
      if (steps == 0) throw;
      fits = false;
    }
    if (!ranks.any(!fits)) break;
    rows_.reset();
    --steps;
  }
  if (steps < wanted) {
    SolverOptions asked = configuration_.solver;
    asked.subspace_steps = wanted;
    notes_.push_back(fmt::format(
        "{} past steps of the subspace acceleration instead of the default {}: the {} vectors of {} values the others "
        "need do not fit the memory budget",
        steps, wanted,
        vectors_held(*method_, asked).of_every_row - vectors_held(*method_, configuration_.solver).of_every_row,
        format_count(rows_->description().rows)));
  }
}

const DatasetDescription& Training::dataset() const { return dataset_; }
bool Training::in_memory() const { return rows_->in_memory(); }
const RowPartition& Training::partition() const { return rows_->partition(); }

const Kernel& Training::kernel() const {
  GPSTREAM_CHECK(kernel_ != nullptr, "Training::kernel() before prepare()");
  return *kernel_;
}

LearnedModel Training::learn(const ModelLearningOptions& options, SearchJournal* journal) {
  GPSTREAM_CHECK(!resumed_ && kernel_ == nullptr, "hyperparameters are learned by a fresh run, before prepare()");
  LearnedModel learned = learn_model(context_, rows_->rows(), rows_->partition(), options, journal);
  configuration_.prior = learned_prior(learned);
  // The targets the solver sees are the residuals of the learned mean.
  if (!configuration_.prior.mean.coefficients.empty()) open_rows();
  return learned;
}

std::string Training::prepare(const ColumnCacheSettings& cache) {
  GPSTREAM_CHECK(kernel_ == nullptr, "Training::prepare() called twice");
  const DatasetDescription& dataset = dataset_;
  // The learned configuration too.
  check_ranks_agree(context_.communicator(), training_job_parts(configuration_, dataset));
  kernel_ = make_kernel(configuration_.prior.kernel, dataset.columns);
  // Before any work: a model whose variances overflow in the target's units could not predict.
  validate_model_description(describe_model(configuration_, dataset, {}), "the model of " + data_.name());
  kernel_matrix_ = std::make_unique<KernelMatrix>(context_, rows_->rows(), rows_->partition(), *kernel_);
  if (method_->dense() && method_->make_dense == nullptr) {  // auto: the solver for this kernel, said why
    const SolverChoice choice =
        choose_dense_solver(configuration_.prior.kernel, dataset.rows, dataset.columns, kernel_matrix_->distributed());
    method_ = &choice.method;
    configuration_.solver.name = choice.method.name;
    solver_choice_ = choice.reason;
  }
  y_ = read_all_targets(rows_->rows());
  if (method_->iterative()) {
    state_ = resumed_ ? std::move(*resumed_)
                      : initial_solver_state(method_->dense() ? std::span<const double>(y_) : std::span<const double>{},
                                             configuration_.seed);
    if (method_->dense()) {
      solver_ = make_solver(configuration_.solver, *kernel_matrix_);
      iterative_ = std::make_unique<DenseSolverRun>(*solver_, *kernel_matrix_, state_, y_);
    } else {
      auto made = make_sparse_training_method(sparse_method_options(configuration_), *kernel_matrix_, y_, state_);
      sparse_ = made.get();
      iterative_ = std::move(made);
    }
  }
  std::string cache_line = configure_column_cache(
      *kernel_matrix_, {configuration_.solver.name, method_->column_reuse, configuration_.solver.active_set_size},
      cache);
  if (solver_) precision_choice_ = solver_->plan_precision(state_);
  return cache_line;
}

void write_training_checkpoint(const std::string& path, const TrainingConfiguration& configuration,
                               const SolverState& state, const CheckpointMeasure& measure) {
  write_checkpoint(path, configuration, stored_parameters(configuration), state, measure);
}

Checkpoint read_training_checkpoint(const std::string& path) {
  Checkpoint checkpoint = read_checkpoint(path);
  restore_parameters(checkpoint.parameters, checkpoint.configuration, path);
  return checkpoint;
}

void Training::write_checkpoint_now(const std::string& path) {
  if (sparse_ != nullptr) sparse_->store_state();
  Communicator& ranks = context_.communicator();
  // The measure --tol is compared with (methods that run to completion have
  // none), on every rank: it may sum over them.
  const CheckpointMeasure measure =
      iterative_ != nullptr && iterative_->converges()
          ? CheckpointMeasure{iterative_->convergence_measure(), iterative_->measure_name()}
          : CheckpointMeasure{};
  if (ranks.size() == 1) {
    write_training_checkpoint(path, configuration_, state_, measure);
    return;
  }
  // One checkpoint for the job: every rank's rows of α and g, in rank order, written by rank 0.
  SolverState whole = state_;
  whole.alpha = ranks.all_gather(state_.alpha);
  whole.gradient = ranks.all_gather(state_.gradient);
  if (ranks.is_root()) write_training_checkpoint(path, configuration_, whole, measure);
}

TrainingResult Training::run(const std::string& checkpoint_path, std::vector<RunObserver*> observers) {
  GPSTREAM_CHECK(kernel_matrix_ != nullptr, "Training::run() before prepare()");
  const DatasetDescription& dataset = dataset_;
  const TrainingJob& job = configuration_.job;
  Communicator& ranks = context_.communicator();
  TrainingResult result;
  result.configuration = configuration_;
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t evaluations_before = kernel_matrix_->kernel_evaluations();
  std::optional<SparseModel> sparse;
  if (!iterative_) {
    // One or two streamed passes on a random basis: nothing to checkpoint.
    sparse = fit_direct_sparse_model(sparse_method_options(configuration_), *kernel_matrix_, y_);
    result.run.reason = StopReason::solved_directly;
    result.run.last.iteration = 1;
    result.run.last.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.run.last.kernel_evaluations = kernel_matrix_->kernel_evaluations() - evaluations_before;
  } else {
    // The side files' observers warn through the Context (to the caller's observers) when a write fails.
    const WarningSink warn = [this](const std::string& message) { context_.warn(message); };
    std::unique_ptr<TrainingLogObserver> log;
    if (!job.log_path.empty() && ranks.is_root()) {
      log = std::make_unique<TrainingLogObserver>(
          job.log_path, resumed_ ? std::optional<std::uint64_t>(state_.iteration) : std::nullopt, warn);
      observers.push_back(log.get());
    }
    std::unique_ptr<CheckpointObserver> checkpoints;
    if (!checkpoint_path.empty()) {
      checkpoints = std::make_unique<CheckpointObserver>([&] { write_checkpoint_now(checkpoint_path); },
                                                         job.checkpoint_every_seconds, warn,
                                                         [&ranks](bool due) { return ranks.any(due); });
      observers.push_back(checkpoints.get());
    }
    {
      const Context::ObserverScope observe(context_, observers);
      result.run = run_iterations(*iterative_, *kernel_matrix_, job.stopping, !resumed_);
    }
    if (checkpoints) {
      result.checkpoints_written = checkpoints->written();
      result.last_checkpoint_iteration = checkpoints->last_written_iteration();
      result.last_checkpoint_failure = checkpoints->last_failure();
    }
    if (result.run.reason == StopReason::interrupted) return result;
    if (sparse_ != nullptr) sparse = sparse_->model();
  }

  const SolverRun& run = result.run;
  const PrecisionRecord precision = solver_ ? precision_record(state_) : PrecisionRecord{};
  const TrainingSummary summary{
      .solver = configuration_.solver.name,
      .stop_reason = describe(run.reason),
      .iterations = run.last.iteration,
      .convergence_measure = run.last.convergence_measure,
      .tolerance = method_->stops_at_tolerance() ? job.stopping.tolerance : 0.0,
      .seconds = run.last.elapsed_seconds,
      .kernel_evaluations = run.last.kernel_evaluations,
      .precision = precision_name(precision),
      .exact_residuals_in_single_precision = precision.exact_residuals,
  };
  if (sparse) {
    const KernelHyperparameters trained_kernel = sparse->prior.kernel;  // CholQR learns its own; keep it
    static_cast<ModelDescription&>(*sparse) = describe_model(configuration_, dataset, summary);
    sparse->prior.kernel = trained_kernel;
    result.model.emplace(std::move(*sparse));
  } else {
    DenseModel dense;
    static_cast<ModelDescription&>(dense) = describe_model(configuration_, dataset, summary);
    dense.alpha = ranks.size() == 1 ? std::move(state_.alpha) : ranks.all_gather(state_.alpha);
    result.model.emplace(std::move(dense));
  }
  return result;
}

}  // namespace gpstream

// Training: one training job, step by step — its rows opened (a dataset
// file or the caller's arrays), its kernel, hyperparameters and prior mean
// learned when asked, its method (the registry's, engine/training/
// training_method.h) made and run under the driver with the job's training
// log and checkpoints, its Model made. `gpstream train` and Python's fit
// are both this class: they differ only in what they report between the
// steps and how they show progress (observers).
//
//   Training training(context, TrainingData::file("train.h5"), configuration);
//   training.learn(learning_options);          // optional, fresh runs only
//   training.prepare(cache_settings);          // the method's memory held
//   TrainingResult result = training.run(checkpoint_path, {&progress});
//   result.model->save("model.h5", ExistingOutput::refuse);
//
// On the ranks of a distributed run (the Context's communicator) each rank
// opens its own rows; every rank makes the same calls; the model and the
// checkpoints are whole on rank 0.
#pragma once

#include "api/model.h"
#include "engine/core/context.h"
#include "engine/hyper/model_learning.h"
#include "engine/kernels/column_cache_setup.h"
#include "engine/solvers/solver_driver.h"
#include "engine/training/training_method.h"
#include "engine/training/training_configuration.h"
#include "storage/checkpoint/checkpoint_file.h"
#include "storage/dataset/training_rows.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpstream {

struct TrainingResult {
  SolverRun run;  // how it ended; reason interrupted when the Context's stop request ended it
  // The model with its description (on rank 0 of a distributed run); none when interrupted.
  std::optional<Model> model;
  // The checkpoints of the run: how many were written, the iteration of the
  // last one, and why the last attempt failed ("" when it did not).
  std::size_t checkpoints_written = 0;
  std::optional<std::uint64_t> last_checkpoint_iteration;
  std::string last_checkpoint_failure;
  // The configuration the job ran: its learned model, the solver `auto` chose, a basis fitted to the rows.
  TrainingConfiguration configuration;
};

// Learns a kernel, its hyperparameters and the prior mean on `data`
// (engine/hyper/model_learning.h) without training a model: `gpstream
// hyper`. (A training job learns on its own rows: Training::learn.)
LearnedModel learn_hyperparameters(Context& context, const TrainingData& data, const Standardisation& standardisation,
                                   const ModelLearningOptions& options, SearchJournal* journal = nullptr);

// Training checkpoints (storage/checkpoint/checkpoint_file.h) with the job's
// parameters named and checked by the parameter schema (parameter_schema.h):
// the one way the front ends and `info` read them.
void write_training_checkpoint(const std::string& path, const TrainingConfiguration& configuration,
                               const SolverState& state, const CheckpointMeasure& measure = {});
Checkpoint read_training_checkpoint(const std::string& path);

// What `data` holds, without training on it: a file's header, or the arrays' statistics and fingerprint (one pass).
DatasetDescription describe_training_data(const TrainingData& data);

class Training {
 public:
  // Opens `data` for the configuration's method: its O(n) vectors reserved
  // in the Context's budget first, X held in memory when it fits.
  // `resumed`: the state of the checkpoint the configuration was read from
  // (the data must have its fingerprint; `resumed_from` names the
  // checkpoint in messages). A fresh configuration's dataset_path,
  // dataset_fingerprint and rows are filled from the data.
  Training(Context& context, TrainingData data, TrainingConfiguration configuration,
           std::optional<SolverState> resumed = std::nullopt, std::string resumed_from = "the checkpoint");
  ~Training();
  Training(const Training&) = delete;
  Training& operator=(const Training&) = delete;

  // What the data hold (valid for the Training's life, across learn()).
  const DatasetDescription& dataset() const;
  const TrainingConfiguration& configuration() const { return configuration_; }
  // What `auto` chose and why (engine/training/training_method.h), once prepare() has; "" for a solver given.
  const std::string& solver_choice() const { return solver_choice_; }
  // The precision of the solver's products and why, once prepare() has (DenseSolver::plan_precision); "" for
  // a method of one precision.
  const std::string& precision_choice() const { return precision_choice_; }
  // The method's entry; `auto`'s until prepare() chose a solver, that solver's after.
  const TrainingMethod& method() const { return *method_; }
  bool resumed() const { return resumed_.has_value(); }
  // What the job changed of its configuration to fit, in words (fewer past
  // steps than the default when they do not fit the memory budget).
  const std::vector<std::string>& notes() const { return notes_; }
  // Whether X is held in memory (else streamed in blocks), and this rank's rows.
  bool in_memory() const;
  const RowPartition& partition() const;

  // Learns the kernel, its hyperparameters and the prior mean on the rows
  // (engine/hyper/model_learning.h); the configuration takes the best, and
  // a learned mean's residuals become the targets. Fresh runs, before prepare.
  LearnedModel learn(const ModelLearningOptions& options, SearchJournal* journal = nullptr);

  // Makes the kernel, the method on its state and the kernel-column cache
  // (their memory held before the run is announced); returns the cache's
  // description. Once, before run.
  std::string prepare(const ColumnCacheSettings& cache);
  const Kernel& kernel() const;
  // What a progress display shows, once prepared: whether the method stops at
  // a tolerance, what its convergence measure is, how many iterations it
  // plans (a basis selection's steps; 0 when it converges instead).
  bool converges() const { return iterative_ != nullptr && iterative_->converges(); }
  std::string measure_name() const { return iterative_ != nullptr ? iterative_->measure_name() : ""; }
  std::uint64_t planned_iterations() const { return iterative_ != nullptr ? iterative_->planned_iterations() : 0; }

  // Runs the method to its stopping rule (configuration().job.stopping),
  // telling `observers` (progress) of every iteration, with the job's
  // training log (job.log_path, "" for none) and a checkpoint to
  // `checkpoint_path` ("" for none) at the start, every
  // job.checkpoint_every_seconds and at the end.
  TrainingResult run(const std::string& checkpoint_path, std::vector<RunObserver*> observers = {});

 private:
  void open_rows();
  void write_checkpoint_now(const std::string& path);

  Context& context_;
  TrainingData data_;
  TrainingConfiguration configuration_;
  const TrainingMethod* method_;
  std::optional<SolverState> resumed_;
  std::string resumed_from_;
  bool contents_verified_ = false;  // the dataset file hashed against its fingerprint (open_rows)
  std::string solver_choice_;
  std::string precision_choice_;
  DatasetDescription dataset_;
  std::unique_ptr<TrainingRows> rows_;
  std::unique_ptr<Kernel> kernel_;
  std::unique_ptr<KernelMatrix> kernel_matrix_;
  std::vector<double> y_;  // this rank's targets
  SolverState state_;
  std::unique_ptr<DenseSolver> solver_;
  std::unique_ptr<IterativeMethod> iterative_;  // null for a direct sparse model
  SparseTrainingMethod* sparse_ = nullptr;      // the method, when it is an iterative sparse model
  std::vector<std::string> notes_;
};

}  // namespace gpstream

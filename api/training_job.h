// A training job from start to end: the one sequence `gpstream train` and
// Python's fit both run, which differ only in how they render its events.
//
//   learn      (a fresh job asked to) the kernel, hyperparameters and prior
//              mean, the search checkpointed into the job's checkpoint every
//              so often and when interrupted; a resumed search replays the
//              evaluations its checkpoint holds;
//   prepare    the method's memory held, the kernel-column cache made;
//   run        to the stopping rule, with the job's training log and
//              checkpoints (the first replaces the search's);
//   interrupt  at any point the Context's stop request ends the job with a
//              JobInterrupted that says where it stopped and what
//              was saved, for the front end to print how to continue.
//
// The steps themselves are Training's (training.h); this is their order and
// the checkpoints between them, written once.
#pragma once

#include "api/job_interrupted.h"
#include "api/search_checkpoints.h"
#include "api/training.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gpstream {

struct TrainingJobSpecification {
  TrainingData data;
  TrainingConfiguration configuration;
  // A job continued from a training checkpoint: its state, and the checkpoint's path (for messages).
  std::optional<SolverState> resumed_state;
  std::string resumed_from;
  // Learn the model first (a fresh job): how. The search's checkpoint names itself by `search`
  // (command and arguments; the data's fingerprint is filled in); `replay` holds the evaluations of the
  // search it continues.
  std::optional<ModelLearningOptions> learning;
  SearchCheckpoint search;
  SearchCheckpoint replay;
  // Where the job checkpoints ("" for nowhere), and its kernel-column cache.
  std::string checkpoint_path;
  ColumnCacheSettings cache;
};

// What a front end hears of a job, in order; each has a default that shows nothing.
class TrainingJobEvents {
 public:
  virtual ~TrainingJobEvents() = default;
  // Before the search: what it learns, and how many evaluations of a resumed search it replays.
  virtual void on_learning(const Training&, const ModelLearningOptions&, std::size_t /*replayed*/) {}
  // The search's progress, an evaluation at a time (null: none shown).
  virtual RunObserver* search_progress() { return nullptr; }
  // The search's result, already taken into the job's configuration.
  virtual void on_learned(const Training&, const ModelLearningOptions&, const LearnedModel&) {}
  // The method made and its memory held; `cache` describes the kernel-column cache.
  virtual void on_prepared(const Training&, const std::string& /*cache*/) {}
  // The run's progress, an iteration at a time (null: none shown); asked once prepared.
  virtual RunObserver* training_progress(const Training&) { return nullptr; }
  // A search checkpoint that could not be written (the job goes on).
  virtual void on_warning(const std::string&) {}
};

// Runs the job; the result holds its model (on rank 0 of a distributed run). Throws
// JobInterrupted when stopped, and each step's errors as they come.
TrainingResult run_training_job(Context& context, TrainingJobSpecification job, TrainingJobEvents& events);

}  // namespace gpstream

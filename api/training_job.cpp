#include "api/training_job.h"

#include <utility>

namespace gpstream {
namespace {

// The search of a fresh job asked to learn, checkpointed into the job's checkpoint until the
// training's first checkpoint replaces it.
void learn(Context& context, Training& training, TrainingJobSpecification& job, TrainingJobEvents& events) {
  SearchCheckpoint identity = std::move(job.search);
  identity.dataset_fingerprint = training.dataset().fingerprint;
  SearchCheckpoints searching(job.checkpoint_path, training.configuration().job.checkpoint_every_seconds,
                              std::move(identity), context.communicator().is_root(), std::move(job.replay),
                              [&events](const std::string& message) { events.on_warning(message); });
  const ModelLearningOptions& options = *job.learning;
  events.on_learning(training, options, searching.replayed());
  std::vector<RunObserver*> observers;
  if (RunObserver* progress = events.search_progress()) observers.push_back(progress);
  const Context::ObserverScope observe(context, observers);
  const LearnedModel learned = searching.run([&](SearchJournal& journal) { return training.learn(options, &journal); });
  events.on_learned(training, options, learned);
}

}  // namespace

TrainingResult run_training_job(Context& context, TrainingJobSpecification job, TrainingJobEvents& events) {
  Training training(context, std::move(job.data), std::move(job.configuration), std::move(job.resumed_state),
                    "checkpoint '" + job.resumed_from + "'");
  if (job.learning && !training.resumed()) learn(context, training, job, events);
  const std::string cache = training.prepare(job.cache);
  events.on_prepared(training, cache);
  std::vector<RunObserver*> observers;
  if (RunObserver* progress = events.training_progress(training)) observers.push_back(progress);
  TrainingResult result = training.run(job.checkpoint_path, observers);
  if (result.run.reason == StopReason::interrupted) {
    JobInterrupted interrupted("interrupted", JobInterrupted::Stage::training);
    interrupted.checkpoint_path = job.checkpoint_path;
    interrupted.iteration = result.run.last.iteration;
    interrupted.last_checkpoint_iteration = result.last_checkpoint_iteration;
    interrupted.last_checkpoint_failure = result.last_checkpoint_failure;
    throw interrupted;
  }
  return result;
}

}  // namespace gpstream

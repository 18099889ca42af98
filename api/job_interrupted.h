// How a long job tells its front end it was stopped: a training job
// (training_job.h) while learning or training, or a search run alone
// (`gpstream hyper`: SearchCheckpoints::run).
#pragma once

#include "engine/core/error.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gpstream {

// A job (a training job, or a search of its own) stopped by its Context's stop request (Ctrl-C, SIGTERM): where, and what was saved. what() is the
// engine's word for the stop; each front end adds how its user continues the job.
class JobInterrupted : public Cancelled {
 public:
  enum class Stage { learning, training };
  JobInterrupted(const std::string& reason, Stage where) : Cancelled(reason), stage(where) {}

  Stage stage;
  std::string checkpoint_path;  // "" when the job had none: nothing was saved
  // learning: the evaluations the search checkpoint holds.
  std::size_t evaluations_saved = 0;
  // training: the iteration it stopped at, the last checkpoint's iteration, and why the last
  // checkpoint could not be written ("" when it was).
  std::uint64_t iteration = 0;
  std::optional<std::uint64_t> last_checkpoint_iteration;
  std::string last_checkpoint_failure;
};

}  // namespace gpstream

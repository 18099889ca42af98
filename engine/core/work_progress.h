// Progress of work that keeps its own loop instead of the solver driver's —
// a committee machine's modules, SRM-Trans's blocks of test rows, k-means
// passes, a hyperparameter search's evaluations (NLopt drives those) — told
// to the Context's observers through the same IterationReport, with the
// Context's stop request honoured between steps.
#pragma once

#include "engine/core/context.h"
#include "engine/core/progress.h"

#include <chrono>
#include <string>

namespace gpstream {

class WorkProgress {
 public:
  // Tells the observers on_start with `total` units of work to do (0: unknown).
  WorkProgress(Context& context, std::uint64_t total);
  // on_stop: complete, or interrupted when left by an exception.
  ~WorkProgress();
  WorkProgress(const WorkProgress&) = delete;
  WorkProgress& operator=(const WorkProgress&) = delete;

  // One step done: on_iteration with `report` (its iteration counted here
  // when 0, its elapsed time and total filled in).
  void step(IterationReport report);
  // step() with only the units of work done.
  void advance(std::uint64_t done);
  // Throws Cancelled("<what> stopped") when the Context's stop was requested
  // — on any rank of a distributed run (a collective: every rank calls it at
  // the same steps, and all stop together).
  void throw_if_stopped(const std::string& what) const;

 private:
  Context& context_;
  std::uint64_t total_;
  std::chrono::steady_clock::time_point start_;
  IterationReport last_;
  int exceptions_at_start_;
};

}  // namespace gpstream

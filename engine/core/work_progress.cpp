#include "engine/core/work_progress.h"

#include <exception>

namespace gpstream {

WorkProgress::WorkProgress(Context& context, std::uint64_t total)
    : context_(context),
      total_(total),
      start_(std::chrono::steady_clock::now()),
      exceptions_at_start_(std::uncaught_exceptions()) {
  last_.total = total;
  for (RunObserver* observer : context_.observers()) observer->on_start(last_);
}

WorkProgress::~WorkProgress() {
  const StopReason reason =
      std::uncaught_exceptions() > exceptions_at_start_ ? StopReason::interrupted : StopReason::complete;
  try {
    for (RunObserver* observer : context_.observers()) observer->on_stop(last_, reason);
  } catch (...) {  // a destructor must not throw; the work's own outcome stands
  }
}

void WorkProgress::step(IterationReport report) {
  if (report.iteration == 0) report.iteration = last_.iteration + 1;
  report.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (report.total == 0) report.total = total_;
  last_ = report;
  for (RunObserver* observer : context_.observers()) observer->on_iteration(last_);
}

void WorkProgress::advance(std::uint64_t done) {
  IterationReport report;
  report.done = done;
  step(report);
}

void WorkProgress::throw_if_stopped(const std::string& what) const {
  // Agreed over the ranks: the loops of a distributed run meet in collectives, so all stop at the same step.
  if (context_.communicator().any(context_.stop_requested())) throw Cancelled(what + " stopped");
}

}  // namespace gpstream

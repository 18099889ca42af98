#include "engine/core/progress.h"

namespace gpstream {

std::string describe(StopReason reason) {
  switch (reason) {
    case StopReason::converged:
      return "converged";
    case StopReason::iteration_limit:
      return "iteration limit reached";
    case StopReason::time_limit:
      return "time limit reached";
    case StopReason::interrupted:
      return "interrupted";
    case StopReason::solved_directly:
      return "solved directly";
    case StopReason::complete:
      return "complete";
  }
  return "stopped";
}

}  // namespace gpstream

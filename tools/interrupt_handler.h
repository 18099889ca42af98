// InterruptHandler: while alive, SIGINT and SIGTERM ask the running work to
// stop (through a StopFlag) instead of killing the process, so that it can
// remove partial outputs or write a checkpoint. A second signal kills at once.
#pragma once

#include "engine/core/stop_flag.h"

namespace gpstream::cli {

class InterruptHandler {
 public:
  explicit InterruptHandler(StopFlag& flag);
  ~InterruptHandler();
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;
};

}  // namespace gpstream::cli

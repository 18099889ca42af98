// InterruptHandler: while alive, SIGINT and SIGTERM ask the running work to
// stop (through a StopFlag) instead of killing the process, so that it can
// remove partial outputs or write a checkpoint. A second signal kills at once.
// The handlers from before come back when it goes (the Python module runs
// commands inside an interpreter that has its own).
#pragma once

#include "api/compute.h"

#include <signal.h>

#include <array>

namespace gpstream::cli {

class InterruptHandler {
 public:
  explicit InterruptHandler(StopFlag& flag);
  ~InterruptHandler();
  InterruptHandler(const InterruptHandler&) = delete;
  InterruptHandler& operator=(const InterruptHandler&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> previous_{};  // restored when the handler goes
};

// While alive, those signals ask the work running in `context` to stop (its stop request).
class ContextInterrupts {
 public:
  explicit ContextInterrupts(Context& context) : context_(context), handler_(flag_) { context.set_stop_flag(&flag_); }
  ~ContextInterrupts() { context_.set_stop_flag(nullptr); }
  ContextInterrupts(const ContextInterrupts&) = delete;
  ContextInterrupts& operator=(const ContextInterrupts&) = delete;

 private:
  Context& context_;
  StopFlag flag_;
  InterruptHandler handler_;
};

}  // namespace gpstream::cli

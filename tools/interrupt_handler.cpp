#include "tools/interrupt_handler.h"

#include <csignal>

namespace gpstream::cli {
namespace {

// A signal handler can reach only static storage; this pointer is the one
// piece of process-wide state in gpstream, set and cleared by the RAII owner.
std::atomic<StopFlag*> active_flag{nullptr};

extern "C" void request_stop(int signal_number) {
  if (StopFlag* flag = active_flag.load()) flag->request();
  std::signal(signal_number, SIG_DFL);  // a second Ctrl-C ends the process
}

}  // namespace

InterruptHandler::InterruptHandler(StopFlag& flag) {
  StopFlag* expected = nullptr;
  GPSTREAM_CHECK(active_flag.compare_exchange_strong(expected, &flag),
                 "another gpstream command is running in this process: one runs at a time (its Ctrl-C handling "
                 "is process-wide)");
  // SIGHUP too: a closed terminal must leave a checkpoint like Ctrl-C does.
  struct sigaction stop = {};
  stop.sa_handler = request_stop;
  sigemptyset(&stop.sa_mask);
  for (std::size_t k = 0; k < kSignals.size(); ++k) sigaction(kSignals[k], &stop, &previous_[k]);
}

InterruptHandler::~InterruptHandler() {
  // The handlers from before (the default in the command line, Python's KeyboardInterrupt in the module).
  for (std::size_t k = 0; k < kSignals.size(); ++k) sigaction(kSignals[k], &previous_[k], nullptr);
  active_flag.store(nullptr);
}

}  // namespace gpstream::cli

#include "tools/interrupt_handler.h"

#include "engine/core/error.h"

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
  GPSTREAM_CHECK(active_flag.compare_exchange_strong(expected, &flag), "only one InterruptHandler may be active");
  // SIGHUP too: a closed terminal must leave a checkpoint like Ctrl-C does.
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal_number, request_stop);
}

InterruptHandler::~InterruptHandler() {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal_number, SIG_DFL);
  active_flag.store(nullptr);
}

}  // namespace gpstream::cli

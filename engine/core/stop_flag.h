// A request to stop long work early, shared between the thread that asks
// (a signal handler, a time limit) and the work that polls it.
#pragma once

#include <atomic>
#include <exception>

namespace gpstream {

class StopFlag {
 public:
  // Async-signal-safe: a lock-free atomic store.
  void request() noexcept { requested_.store(true, std::memory_order_relaxed); }
  bool requested() const noexcept { return requested_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> requested_{false};
  static_assert(std::atomic<bool>::is_always_lock_free, "StopFlag must be usable from a signal handler");
};

// Thrown where a stop request ended work part-way and the work was dropped,
// its state left as it was before (callers of
// KernelMatrix::multiply_unless_stopped): the solver driver stops the run as
// interrupted, and a resumed run does that work again from the start.
class StopRequested : public std::exception {
 public:
  const char* what() const noexcept override { return "stopped on request"; }
};

}  // namespace gpstream

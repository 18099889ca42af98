// A request to stop long work early, shared between the thread that asks
// (a signal handler, a time limit) and the work that polls it.
#pragma once

#include <atomic>

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

}  // namespace gpstream

// Context: what one run may use, passed explicitly into the engine (as
// xgboost passes its Context) instead of read from globals — the threads of
// its parallel work, the memory budget and how it is split, the seed, and
// the progress/stop sink (where reports go, where stop requests come from).
//
// The CLI makes one per command from its thread, memory and seed options; tests
// and benchmarks make their own. Solvers and models reach it through the
// KernelMatrix they work on (KernelMatrix::context()); entry points without
// one take it as their first argument. A run's O(n) vectors (α, g, y, …) are
// reserved up front by whoever opens the training rows (storage's
// TrainingRows), since whether X can stay resident depends on them.
#pragma once

#include "engine/core/communicator.h"
#include "engine/core/error.h"
#include "engine/core/phase_times.h"
#include "engine/core/progress.h"
#include "engine/core/stop_flag.h"
#include "engine/core/blas_threads.h"

#include <tbb/task_arena.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gpstream {

class MemoryBudget;

// Thrown when something does not fit the memory budget: the message says
// what needed how much, and what holds the rest.
class MemoryBudgetExceeded : public Error {
 public:
  using Error::Error;
};

// A part of the budget held for one purpose; returned when destroyed.
class MemoryReservation {
 public:
  MemoryReservation() = default;
  MemoryReservation(MemoryReservation&& other) noexcept { *this = std::move(other); }
  MemoryReservation& operator=(MemoryReservation&& other) noexcept;
  MemoryReservation(const MemoryReservation&) = delete;
  MemoryReservation& operator=(const MemoryReservation&) = delete;
  ~MemoryReservation() { release(); }

  std::size_t bytes() const { return bytes_; }
  void release();

 private:
  friend class MemoryBudget;
  MemoryReservation(MemoryBudget* budget, std::uint64_t id, std::size_t bytes)
      : budget_(budget), id_(id), bytes_(bytes) {}
  MemoryBudget* budget_ = nullptr;
  std::uint64_t id_ = 0;
  std::size_t bytes_ = 0;
};

// The whole process's memory budget as a ledger: each part of a run that
// holds memory in proportion to the data (the O(n) vectors, resident rows,
// row blocks in flight, factors, variance batches) reserves its share, so the
// parts add up to the budget and the split can be reported. Reservations
// must not outlive the budget.
class MemoryBudget {
 public:
  explicit MemoryBudget(std::size_t total_bytes) : total_(total_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  std::size_t total() const { return total_; }
  std::size_t available() const;

  // Holds `bytes` for `purpose` ("the n×n Cholesky factor"); throws
  // MemoryBudgetExceeded naming the purpose, the figures and what holds the
  // rest, followed by `advice` ("use fewer rows") when given.
  MemoryReservation reserve(const std::string& purpose, std::size_t bytes, const std::string& advice = "");
  // For what can work in less (row blocks, batches): min(wanted, available() / divisor), at least `minimum`.
  MemoryReservation reserve_up_to(const std::string& purpose, std::size_t wanted, std::size_t divisor,
                                  std::size_t minimum = 0);

  // "memory budget 2.0 GiB: 1.4 MiB for 6 vectors of 30,000 rows, 64.0 MiB for row blocks in flight, 1.9 GiB free"
  std::string describe() const;

 private:
  friend class MemoryReservation;
  void release(std::uint64_t id);
  struct Part {
    std::uint64_t id;
    std::string purpose;
    std::size_t bytes;
  };
  mutable std::mutex mutex_;
  std::size_t total_;
  std::size_t reserved_ = 0;
  std::uint64_t next_id_ = 1;
  std::vector<Part> parts_;
};

class Context {
 public:
  struct Settings {
    unsigned threads = 0;                                    // 0: every core the process may use
    std::size_t memory_budget_bytes = std::size_t{1} << 30;  // the whole process's
    std::uint64_t seed = 1;
    // The ranks of a distributed run; null: this process alone. Must outlive the Context.
    Communicator* communicator = nullptr;
    // Whether the budget is the whole process's: then the memory the process
    // holds when the Context is made (its code, its libraries, a caller's
    // arrays) is the ledger's first entry, and a budget smaller than it is
    // refused. Thread stacks and BLAS's per-thread buffers (a few MiB) that
    // appear later are not counted.
    bool include_process_memory = false;
    // Where the phases of an iteration are timed (engine/core/phase_times.h); null: not timed. Must outlive
    // the Context.
    PhaseTimes* phase_times = nullptr;
  };

  explicit Context(const Settings& settings);
  Context() : Context(Settings{}) {}
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  unsigned threads() const { return threads_; }
  PhaseTimes* phase_times() const { return phase_times_; }
  // The ranks this run's training rows are partitioned among (one, unless distributed).
  Communicator& communicator() const { return *communicator_; }
  std::uint64_t seed() const { return seed_; }
  MemoryBudget& memory() { return memory_; }
  const MemoryBudget& memory() const { return memory_; }

  // Runs f() with oneTBB limited to threads(): every parallel_for inside, at
  // any depth, uses this arena. Entry points that start parallel work call it.
  template <typename Function>
  decltype(auto) execute(Function&& function) {
    return arena_->execute(std::forward<Function>(function));
  }

  // While the result lives BLAS may use threads() threads: for one large
  // factorisation with nothing else running. Elsewhere BLAS runs
  // single-threaded inside the tasks (core/blas_threads.h).
  ScopedBlasThreads parallel_blas() const { return ScopedBlasThreads(static_cast<int>(threads_)); }

  // The progress/stop sink. A stop request is polled between iterations.
  void set_stop_flag(const StopFlag* stop) { stop_ = stop; }
  bool stop_requested() const { return stop_ != nullptr && stop_->requested(); }
  std::span<RunObserver* const> observers() const { return observers_; }
  // Reports something the run recovered from and carried on after (a cached
  // kernel column that could not be read back and was computed again): to
  // the observers, or to standard error when there are none.
  void warn(const std::string& message) const;

  // Sets the observers of one stage of a run (the solve, a hyperparameter
  // search before it), restoring the previous ones when it ends.
  class ObserverScope {
   public:
    ObserverScope(Context& context, std::vector<RunObserver*> observers);
    ~ObserverScope();
    ObserverScope(const ObserverScope&) = delete;
    ObserverScope& operator=(const ObserverScope&) = delete;

   private:
    Context& context_;
    std::vector<RunObserver*> previous_;
  };

 private:
  unsigned threads_;
  std::uint64_t seed_;
  std::unique_ptr<SingleProcess> single_process_;  // when no communicator was given
  Communicator* communicator_;
  MemoryBudget memory_;
  MemoryReservation process_memory_;  // Settings::include_process_memory
  std::unique_ptr<tbb::task_arena> arena_;
  const StopFlag* stop_ = nullptr;
  std::vector<RunObserver*> observers_;
  PhaseTimes* phase_times_;
};

}  // namespace gpstream

#include "engine/core/worker_team.h"

#include "engine/core/error.h"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <chrono>
#include <limits>

namespace gpstream {
namespace {

// How long an idle helper spins before it sleeps: longer than the serial
// step between two rounds of GBCD's selection (tens of µs), short enough
// that a helper left without work gives its core back at once.
constexpr auto kSpin = std::chrono::microseconds(200);

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

constexpr std::uint64_t round_of(std::uint64_t state) { return state >> 32; }
constexpr std::uint64_t index_of(std::uint64_t state) { return state & 0xffffffffu; }

}  // namespace

void WorkerTeam::run(const std::function<void(WorkerTeam&)>& body) {
  WorkerTeam team;
  const int helpers = tbb::this_task_arena::max_concurrency() - 1;
  if (helpers <= 0) return body(team);
  tbb::task_group group;
  // The helpers leave, and are waited for, however the body ends.
  struct Finish {
    WorkerTeam& team;
    tbb::task_group& group;
    ~Finish() {
      team.finished_.store(true);
      // An empty round wakes the sleepers; one that sees it before
      // `finished_` finds nothing to take.
      const std::uint64_t round = round_of(team.state_.load()) + 1;
      team.slots_[round % 2].count.store(0);
      team.state_.store(round << 32);
      team.state_.notify_all();
      group.wait();
    }
  } finish{team, group};
  for (int k = 0; k < helpers; ++k) group.run([&team] { team.help(); });
  body(team);
}

void WorkerTeam::for_each(std::size_t count, const Item& item) {
  if (count == 0) return;
  GPSTREAM_CHECK(count < (std::uint64_t{1} << 31), "a team round of {} items is more than it can number", count);
  const std::uint64_t round = round_of(state_.load()) + 1;
  Slot& slot = slots_[round % 2];
  slot.item.store(&item, std::memory_order_relaxed);
  slot.count.store(count, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  state_.store(round << 32);                      // publishes the slot (sequentially consistent, as is
  if (sleepers_.load() > 0) state_.notify_all();  // the sleepers' count: no wake-up is lost)
  take_items(round);
  while (done_.load(std::memory_order_acquire) < count) pause();  // items the helpers claimed
  std::exception_ptr error;
  {
    const std::lock_guard lock(error_mutex_);
    std::swap(error, error_);
  }
  if (error) std::rethrow_exception(error);
}

void WorkerTeam::take_items(std::uint64_t round) {
  const Slot& slot = slots_[round % 2];
  std::uint64_t state = state_.load(std::memory_order_acquire);
  while (round_of(state) == round) {
    // Read before the claim, and valid if the claim succeeds: the slot of
    // round r is rewritten only for round r + 2, after round r has ended.
    const Item* item = slot.item.load(std::memory_order_relaxed);
    const std::size_t count = slot.count.load(std::memory_order_relaxed);
    if (index_of(state) >= count) return;
    if (!state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel)) continue;
    run_item(*item, index_of(state));
    done_.fetch_add(1, std::memory_order_release);
    state = state_.load(std::memory_order_acquire);
  }
}

void WorkerTeam::run_item(const Item& item, std::size_t index) {
  try {
    item(index);
  } catch (...) {
    const std::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void WorkerTeam::help() {
  std::uint64_t served = std::numeric_limits<std::uint64_t>::max();
  auto idle_since = std::chrono::steady_clock::now();
  for (unsigned spins = 0; !finished_.load(std::memory_order_acquire); ++spins) {
    const std::uint64_t state = state_.load(std::memory_order_acquire);
    if (round_of(state) != served) {
      served = round_of(state);
      take_items(served);
      idle_since = std::chrono::steady_clock::now();
      spins = 0;
      continue;
    }
    pause();
    if (spins % 64 != 63 || std::chrono::steady_clock::now() - idle_since < kSpin) continue;
    sleepers_.fetch_add(1);
    state_.wait(state);  // returns at once if a round began since `state` was read
    sleepers_.fetch_sub(1);
    idle_since = std::chrono::steady_clock::now();
  }
}

void for_each_item(WorkerTeam* team, std::size_t count, const WorkerTeam::Item& item) {
  if (team != nullptr) return team->for_each(count, item);
  tbb::parallel_for(std::size_t{0}, count, [&](std::size_t index) { item(index); });
}

}  // namespace gpstream

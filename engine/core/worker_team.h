// A team of threads for work made of many short parallel rounds with serial
// steps between them — GBCD's selection: about 30 chunks an iteration, each a
// round of candidate tiles and a block of the factor, then a serial step.
//
// Why not a tbb::parallel_for per round: oneTBB's idle workers go to sleep
// within microseconds, and each round then waits for them to wake. On a
// 16-vCPU virtual machine that cost ~100 µs a round, more than a round's work
// at 16 threads (docs/benchmarks.md, "Scaling with cores"). The team's
// helpers are tasks of the current task arena that stay for the whole phase:
// between rounds they spin for a short while (the serial steps are shorter)
// and only then sleep on an atomic, so a round starts within microseconds.
//
// Which thread runs an item never changes what the item computes, so results
// do not depend on the thread count. The calling thread takes items too and
// never waits for a helper to start: when the arena has no free thread (or
// one thread), the caller runs every item itself. Inside the body, parallel
// work must go through the team: the helpers hold the arena's threads, so a
// tbb::parallel_for there would run on the caller alone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>

namespace gpstream {

class WorkerTeam {
 public:
  using Item = std::function<void(std::size_t)>;

  // Calls body(team) on this thread, with up to max_concurrency − 1 helpers
  // of the current task arena; they leave when it returns (or throws).
  static void run(const std::function<void(WorkerTeam&)>& body);

  // item(i) for every i in [0, count), on this thread and the helpers;
  // returns when all have run. The first exception an item throws is
  // rethrown here, once every item has run.
  void for_each(std::size_t count, const Item& item);

 private:
  WorkerTeam() = default;
  // Runs items of `round` while it is current and has items left.
  void take_items(std::uint64_t round);
  void run_item(const Item& item, std::size_t index);
  // A helper: serves each round it sees until the team finishes.
  void help();

  // The round (high 32 bits) and its next unclaimed item (low 32 bits): a
  // claim is one compare-and-swap, and one from a past round fails.
  std::atomic<std::uint64_t> state_{0};
  // The item and count of round r live in slot r % 2: the next round's are
  // written while a late helper may still read this round's.
  struct Slot {
    std::atomic<const Item*> item{nullptr};
    std::atomic<std::size_t> count{0};
  };
  Slot slots_[2];
  std::atomic<std::size_t> done_{0};      // items of the current round that have run
  std::atomic<std::size_t> sleepers_{0};  // helpers asleep on state_
  std::atomic<bool> finished_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

// item(i) for i in [0, count): on the team when there is one, else one
// tbb::parallel_for task per item.
void for_each_item(WorkerTeam* team, std::size_t count, const WorkerTeam::Item& item);

}  // namespace gpstream

// Where an iteration's time goes, phase by phase (`train --profile`,
// bench/run_thread_scaling.sh): a phase that does not shrink as threads are
// added is the serial part no core count removes. The Context holds one when
// asked (Context::Settings::phase_times); a phase is timed by a ScopedPhase,
// which costs two clock reads when a PhaseTimes is there and nothing else
// when it is not. Phases may run on several threads at once (each adds its
// own time: a phase's total is then core-seconds, and `entries` says how
// often it ran).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpstream {

enum class Phase : std::size_t {
  first_variable,    // GBCD: the first variable of B (an argmax over the rows)
  candidate_pool,    // GBCD: the iteration's candidates drawn, gathered and prepared (the next one's started)
  chunk_solves,      // GBCD: Δα_B = −K̄_BB⁻¹ G_B at each chunk's start (two triangular solves)
  candidate_scores,  // GBCD: E_O = K_OB Δα_B + G_O, each chunk's candidates in tiles on all cores
  greedy_steps,      // GBCD: each step's best candidate (serial)
  factor_block,      // GBCD: K̄_SB, K̄_SS and the factor grown by a chunk's choices
  block_solve,       // BCD: G_B gathered, K̄_BB Δ = −G_B solved
  block_product,     // BCD: K(X, B) Δ added to g (all cores)
  subspace_step,     // the past steps' subspace solve and combination
  convergence,       // the convergence measure (a norm over the rows)
  count_
};
inline constexpr std::size_t kPhaseCount = static_cast<std::size_t>(Phase::count_);

std::string_view phase_name(Phase phase);

class PhaseTimes {
 public:
  void add(Phase phase, std::chrono::steady_clock::duration elapsed) noexcept {
    const auto k = static_cast<std::size_t>(phase);
    nanoseconds_[k].fetch_add(static_cast<std::uint64_t>(std::chrono::nanoseconds(elapsed).count()),
                              std::memory_order_relaxed);
    entries_[k].fetch_add(1, std::memory_order_relaxed);
  }
  double seconds(Phase phase) const {
    return 1e-9 * static_cast<double>(nanoseconds_[static_cast<std::size_t>(phase)].load(std::memory_order_relaxed));
  }
  std::uint64_t entries(Phase phase) const {
    return entries_[static_cast<std::size_t>(phase)].load(std::memory_order_relaxed);
  }

 private:
  std::array<std::atomic<std::uint64_t>, kPhaseCount> nanoseconds_{};
  std::array<std::atomic<std::uint64_t>, kPhaseCount> entries_{};
};

// Times its scope into `times` (nothing when it is null).
class ScopedPhase {
 public:
  ScopedPhase(PhaseTimes* times, Phase phase)
      : times_(times),
        phase_(phase),
        start_(times != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
  ~ScopedPhase() {
    if (times_ != nullptr) times_->add(phase_, std::chrono::steady_clock::now() - start_);
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseTimes* times_;
  Phase phase_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gpstream

// The one driver loop of all dense solvers: it owns stopping (‖g‖∞ ≤ tol,
// iteration and time budgets, a stop request), the exact gradient refresh,
// and tells observers about every iteration (progress display, training log,
// checkpoint cadence) — in the way ensmallen's optimisers take callbacks.
#pragma once

#include "engine/core/stop_flag.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/dense_solver.h"

#include <cstdint>
#include <limits>
#include <span>
#include <string>

namespace gpstream {

struct StoppingRule {
  double tolerance = 1e-4;  // on ‖g‖∞, standardised targets (GBCD paper §3)
  std::uint64_t max_iterations = std::numeric_limits<std::uint64_t>::max();
  double time_limit_seconds = std::numeric_limits<double>::infinity();  // for this run
  // Recompute g = K̄α − y exactly every this many iterations (0: never); the
  // drift between the maintained and the exact gradient is reported.
  std::uint64_t refresh_every = 0;
};

enum class StopReason { converged, iteration_limit, time_limit, interrupted, solved_directly };
std::string describe(StopReason reason);

struct IterationReport {
  std::uint64_t iteration = 0;
  double elapsed_seconds = 0.0;  // solver time over all runs
  double objective = 0.0;
  double gradient_max_norm = 0.0;
  std::uint64_t kernel_evaluations = 0;
  double gradient_drift = -1.0;  // ‖g_maintained − g_exact‖∞ when refreshed this iteration, else −1
};

class SolverObserver {
 public:
  virtual ~SolverObserver() = default;
  // Before the first iteration of this run (also when resuming).
  virtual void on_start(const SolverState& /*state*/, const IterationReport& /*report*/) {}
  virtual void on_iteration(const SolverState& /*state*/, const IterationReport& /*report*/) {}
  virtual void on_stop(const SolverState& /*state*/, const IterationReport& /*report*/, StopReason /*reason*/) {}
};

struct SolverRun {
  StopReason reason = StopReason::converged;
  IterationReport last;
};

// Runs `solver` from `state` (fresh when state.iteration == 0 and
// `fresh_start`) until the rule stops it. `stop` is polled between
// iterations: the current iteration always completes.
SolverRun run_solver(DenseSolver& solver, KernelMatrix& kernel, SolverState& state, std::span<const double> y,
                     const StoppingRule& rule, std::span<SolverObserver* const> observers, const StopFlag* stop,
                     bool fresh_start);

// g = K̄α − y by one exact product; returns ‖g_old − g_new‖∞.
double refresh_gradient(KernelMatrix& kernel, SolverState& state, std::span<const double> y);

}  // namespace gpstream

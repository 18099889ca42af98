#include "engine/solvers/solver_driver.h"

#include "engine/core/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gpstream {

std::string describe(StopReason reason) {
  switch (reason) {
    case StopReason::converged: return "converged";
    case StopReason::iteration_limit: return "iteration limit reached";
    case StopReason::time_limit: return "time limit reached";
    case StopReason::interrupted: return "interrupted";
    case StopReason::solved_directly: return "solved directly";
  }
  return "stopped";
}

double refresh_gradient(KernelMatrix& kernel, SolverState& state, std::span<const double> y) {
  std::vector<double> exact(state.alpha.size());
  kernel.multiply(state.alpha.data(), exact.data());
  double drift = 0.0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    exact[i] -= y[i];
    drift = std::max(drift, std::abs(exact[i] - state.gradient[i]));
  }
  state.gradient = std::move(exact);
  return drift;
}

SolverRun run_solver(DenseSolver& solver, KernelMatrix& kernel, SolverState& state, std::span<const double> y,
                     const StoppingRule& rule, std::span<SolverObserver* const> observers, const StopFlag* stop,
                     bool fresh_start) {
  GPSTREAM_CHECK(state.alpha.size() == kernel.size() && state.gradient.size() == kernel.size() && y.size() == kernel.size(),
                 "solver state for {} rows does not fit a problem of {} rows", state.alpha.size(), kernel.size());
  using Clock = std::chrono::steady_clock;
  const auto run_start = Clock::now();
  const double elapsed_before = state.elapsed_seconds;
  const std::uint64_t evaluations_before = kernel.kernel_evaluations();
  const std::uint64_t state_evaluations_before = state.kernel_evaluations;
  auto report = [&](double drift) {
    const double run_seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
    state.elapsed_seconds = elapsed_before + run_seconds;
    state.kernel_evaluations = state_evaluations_before + (kernel.kernel_evaluations() - evaluations_before);
    return IterationReport{state.iteration, state.elapsed_seconds, objective(state, y), gradient_max_norm(state),
                           state.kernel_evaluations, drift};
  };

  if (fresh_start) solver.start(state, y);
  IterationReport current = report(-1.0);
  for (SolverObserver* observer : observers) observer->on_start(state, current);

  StopReason reason = StopReason::converged;
  for (;;) {
    const double run_seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
    if (current.gradient_max_norm <= rule.tolerance) {
      reason = StopReason::converged;
      break;
    }
    if (state.iteration >= rule.max_iterations) {
      reason = StopReason::iteration_limit;
      break;
    }
    if (run_seconds >= rule.time_limit_seconds) {
      reason = StopReason::time_limit;
      break;
    }
    if (stop != nullptr && stop->requested()) {
      reason = StopReason::interrupted;
      break;
    }
    solver.iterate(state, y);
    ++state.iteration;
    double drift = -1.0;
    if (rule.refresh_every > 0 && state.iteration % rule.refresh_every == 0 && !solver.is_direct()) {
      drift = refresh_gradient(kernel, state, y);
      solver.gradient_refreshed(state);
    }
    current = report(drift);
    for (SolverObserver* observer : observers) observer->on_iteration(state, current);
    if (solver.is_direct()) {
      reason = StopReason::solved_directly;
      break;
    }
  }
  for (SolverObserver* observer : observers) observer->on_stop(state, current, reason);
  return {reason, current};
}

}  // namespace gpstream

// The one driver loop of every iterative training method — the dense
// solvers and the greedy selection of sparse bases alike: it owns stopping
// (convergence measure ≤ tol, iteration and time budgets, a stop request),
// keeps the run's clock and kernel-evaluation count, and tells observers
// about every iteration (progress display, training log, checkpoint cadence),
// in the way ensmallen's optimisers take callbacks.
#pragma once

#include "engine/core/progress.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/dense_solver.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace gpstream {

struct StoppingRule {
  // On the convergence measure: the dense solvers' relative residual
  // ‖K̄α − y‖₂/‖y‖₂ (solvers/conditioning.h), SGGP's gap.
  double tolerance = 1e-3;
  std::uint64_t max_iterations = std::numeric_limits<std::uint64_t>::max();  // in all, over every run of the job
  // On the training time over all runs of the job (a resumed run has the rest).
  double time_limit_seconds = std::numeric_limits<double>::infinity();
  // Dense solvers: recompute g = K̄α − y exactly every this many iterations
  // (0: never); the drift between the maintained and the exact gradient is reported.
  std::uint64_t refresh_every = 0;
};

// What a run has done so far, over all its resumptions (checkpointed with its state).
struct RunCounters {
  std::uint64_t iteration = 0;
  double elapsed_seconds = 0.0;
  std::uint64_t kernel_evaluations = 0;
};

// The counters of a SolverState (dense solvers and greedy sparse bases keep theirs there).
RunCounters counters_of(const SolverState& state);
void set_counters_of(SolverState& state, const RunCounters& counters);

// An exact check of a convergence claim (IterativeMethod::certify).
struct Certificate {
  double measure = 0.0;         // the convergence measure computed exactly
  double rounding_floor = 0.0;  // below which that computation is rounding (solvers/conditioning.h)
  double largest_weight = 0.0;  // ‖α‖∞, for the message when the floor defeats the tolerance
  double drift = 0.0;           // |maintained − exact|, reported as a gradient refresh's
  // Without a product: √n·β/‖y‖₂, β the method's bound on max_i |g_i − (K̂α − y)_i|
  // (DenseSolver::gradient_error_bound), so that the exact measure is at most measure + this. The
  // claim holds when that sum meets the tolerance; otherwise the run goes on until it does. −1: the
  // measure was computed exactly.
  double error_bound = -1.0;
  // A single-precision run's claim that the exact measure did not bear out: the run goes on from the
  // exact gradient in double precision (DenseSolver::use_double_precision).
  bool fell_back_to_double = false;
};

// One iteration at a time of a training method, on state it owns.
class IterativeMethod {
 public:
  virtual ~IterativeMethod() = default;
  // Before a fresh run: throws when `tolerance` cannot be met (a dense
  // solver on a K̄ too ill-conditioned for it, solvers/conditioning.h).
  virtual void check_tolerance(double /*tolerance*/) {}
  // Set-up of a fresh run; not called when a run resumes from a checkpoint.
  virtual void start() {}
  virtual void iterate() = 0;
  virtual RunCounters counters() const = 0;
  virtual void set_counters(const RunCounters& counters) = 0;
  virtual double objective() const = 0;
  // Compared with StoppingRule::tolerance: the run has converged at or below
  // it. A measure at or below zero is convergence too (SGGP's gap reaches 0
  // when its two bounds meet; rounding can take it just below). A NaN
  // measure or a non-finite objective stops the run with an Error.
  virtual double convergence_measure() const = 0;
  // True when there is nothing left to do (a basis that reached its size).
  virtual bool complete() const { return false; }
  // False for methods that run to completion (the online GP's passes), whose
  // convergence measure only shows progress and is never compared with the tolerance.
  virtual bool converges() const { return true; }
  // True for direct methods, whose one iteration is the exact solution.
  virtual bool is_direct() const { return false; }
  // What convergence_measure() is, for progress displays ("|g|/|y|", "gap").
  virtual std::string measure_name() const { return "|g|/|y|"; }
  // The iterations the method runs at most when it knows them in advance (a
  // greedy basis: its size), for an ETA; 0 otherwise.
  virtual std::uint64_t planned_iterations() const { return 0; }
  // Units of work done and to do (IterationReport::done, total), when known.
  virtual std::pair<std::uint64_t, std::uint64_t> work_done() const { return {0, 0}; }
  // Called after each iteration; returns a drift to report, or −1.
  virtual double after_iteration(const StoppingRule& /*rule*/) { return -1.0; }
  // The maintained measure at which a claim is made: the tolerance, or
  // below it where the maintained measure drifts by more than rounding (a
  // single-precision run's), so that the exact one meets the tolerance too.
  virtual double claim_level(double tolerance) const { return tolerance; }
  // When convergence_measure() meets the tolerance (or a direct method has
  // solved): the measure computed exactly, which replaces a maintained one,
  // or the maintained one with a bound on its error (Certificate::error_bound);
  // nullopt for methods whose measure is exact already. The driver reports
  // convergence only when the exact measure (or the maintained one plus its
  // bound) meets the tolerance too; the rounding floor is needed (and
  // computed) only when an exact one does not.
  virtual std::optional<Certificate> certify(double /*tolerance*/) { return std::nullopt; }
};

struct SolverRun {
  StopReason reason = StopReason::converged;
  IterationReport last;
};

// Runs `method` (fresh when `fresh_start`) until the rule stops it, counting
// the kernel evaluations `kernel` makes, inside the kernel's Context: its
// threads, its observers (told of every iteration) and its stop request
// (polled between iterations: the current iteration completes, unless it is
// a product over all n² entries that can be dropped — a CG iteration, the
// exact residual at a claim — which ends between panels of columns, the
// state as before it; StopRequested).
// A convergence claim is certified first (IterativeMethod::certify): a
// claim its bound does not prove yet goes on quietly; when
// the exact measure misses the tolerance, the run goes on from it (the
// maintained gradient had drifted), unless the exact measure is rounding
// (its floor above the tolerance), a direct method made the claim, or
// three certifications failed — then K̄'s conditioning defeats the
// tolerance, and the run ends with an Error that says what to do.
SolverRun run_iterations(IterativeMethod& method, KernelMatrix& kernel, const StoppingRule& rule, bool fresh_start);

// A dense solver on its state, as the driver runs it.
class DenseSolverRun final : public IterativeMethod {
 public:
  DenseSolverRun(DenseSolver& solver, KernelMatrix& kernel, SolverState& state, std::span<const double> y);
  void start() override { solver_.start(state_, y_); }
  void iterate() override { solver_.iterate(state_, y_); }
  RunCounters counters() const override;
  void set_counters(const RunCounters& counters) override;
  double objective() const override;
  double convergence_measure() const override;
  bool is_direct() const override { return solver_.is_direct(); }
  // In single precision, a measure above kSinglePrecisionDivergence
  // (its start is 1) restarts the run in double (restart_in_double).
  double after_iteration(const StoppingRule& rule) override;
  // Iterative solvers: a sample of K̄ solved exactly first (solvers/conditioning.h).
  void check_tolerance(double tolerance) override;
  // In single precision: kSinglePrecisionClaim × tolerance.
  double claim_level(double tolerance) const override;
  // ‖K̄α − y‖₂/‖y‖₂ ≤ `tolerance` shown without a product when the
  // solver's error bound β can (√n·β/‖y‖₂ ≤ tolerance/2: the claim holds
  // once ‖g‖₂/‖y‖₂ + √n·β/‖y‖₂ ≤ tolerance, a few iterations later at most);
  // otherwise by one exact product (g refreshed), and when that misses
  // `tolerance`, its rounding floor by a second one (at 1M rows each costs
  // as much as ~2,000 GBCD iterations, so a met claim pays only the first).
  // A stop request drops either product (StopRequested): the state is then
  // as before it, or has the refreshed g. A single-precision run's claim
  // always takes the exact product (its maintained g carries the entries'
  // rounding, ~1e-7 of s² each, which no bound here covers) — one step of
  // mixed-precision iterative refinement [CarsonHigham18]: the exact g
  // replaces the drifted one — and when the exact measure misses
  // `tolerance`, the run goes on in double precision.
  std::optional<Certificate> certify(double tolerance) override;

 private:
  DenseSolver& solver_;
  KernelMatrix& kernel_;
  SolverState& state_;
  // α = 0, g = −y, the solver started afresh in double precision: what a single-precision run that
  // diverged (the entries' rounding large against σ², past the check of plan_precision) does.
  void restart_in_double();

  std::span<const double> y_;
  double target_norm_ = 0.0;  // ‖y‖₂ over all ranks
};

// run_iterations on a DenseSolverRun.
SolverRun run_solver(DenseSolver& solver, KernelMatrix& kernel, SolverState& state, std::span<const double> y,
                     const StoppingRule& rule, bool fresh_start);

// What a product over all n² entries does when a stop is requested while it runs.
enum class OnStopRequest {
  finish,  // runs to its end (the run stops after it)
  drop,    // ends at once, changing nothing, and throws StopRequested
};

// g = K̄α − y by one exact product; returns ‖g_old − g_new‖∞ (over all ranks).
double refresh_gradient(KernelMatrix& kernel, SolverState& state, std::span<const double> y,
                        OnStopRequest on_stop = OnStopRequest::finish);

}  // namespace gpstream

// How long work tells the outside world how it is going: one report per
// iteration and one observer interface, for everything iterative in the
// engine — the dense solvers, the greedy sparse bases, CholQR's epochs, the
// online GP's passes, batches of predictive variances, the modules of a
// committee machine, k-means, the evaluations of a hyperparameter search.
// The CLI's progress line, training log and checkpoint cadence implement it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gpstream {

enum class StopReason { converged, iteration_limit, time_limit, interrupted, solved_directly, complete };
std::string describe(StopReason reason);

// What a report is of: observers tell them apart by it.
enum class ReportKind {
  step,                   // an iteration of a solver, a basis, a variance batch, …
  likelihood_evaluation,  // a hyperparameter search's evaluation: `objective` is −log p, `point` where
  gradient_estimate,      // an all-rows stochastic gradient estimate: no value (`objective` is NaN), a gradient
};

struct IterationReport {
  ReportKind kind = ReportKind::step;
  std::uint64_t iteration = 0;
  double elapsed_seconds = 0.0;  // work time over all runs of a job (a resumed run continues the clock)
  double objective = 0.0;
  // What the work compares with its tolerance: ‖g‖₂/‖y‖₂ for the dense solvers,
  // a greedy basis's gap, CholQR's relative decrease, the largest open
  // residual of a variance batch (IterativeMethod::measure_name says which).
  double convergence_measure = 0.0;
  std::uint64_t kernel_evaluations = 0;
  double gradient_drift = -1.0;  // ‖g_maintained − g_exact‖∞ when refreshed this iteration, else −1
  // Units of work done and to do (test rows, modules, search starts) when the
  // work has a known size; 0 and 0 otherwise.
  std::uint64_t done = 0, total = 0;
  // The current point of a search (a hyperparameter search's [ℓ…, s², σ², a sum's further terms' ℓ…, s²]);
  // empty otherwise. Its signal variances (one per term of a sum) and noise variance, as a trace shows them.
  std::span<const double> point;
  std::span<const double> signal_variances;
  double noise_variance = 0.0;
  // Within a step that runs a solve of its own (an all-rows gradient estimate of a search): the
  // solve's iteration, with convergence_measure the solve's; 0 for the step's own report.
  std::uint64_t inner_iteration = 0;
  // Kernel columns asked of the column cache in this run, and of those how
  // many it held (kernels/kernel_column_cache.h); 0 and 0 without a cache.
  std::uint64_t column_cache_lookups = 0, column_cache_hits = 0;
  // Of the hits, columns read back from the cache's disk tier, and the bytes read for them.
  std::uint64_t column_cache_disk_hits = 0, column_cache_disk_bytes = 0;
  // The cache's estimate of the computation it saved, in core-seconds, less its reads from disk.
  double column_cache_seconds_saved = 0;
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // Before the first iteration of this run (also when resuming).
  virtual void on_start(const IterationReport& /*report*/) {}
  virtual void on_iteration(const IterationReport& /*report*/) {}
  virtual void on_stop(const IterationReport& /*report*/, StopReason /*reason*/) {}
  // Something the run recovered from and carried on (Context::warn).
  virtual void on_warning(const std::string& /*message*/) {}
};

}  // namespace gpstream

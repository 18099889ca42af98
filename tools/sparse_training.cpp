#include "tools/sparse_training.h"

#include "engine/core/error.h"
#include "engine/sparse/greedy_basis_selection.h"
#include "engine/sparse/sparse_fit.h"
#include "tools/training_observers.h"

#include <fmt/format.h>

#include <chrono>

namespace gpstream::cli {

bool is_greedy_sparse_model(const std::string& name) { return name == "sgma" || name == "mpgp" || name == "sggp"; }

bool is_sparse_model(const std::string& name) {
  return name == "sd" || name == "sr" || name == "nystrom" || is_greedy_sparse_model(name);
}

SparseTrainingResult train_sparse_model(SparseTrainingRun& run) {
  const TrainingConfiguration& configuration = run.configuration;
  const std::string& name = configuration.solver.name;
  const std::size_t basis = configuration.solver.active_set_size;
  const std::size_t n = run.kernel.size();
  GPSTREAM_CHECK(basis > 0, "--basis must be at least 1");
  GPSTREAM_CHECK(basis <= n, "--basis {} is larger than the {} training rows; give at most {}", basis, n, n);
  SparseTrainingResult result;

  if (!is_greedy_sparse_model(name)) {
    // One or two streamed passes on a random basis: nothing to checkpoint.
    const auto start = std::chrono::steady_clock::now();
    const std::uint64_t evaluations_before = run.kernel.kernel_evaluations();
    result.model = fit_on_random_basis(name, run.kernel, run.y, basis, configuration.seed);
    result.run.reason = StopReason::solved_directly;
    result.run.last.iteration = 1;
    result.run.last.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.run.last.kernel_evaluations = run.kernel.kernel_evaluations() - evaluations_before;
    return result;
  }

  const bool fresh = !run.resumed;
  SolverState state = fresh ? initial_solver_state({}, configuration.seed) : std::move(*run.resumed);
  const GreedyBasisOptions options{parse_basis_criterion(name), basis, configuration.solver.candidates};
  GreedyBasisSelection selection(run.kernel, run.y, options, state);
  const bool sggp = options.criterion == BasisCriterion::sggp;
  if (!sggp) run.rule.tolerance = 0.0;  // sgma and mpgp stop at the basis size

  ProgressLine progress_line(!run.quiet);
  const TrainingObservers observers(
      std::make_unique<ProgressObserver>(progress_line, name, run.rule.tolerance, sggp ? "gap" : "trace residual", basis),
      run.log_path, !fresh, run.checkpoint_path, run.checkpoint_every, [&] {
        selection.store_state();
        write_checkpoint(run.checkpoint_path, Checkpoint{configuration, state});
      });
  result.run = run_iterations(selection, run.kernel, run.rule, observers.all(), run.stop, fresh);
  if (result.run.reason == StopReason::interrupted) {
    throw interrupted_run(fmt::format("with {} basis rows selected", selection.basis_size()), run.checkpoint_path,
                          run.output);
  }
  result.model = selection.model();
  return result;
}

}  // namespace gpstream::cli

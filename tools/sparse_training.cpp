#include "tools/sparse_training.h"

#include "engine/core/error.h"
#include "engine/sparse/cholqr_selection.h"
#include "engine/sparse/greedy_basis_selection.h"
#include "engine/sparse/online_gp.h"
#include "engine/sparse/sparse_fit.h"
#include "tools/command_line.h"
#include "tools/progress_line.h"
#include "tools/training_observers.h"

#include <fmt/format.h>

#include <chrono>

namespace gpstream::cli {
namespace {

// The method that trains `name`, fresh or from `state`.
std::unique_ptr<SparseTrainingMethod> make_training_method(SparseTrainingRun& run, SolverState& state) {
  const TrainingConfiguration& configuration = run.configuration;
  const std::string& name = configuration.solver.name;
  const std::size_t basis = configuration.solver.active_set_size;
  if (name == "cholqr") {
    CholQrOptions options = run.cholqr;
    options.basis_size = basis;
    options.seed = configuration.seed;
    return std::make_unique<CholQrSelection>(run.kernel, run.y, options, state);
  }
  if (name == "online") {
    OnlineGpOptions options = run.online;
    options.basis_size = basis;
    return std::make_unique<OnlineGp>(run.kernel, run.y, options, state);
  }
  const GreedyBasisOptions options{parse_basis_criterion(name), basis, configuration.solver.candidates};
  return std::make_unique<GreedyBasisSelection>(run.kernel, run.y, options, state);
}

}  // namespace

void check_sparse_memory(const SparseTrainingRun& run) {
  const TrainingConfiguration& configuration = run.configuration;
  if (configuration.solver.name != "cholqr") return;
  const std::size_t n = run.kernel.size(), d = run.kernel.rows().columns(), basis = configuration.solver.active_set_size;
  const std::size_t needed = cholqr_memory_bytes(n, d, basis, run.cholqr.information_pivots);
  GPSTREAM_CHECK(needed <= configuration.solver.memory_budget_bytes,
                 "--model cholqr keeps the training rows and O(n m) factors in memory: {} for {} rows, --basis {} and "
                 "--info-pivots {}, above the --memory budget of {}; lower --basis, use fewer rows, or raise --memory",
                 format_bytes(static_cast<double>(needed)), n, basis, run.cholqr.information_pivots,
                 format_bytes(static_cast<double>(configuration.solver.memory_budget_bytes)));
}

bool is_iterative_sparse_model(const std::string& name) {
  return name == "sgma" || name == "mpgp" || name == "sggp" || name == "cholqr" || name == "online";
}

bool is_sparse_model(const std::string& name) {
  return name == "sd" || name == "sr" || name == "nystrom" || is_iterative_sparse_model(name);
}

SparseTrainingResult train_sparse_model(SparseTrainingRun& run) {
  const TrainingConfiguration& configuration = run.configuration;
  const std::string& name = configuration.solver.name;
  const std::size_t basis = configuration.solver.active_set_size;
  const std::size_t n = run.kernel.size();
  GPSTREAM_CHECK(basis > 0, "--basis must be at least 1");
  GPSTREAM_CHECK(basis <= n, "--basis {} is larger than the {} training rows; give at most {}", basis, n, n);
  check_sparse_memory(run);
  SparseTrainingResult result;

  if (!is_iterative_sparse_model(name)) {
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
  const std::unique_ptr<SparseTrainingMethod> method = make_training_method(run, state);
  const std::uint64_t target = name == "cholqr" || name == "online" ? 0 : basis;

  ProgressLine progress_line(!run.quiet);
  const TrainingObservers observers(
      std::make_unique<ProgressObserver>(progress_line, name, method->converges() ? run.rule.tolerance : 0.0,
                                         method->measure_name(), target),
      run.log_path, !fresh, run.checkpoint_path, run.checkpoint_every, [&] {
        method->store_state();
        write_checkpoint(run.checkpoint_path, Checkpoint{configuration, state});
      });
  result.run = run_iterations(*method, run.kernel, run.rule, observers.all(), run.stop, fresh);
  if (result.run.reason == StopReason::interrupted) {
    throw interrupted_run(fmt::format("at iteration {}", state.iteration), run.checkpoint_path, run.output);
  }
  result.model = method->model();
  return result;
}

}  // namespace gpstream::cli

// Why cyclic BCD (BCDC) is so much slower than GBCD here (issue: "BCDC far
// from the paper"): for each dataset subset, κ(K̄) from its eigenvalues
// (LAPACK dsyevd), and the convergence of BCDC and GBCD (m = 500) measured
// in the energy norm ‖α − α*‖_K̄ (α* by Cholesky) per sweep of n/m
// iterations: the observed contraction per sweep, and the sweeps to reach
// ‖g‖₂/‖y‖₂ ≤ 1e-4 (the solvers' measure), extrapolated when the time limit stops the run. Block
// Gauss–Seidel contracts the energy error by at most 1 − c/κ per sweep
// (c of order one for a fixed partition; Oswald & Zhou, and the classical
// Gauss–Seidel theory), so a κ of 1e5–1e6 predicts ~1e5 sweeps, whatever the
// implementation.
//   bench_conditioning [--data ../shared/data] [--subset 3000] [--time-limit 120]
#include "bench/bench_problems.h"
#include "engine/data/in_memory_row_source.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/linalg/cholesky.h"
#include "engine/solvers/solver_driver.h"
#include "engine/training/training_method.h"

#include <boost/algorithm/string.hpp>
#include <fmt/format.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace {

using namespace gpstream;
using namespace gpstream::bench;
namespace fs = std::filesystem;

struct Convergence {
  std::uint64_t iterations = 0;
  double seconds = 0, gradient = 0, contraction_per_sweep = 0, sweeps_to_tolerance = 0;
  bool converged = false;
};

// Records ‖α − α*‖_K̄ = sqrt(2 (f(α) − f(α*))) at every sweep (f from the report).
class SweepRecorder final : public RunObserver {
 public:
  SweepRecorder(std::uint64_t sweep, double optimum) : sweep_(sweep), optimum_(optimum) {}
  void on_iteration(const IterationReport& report) override {
    if (report.iteration % sweep_ != 0) return;
    errors.push_back(std::sqrt(std::max(0.0, 2.0 * (report.objective - optimum_))));
    gradients.push_back(report.convergence_measure);
  }
  std::vector<double> errors, gradients;

 private:
  std::uint64_t sweep_;
  double optimum_;
};

Convergence measure(const Problem& p, const std::string& solver, double optimum, double time_limit) {
  InMemoryRowSource rows(p.x, p.y, p.d);
  const auto kernel = make_kernel(p.hyper, p.d);
  Context context({.memory_budget_bytes = std::size_t{1} << 28});
  KernelMatrix matrix(context, rows, *kernel);
  const std::size_t m = 500;
  auto method = make_solver({.name = solver, .active_set_size = m, .candidates = 60}, matrix);
  SolverState state = initial_solver_state(p.y, 1);
  StoppingRule rule;
  rule.tolerance = 1e-4;
  rule.time_limit_seconds = time_limit;
  const std::uint64_t sweep = std::max<std::uint64_t>(1, p.y.size() / m);
  SweepRecorder recorder(sweep, optimum);
  const Context::ObserverScope observe(context, {&recorder});
  const SolverRun run = run_solver(*method, matrix, state, p.y, rule, true);
  Convergence c;
  c.iterations = run.last.iteration;
  c.seconds = run.last.elapsed_seconds;
  c.gradient = run.last.convergence_measure;
  c.converged = run.reason == StopReason::converged;
  // Contraction: geometric mean over the second half of the recorded sweeps.
  const std::vector<double>& e = recorder.errors;
  if (e.size() >= 4 && e[e.size() / 2] > 0 && e.back() > 0) {
    const double sweeps = static_cast<double>(e.size() - 1 - e.size() / 2);
    c.contraction_per_sweep = std::pow(e.back() / e[e.size() / 2], 1.0 / sweeps);
  }
  const double done = static_cast<double>(c.iterations) / static_cast<double>(sweep);
  c.sweeps_to_tolerance = c.converged || c.contraction_per_sweep <= 0 || c.contraction_per_sweep >= 1
                              ? done
                              : done + std::log(1e-4 / c.gradient) / std::log(c.contraction_per_sweep);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string data_dir, out_dir, datasets_text;
  std::size_t subset = 3000;
  double time_limit = 120;
  po::options_description options("bench_conditioning options");
  // clang-format off
  options.add_options()("help,h", "show this help")
      ("data", po::value(&data_dir)->default_value("../shared/data"), "directory of the shared datasets")
      ("out", po::value(&out_dir)->default_value("out/bench"), "where to write the CSV file")
      ("datasets", po::value(&datasets_text)->default_value("kin40k,calhouse,friedman1"), "datasets")
      ("subset", po::value(&subset)->default_value(subset), "training rows per dataset")
      ("time-limit", po::value(&time_limit)->default_value(time_limit), "seconds per solver run");
  // clang-format on
  po::variables_map values;
  if (!parse_bench_options(argc, argv, options, values)) return 0;
  fs::create_directories(out_dir);
  std::vector<std::string> datasets;
  boost::split(datasets, datasets_text, boost::is_any_of(","));
  std::ofstream csv((fs::path(out_dir) / "conditioning.csv").string());
  csv << "dataset,rows,lambda_min,lambda_max,kappa,solver,iterations,seconds,gradient_max_norm,converged,"
         "contraction_per_sweep,sweeps_to_tolerance\n";
  fmt::print("{:<10} {:>6} {:>10} {:>10} {:>10}  {:<11} {:>9} {:>8} {:>10} {:>12} {:>14}\n", "dataset", "n",
             "lambda_min", "lambda_max", "kappa", "solver", "iters", "seconds", "|g|/|y|", "rate/sweep",
             "sweeps to 1e-4");
  for (const std::string& name : datasets) {
    if (name != "friedman1" && !fs::exists(fs::path(data_dir) / (name + "_train.csv"))) continue;
    const Problem p =
        name == "friedman1" ? make_friedman1(data_dir, subset, 100) : load_real(name, data_dir, subset, 0);
    const std::size_t n = p.y.size();
    // K̄ densely: its spectrum, and α* for the energy error.
    InMemoryRowSource rows(p.x, p.y, p.d);
    const auto kernel = make_kernel(p.hyper, p.d);
    Context context;
    KernelMatrix matrix(context, rows, *kernel);
    std::vector<double> k(n * n), eigenvalues(n);
    matrix.block(p.x.data(), n, p.x.data(), n, k.data());
    for (std::size_t i = 0; i < n; ++i) k[i * n + i] += p.hyper.noise_variance;
    std::vector<double> factor = k;
    cholesky_factor(factor.data(), n, "K̄");
    std::vector<double> alpha = p.y;
    cholesky_solve(factor.data(), n, alpha.data(), 1);
    double optimum = 0.0;  // f(α*) = −½ yᵀα*
    for (std::size_t i = 0; i < n; ++i) optimum -= 0.5 * p.y[i] * alpha[i];
    LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'N', 'L', static_cast<lapack_int>(n), k.data(), static_cast<lapack_int>(n),
                   eigenvalues.data());
    const double low = eigenvalues.front(), high = eigenvalues.back();
    for (const char* solver : {"gbcd", "bcd-cyclic"}) {
      const Convergence c = measure(p, solver, optimum, time_limit);
      fmt::print("{:<10} {:>6} {:>10.3e} {:>10.3e} {:>10.3e}  {:<11} {:>9} {:>8.1f} {:>10.2e} {:>12.6f} {:>14.3g}\n",
                 name, n, low, high, high / low, solver, c.iterations, c.seconds, c.gradient, c.contraction_per_sweep,
                 c.sweeps_to_tolerance);
      std::fflush(stdout);
      csv << fmt::format("{},{},{:.6e},{:.6e},{:.6e},{},{},{:.3f},{:.4e},{},{:.8f},{:.4g}\n", name, n, low, high,
                         high / low, solver, c.iterations, c.seconds, c.gradient, c.converged ? 1 : 0,
                         c.contraction_per_sweep, c.sweeps_to_tolerance);
    }
  }
  return 0;
}

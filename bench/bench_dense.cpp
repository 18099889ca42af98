// Dense-solver benchmark: a reproduction of the GBCD paper's Table 2 and
// Figs 2-4 (Bo & Sminchisescu 2008, §3.1), plus the kernel-product
// throughput against its BLAS bound.
//
//   Table 2: 10,000-row random subsets of kin40k and calhouse
//   (../shared/data) and a generated Friedman1 set; Cholesky, CG, SMO, BCDC,
//   BCDG and GBCD with the kernel recomputed (never stored), tol 1e-4 on
//   the relative residual ‖g‖₂/‖y‖₂ (the solvers' measure since 2026-11-25;
//   the tables in docs/benchmarks.md were measured on ‖g‖∞), m = 500, κ = 60, the reference hyperparameters of
//   ../shared/data/hyper/*.json. Prints time and test RMSE (eq. 16) and
//   writes the ‖g‖₂/‖y‖₂ / objective traces (Figs 2-3).
//   Fig 4: GBCD and BCDC training time against n on Friedman1.
//   Throughput: K̄[:, B]·v streamed over n = 100,000 rows (m = 500, d = 8)
//   against the same-shape dgemm + exp + dgemv on one core, scaled by cores.
#include "bench/bench_problems.h"
#include "engine/data/in_memory_row_source.h"
#include "engine/data/standardisation.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/kernels/kernel_implementations.h"
#include "engine/dense/dense_prediction.h"
#include "engine/prediction/prediction_metrics.h"
#include "engine/solvers/solver_driver.h"
#include "engine/training/training_method.h"
#include "storage/csv/csv_table.h"
#include "storage/hyper/hyperparameter_file.h"

#include <boost/algorithm/string.hpp>
#include "engine/linalg/blas_core.h"

#include <boost/program_options.hpp>
#include <cblas.h>
#include <fmt/format.h>
#include <tbb/global_control.h>
#include <tbb/info.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>

namespace {

namespace fs = std::filesystem;
using namespace gpstream;
using namespace gpstream::bench;

class TraceRecorder final : public RunObserver {
 public:
  TraceRecorder(std::ofstream& out, std::string dataset, std::string solver)
      : out_(out), dataset_(std::move(dataset)), solver_(std::move(solver)) {}
  void on_start(const IterationReport& r) override { write(r); }
  void on_iteration(const IterationReport& r) override {
    // Every iteration up to 100, then one per 1/50 decade of the iteration
    // count (SMO makes millions), and the last (on_stop).
    const int bucket = static_cast<int>(50.0 * std::log10(static_cast<double>(r.iteration)));
    if (r.iteration <= 100 || bucket != last_bucket_) write(r);
    last_bucket_ = bucket;
  }
  void on_stop(const IterationReport& r, StopReason) override { write(r); }

 private:
  void write(const IterationReport& r) {
    out_ << fmt::format("{},{},{},{:.6f},{:.10e},{:.17g}\n", dataset_, solver_, r.iteration, r.elapsed_seconds,
                        r.convergence_measure, r.objective);
  }
  std::ofstream& out_;
  std::string dataset_, solver_;
  int last_bucket_ = -1;
};

struct Result {
  double seconds = 0, rmse = 0, gradient = 0;
  std::uint64_t iterations = 0;
  std::string stop;
};

Result train_and_test(const Problem& p, const std::string& solver_name, double time_limit, std::ofstream* trace) {
  InMemoryRowSource rows(p.x, p.y, p.d);
  const auto kernel = make_kernel(p.hyper, p.d);
  Context context({.memory_budget_bytes = std::size_t{4} << 30});
  KernelMatrix matrix(context, rows, *kernel);
  SolverOptions options{.name = solver_name, .active_set_size = 500, .candidates = 60};
  const auto start = Clock::now();
  auto solver = make_solver(options, matrix);
  SolverState state = initial_solver_state(p.y, 1);
  StoppingRule rule;
  rule.tolerance = 1e-4;
  rule.time_limit_seconds = time_limit;
  std::vector<RunObserver*> observers;
  std::unique_ptr<TraceRecorder> recorder;
  if (trace != nullptr) {
    recorder = std::make_unique<TraceRecorder>(*trace, p.name, solver_name);
    observers.push_back(recorder.get());
  }
  const Context::ObserverScope observe(context, observers);
  const SolverRun run = run_solver(*solver, matrix, state, p.y, rule, true);
  Result result;
  result.seconds = seconds_since(start);  // set-up (diagonal) included
  result.iterations = state.iteration;
  result.gradient = run.last.convergence_measure;
  result.stop = describe(run.reason);
  const std::vector<double> mean = predict_mean(matrix, state.alpha, p.test_x.data(), p.test_y.size());
  result.rmse = normalised_rmse(p.test_y, mean, 1.0);
  return result;
}

// Kernel evaluations per second of the streamed product against the bound of
// its parts (dgemm for the cross terms, the exp pass, dgemv) on one core.
void throughput(std::ofstream& csv) {
  constexpr std::size_t n = 100000, m = 500, d = 8;
  std::vector<double> x(n * d), v(m), out(n);
  std::mt19937_64 random(5);
  std::normal_distribution<double> normal;
  for (double& value : x) value = normal(random);
  for (double& value : v) value = normal(random);
  const KernelHyperparameters hyper{KernelType::squared_exponential_ard, std::vector<double>(d, 1.5), 1.0, 0.01};
  const auto kernel = make_kernel(hyper, d);
  InMemoryRowSource rows(x, std::vector<double>(n, 0.0), d);
  Context context;
  KernelMatrix matrix(context, rows, *kernel);
  std::vector<std::size_t> b(m);
  for (std::size_t j = 0; j < m; ++j) b[j] = j * (n / m);
  std::vector<double> x_b(m * d);
  rows.gather_rows(b, x_b.data(), nullptr);

  double best_streamed = 1e300;
  for (int r = 0; r < 5; ++r) {
    const auto start = Clock::now();
    matrix.multiply_columns(b, x_b.data(), v.data(), 1, out.data());
    best_streamed = std::min(best_streamed, seconds_since(start));
  }
  // The bound: the same work in the same 256-row tiles — dgemm for the cross
  // terms, the exp pass, dgemv — on one core with nothing else (no
  // streaming, no tasks, no scaling of the rows), times the cores.
  constexpr std::size_t tile = 256;
  std::vector<double> block(tile * m);
  std::vector<double> norms(tile, 1.0), column_norms(m, 1.0);
  const detail::StationaryProfile& squared_exponential =
      *detail::kernel_family(KernelType::squared_exponential_ard).stationary;
  double best_gemm = 1e300, best_exp = 1e300, best_gemv = 1e300;
  for (int r = 0; r < 3; ++r) {
    double gemm = 0, exp_pass = 0, gemv = 0;
    for (std::size_t first = 0; first < n; first += tile) {
      const int tile_count = static_cast<int>(std::min(tile, n - first));
      auto start = Clock::now();
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, tile_count, m, d, -2.0, x.data() + first * d, d, x_b.data(),
                  d, 0.0, block.data(), m);
      gemm += seconds_since(start);
      start = Clock::now();
      for (int i = 0; i < tile_count; ++i) {
        squared_exponential.row(block.data() + i * m, m, norms[i], column_norms.data(), 1.0, nullptr);
      }
      exp_pass += seconds_since(start);
      start = Clock::now();
      cblas_dgemv(CblasRowMajor, CblasNoTrans, tile_count, m, 1.0, block.data(), m, v.data(), 1, 0.0,
                  out.data() + first, 1);
      gemv += seconds_since(start);
    }
    best_gemm = std::min(best_gemm, gemm);
    best_exp = std::min(best_exp, exp_pass);
    best_gemv = std::min(best_gemv, gemv);
  }
  const double cores = static_cast<double>(tbb::info::default_concurrency());
  const double evaluations = static_cast<double>(n) * m;
  const double bound = evaluations / (best_gemm + best_exp + best_gemv) * cores;
  const double streamed = evaluations / best_streamed;
  fmt::print("\nKernel product K̄[:,B]v, n = {}, m = {}, d = {} ({} cores)\n", n, m, d, cores);
  fmt::print("  one core, in 256-row tiles: dgemm {:.1f} ms, exp pass {:.1f} ms, dgemv {:.1f} ms\n", 1e3 * best_gemm,
             1e3 * best_exp, 1e3 * best_gemv);
  fmt::print("  bound (parts on one core x {} cores): {:.3g} kernel evaluations/s\n", cores, bound);
  fmt::print(
      "  streamed KernelMatrix::multiply_columns: {:.1f} ms = {:.3g} kernel evaluations/s = {:.0f} % of the bound\n",
      1e3 * best_streamed, streamed, 100.0 * streamed / bound);
  csv << fmt::format("throughput,bound,{},{},{},{:.6g}\n", n, m, d, bound);
  csv << fmt::format("throughput,streamed,{},{},{},{:.6g}\n", n, m, d, streamed);
  csv.flush();
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::select_blas_core(argv);
  namespace po = boost::program_options;
  std::string data_dir, out_dir, datasets_text, solvers_text, scaling_text;
  double time_limit = 1800;
  std::size_t subset = 10000;
  po::options_description options("bench_dense options");
  // clang-format off
  options.add_options()("help,h", "show this help")
      ("data", po::value(&data_dir)->default_value("../shared/data"), "directory of the shared datasets")
      ("out", po::value(&out_dir)->default_value("out/bench"), "where to write CSV files")
      ("datasets", po::value(&datasets_text)->default_value("kin40k,calhouse,friedman1"), "Table 2 datasets")
      ("solvers", po::value(&solvers_text)->default_value("cholesky,cg,smo,bcd-cyclic,bcd-gradient,gbcd"), "solvers")
      ("subset", po::value(&subset)->default_value(subset), "training rows per dataset")
      ("time-limit", po::value(&time_limit)->default_value(time_limit), "seconds per solver run")
      ("scaling", po::value(&scaling_text)->default_value("10000,20000,50000,100000"), "Fig 4 sizes (empty: skip)")
      ("skip-throughput", "skip the kernel-product throughput measurement");
  // clang-format on
  po::variables_map values;
  if (!gpstream::bench::parse_bench_options(argc, argv, options, values)) return 0;
  fs::create_directories(out_dir);
  std::vector<std::string> datasets, solvers, sizes;
  boost::split(datasets, datasets_text, boost::is_any_of(","));
  boost::split(solvers, solvers_text, boost::is_any_of(","));
  if (!scaling_text.empty()) boost::split(sizes, scaling_text, boost::is_any_of(","));
  const fs::path data(data_dir);

  std::ofstream table((fs::path(out_dir) / "table2.csv").string());
  table << "dataset,solver,rows,seconds,iterations,gradient_max_norm,stop,rmse\n";
  std::ofstream trace((fs::path(out_dir) / "table2_trace.csv").string());
  trace << "dataset,solver,iteration,seconds,gradient_max_norm,objective\n";
  std::ofstream other((fs::path(out_dir) / "dense_other.csv").string());
  other << "benchmark,kind,n,m,d,value\n";

  if (!values.count("skip-throughput")) throughput(other);

  fmt::print("\nTable 2: training time (s) and test RMSE (eq. 16), {} training rows, tol 1e-4, m = 500, kappa = 60\n",
             subset);
  fmt::print("{:<10} {:<13} {:>10} {:>10} {:>12} {:>9}  {}\n", "dataset", "solver", "seconds", "iterations", "|g|/|y|",
             "RMSE", "stop");
  for (const std::string& name : datasets) {
    if (name != "friedman1" && !fs::exists(data / (name + "_train.csv"))) {
      fmt::print("(skipping {}: not in {})\n", name, data_dir);
      continue;
    }
    const Problem problem = name == "friedman1" ? make_friedman1(data, subset, 5000) : load_real(name, data, subset, 0);
    for (const std::string& solver : solvers) {
      const Result r = train_and_test(problem, solver, time_limit, &trace);
      fmt::print("{:<10} {:<13} {:>10.2f} {:>10} {:>12.3e} {:>9.4f}  {}\n", name, solver, r.seconds, r.iterations,
                 r.gradient, r.rmse, r.stop);
      std::fflush(stdout);
      table << fmt::format("{},{},{},{:.3f},{},{:.4e},{},{:.5f}\n", name, solver, problem.y.size(), r.seconds,
                           r.iterations, r.gradient, r.stop, r.rmse);
      table.flush();
      trace.flush();
    }
  }

  if (!sizes.empty()) {
    fmt::print("\nFig 4: training time (s) against n on Friedman1, tol 1e-4\n{:>8} {:>10} {:>10}\n", "n", "gbcd",
               "bcd-cyclic");
    for (const std::string& size_text : sizes) {
      const std::size_t n = std::stoul(size_text);
      const Problem problem = make_friedman1(data, n, 1000);
      const Result greedy = train_and_test(problem, "gbcd", time_limit, nullptr);
      const Result cyclic = train_and_test(problem, "bcd-cyclic", time_limit, nullptr);
      fmt::print("{:>8} {:>10.2f} {:>10.2f}{}\n", n, greedy.seconds, cyclic.seconds,
                 cyclic.stop == "converged" ? "" : fmt::format("  (bcd-cyclic: {})", cyclic.stop));
      std::fflush(stdout);
      other << fmt::format("fig4,gbcd,{},500,10,{:.3f}\n", n, greedy.seconds);
      other << fmt::format("fig4,bcd-cyclic,{},500,10,{:.3f}\n", n, cyclic.seconds);
      other.flush();
    }
  }
  fmt::print("\nwrote {}/table2.csv, table2_trace.csv, dense_other.csv\n", out_dir);
  return 0;
}

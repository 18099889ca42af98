// Hyperparameters and predictive variance: a reproduction of the GBCD paper's
// Table 4 (GBCD column) and Table 3 (Bo & Sminchisescu 2008, §3.1–3.2).
//
//   Table 4: hyperparameters learned by marginal likelihood on 2000 random
//   training rows (L-BFGS, tol 1e-4, restarts), then GBCD (m = 500, κ = 60,
//   tol 1e-4) on the full training sets — kin40k (30,000 rows), calhouse
//   (all training rows), Friedman1 (100,000) — with training time, mean
//   time, variance time per test row and test RMSE (eq. 16).
//   Table 3: on the 10,000-row subsets of Table 2 (reference
//   hyperparameters), the batched GBCD variances of 1000 test rows against
//   the Cholesky closed form: relative RMSE (eq. 17) and cost as a multiple of
//   the model's mean solve; and the per-row solve the paper does, timed on a
//   few rows, for comparison.
#include "bench/bench_problems.h"
#include "engine/data/in_memory_row_source.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/core/blas_threads.h"
#include "engine/linalg/cholesky.h"
#include "engine/dense/dense_prediction.h"
#include "engine/dense/dense_variance.h"
#include "engine/prediction/prediction_metrics.h"
#include "engine/solvers/solver_driver.h"
#include "engine/training/training_method.h"
#include "engine/linalg/blas_core.h"
#include "engine/hyper/subset_learning.h"

#include <boost/algorithm/string.hpp>
#include <boost/program_options.hpp>
#include <cblas.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

namespace {

namespace fs = std::filesystem;
using namespace gpstream;
using namespace gpstream::bench;

struct Trained {
  std::vector<double> alpha;
  double seconds = 0.0;
  std::uint64_t iterations = 0;
};

Trained train_gbcd(KernelMatrix& matrix, const std::vector<double>& y) {
  const auto start = Clock::now();
  auto solver = make_solver({.name = "gbcd", .active_set_size = 500, .candidates = 60}, matrix);
  SolverState state = initial_solver_state(y, 1);
  StoppingRule rule;
  rule.tolerance = 1e-4;
  run_solver(*solver, matrix, state, y, rule, true);
  return {state.alpha, seconds_since(start), state.iteration};
}

// K** − k*ᵀK̄⁻¹k* for the first `count` test rows, by a dense Cholesky factor (the reference).
std::vector<double> cholesky_latent_variance(const Problem& p, const Kernel& kernel, std::size_t count) {
  const std::size_t n = p.y.size();
  const ScopedBlasThreads blas_threads;
  PreparedRows px, pz;
  kernel.prepare(p.x.data(), n, px);
  kernel.prepare(p.test_x.data(), count, pz);
  std::vector<double> factor(n * n), cross(n * count);
  kernel.evaluate(px, px, factor.data());
  for (std::size_t i = 0; i < n; ++i) factor[i * n + i] += kernel.noise_variance();
  cholesky_factor(factor.data(), n, "K̄ of the reference");
  kernel.evaluate(px, pz, cross.data());  // n×count
  cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, static_cast<int>(n),
              static_cast<int>(count), 1.0, factor.data(), static_cast<int>(n), cross.data(), static_cast<int>(count));
  std::vector<double> variance(count);
  for (std::size_t j = 0; j < count; ++j) variance[j] = kernel.self_covariance(p.test_x.data() + j * p.d);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < count; ++j) variance[j] -= cross[i * count + j] * cross[i * count + j];
  return variance;
}

// Eq. (17): sqrt(mean(((v' − v) / v')²)), v' the reference.
double relative_rmse(const std::vector<double>& v, const std::vector<double>& reference) {
  double sum = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) sum += std::pow((reference[i] - v[i]) / reference[i], 2);
  return std::sqrt(sum / static_cast<double>(v.size()));
}

std::vector<double> plus(std::vector<double> v, double c) {
  for (double& x : v) x += c;
  return v;
}

void table4(const fs::path& data, const std::vector<std::string>& datasets, std::size_t restarts,
            std::size_t variance_rows, double tolerance, std::ofstream& csv) {
  fmt::print(
      "\nTable 4 (GBCD column): hyperparameters learned on 2000 random rows, GBCD on the full training set, "
      "variance tol {:g}\n",
      tolerance);
  fmt::print("{:<10} {:>7} {:>8} {:>8} {:>9} {:>9} {:>12} {:>8} {:>8} {:>9}\n", "dataset", "rows", "learn s", "train s",
             "iters", "mean s", "var s/row", "RMSE", "SNLP", "coverage");
  for (const std::string& name : datasets) {
    if (name != "friedman1" && !fs::exists(data / (name + "_train.csv"))) continue;
    Problem p = name == "friedman1" ? make_friedman1(data, 100000, 10000) : load_real(name, data, 1u << 30, 0);
    InMemoryRowSource rows(p.x, p.y, p.d);
    Context context({.memory_budget_bytes = std::size_t{8} << 30, .seed = 0});
    // As `gpstream hyper --seed 0 --restarts R` does it, on the standardised rows.
    SubsetLearningOptions learning;
    learning.restarts = restarts;
    const LearnedOnSubset on_subset = learn_on_subset(context, rows, KernelType::squared_exponential_ard, learning);
    const HyperparameterSearchResult& learned = on_subset.search;
    const double learn_seconds = on_subset.seconds;
    p.hyper = learned.hyperparameters;
    const auto kernel = make_kernel(p.hyper, p.d);
    KernelMatrix matrix(context, rows, *kernel);
    const Trained trained = train_gbcd(matrix, p.y);
    auto start = Clock::now();
    const std::vector<double> mean = predict_mean(matrix, trained.alpha, p.test_x.data(), p.test_y.size());
    const double mean_seconds = seconds_since(start);
    const std::size_t v_rows = std::min(variance_rows, p.test_y.size());
    start = Clock::now();
    const VariancePrediction variance =
        predict_latent_variance(matrix, p.test_x.data(), v_rows, {.tolerance = tolerance, .batch_rows = v_rows},
                                plan_variances(matrix, v_rows, {}));
    const double variance_seconds = seconds_since(start);
    const PredictionMetrics all = evaluate_predictions(p.test_y, mean, {}, 0.0, 1.0);
    const PredictionMetrics with_variance =
        evaluate_predictions(std::span(p.test_y).first(v_rows), std::span(mean).first(v_rows),
                             plus(variance.latent, p.hyper.noise_variance), 0.0, 1.0);
    fmt::print("{:<10} {:>7} {:>8.1f} {:>8.1f} {:>9} {:>9.3f} {:>12.4f} {:>8.4f} {:>8.3f} {:>9.3f}\n", name, p.y.size(),
               learn_seconds, trained.seconds, trained.iterations, mean_seconds,
               variance_seconds / static_cast<double>(v_rows), all.normalised_rmse, *with_variance.snlp,
               *with_variance.coverage);
    std::vector<std::string> lengthscales;
    for (const double l : p.hyper.lengthscales) lengthscales.push_back(fmt::format("{:.3g}", l));
    fmt::print("           learned: lengthscales [{}], signal {:.4g}, noise {:.4g}, -log p {:.2f} ({} starts)\n",
               fmt::join(lengthscales, ", "), p.hyper.signal_variance, p.hyper.noise_variance, learned.objective,
               learned.starts.size());
    std::fflush(stdout);
    csv << fmt::format("{},{},{:.2f},{:.2f},{},{:.4f},{},{:.5f},{:.5f},{:.4f},{:.4f},{:.6g},{:.6g},\"{}\"\n", name,
                       p.y.size(), learn_seconds, trained.seconds, trained.iterations, mean_seconds, v_rows,
                       variance_seconds / static_cast<double>(v_rows), all.normalised_rmse, *with_variance.snlp,
                       *with_variance.coverage, p.hyper.signal_variance, p.hyper.noise_variance,
                       fmt::join(lengthscales, " "));
    csv.flush();
  }
}

void table3(const fs::path& data, const std::vector<std::string>& datasets, std::size_t test_rows, std::size_t per_row,
            double tolerance, std::ofstream& csv) {
  fmt::print(
      "\nTable 3: variances of {} test rows, 10,000 training rows, reference hyperparameters, GBCD tol 1e-4, "
      "variance tol {:g}\n",
      test_rows, tolerance);
  fmt::print("{:<10} {:>8} {:>9} {:>10} {:>8} {:>11} {:>13} {:>12} {:>11}\n", "dataset", "mean s", "batched s",
             "x mean", "iters", "rel RMSE y*", "rel RMSE f*", "per-row s", "x mean/row");
  for (const std::string& name : datasets) {
    if (name != "friedman1" && !fs::exists(data / (name + "_train.csv"))) continue;
    const Problem p = name == "friedman1" ? make_friedman1(data, 10000, 5000) : load_real(name, data, 10000, 0);
    const std::size_t t = std::min(test_rows, p.test_y.size());
    InMemoryRowSource rows(p.x, p.y, p.d);
    const auto kernel = make_kernel(p.hyper, p.d);
    Context context({.memory_budget_bytes = std::size_t{4} << 30});
    KernelMatrix matrix(context, rows, *kernel);
    const Trained trained = train_gbcd(matrix, p.y);
    auto start = Clock::now();
    const VariancePlan gbcd{VarianceMethod::gbcd, "the paper's route"};
    const VariancePrediction batched =
        predict_latent_variance(matrix, p.test_x.data(), t, {.tolerance = tolerance, .batch_rows = t}, gbcd);
    const double batched_seconds = seconds_since(start);
    start = Clock::now();
    const VariancePrediction by_cholesky =
        predict_latent_variance(matrix, p.test_x.data(), t, {}, {VarianceMethod::cholesky, "the factor of K̄ once"});
    const double cholesky_seconds = seconds_since(start);
    start = Clock::now();
    const VariancePrediction single =
        predict_latent_variance(matrix, p.test_x.data(), per_row, {.tolerance = tolerance, .batch_rows = 1}, gbcd);
    const double per_row_seconds = seconds_since(start) / static_cast<double>(per_row);
    const std::vector<double> reference = cholesky_latent_variance(p, *kernel, t);
    const double noise = p.hyper.noise_variance;
    const double noisy = relative_rmse(plus(batched.latent, noise), plus(reference, noise));
    const double latent = relative_rmse(batched.latent, reference);
    const double cholesky_latent = relative_rmse(by_cholesky.latent, reference);
    const double single_error = relative_rmse(
        single.latent, std::vector<double>(reference.begin(), reference.begin() + static_cast<long>(per_row)));
    fmt::print("{:<10} {:>8.2f} {:>9.1f} {:>10.1f} {:>8} {:>11.2e} {:>13.2e} {:>12.2f} {:>11.2f}\n", name,
               trained.seconds, batched_seconds, batched_seconds / trained.seconds, batched.iterations, noisy, latent,
               per_row_seconds, per_row_seconds / trained.seconds);
    fmt::print(
        "           per-row solves: relative RMSE of f* {:.2e}; the batch as {} per-row solves would take {:.0f} s "
        "({:.0f}x the batch)\n",
        single_error, t, per_row_seconds * static_cast<double>(t),
        per_row_seconds * static_cast<double>(t) / batched_seconds);
    fmt::print("           cholesky route: {:.1f} s ({:.1f}x the mean solve), relative RMSE of f* {:.2e}\n",
               cholesky_seconds, cholesky_seconds / trained.seconds, cholesky_latent);
    std::fflush(stdout);
    csv << fmt::format("{},{},{:.3f},{},{:.3f},{},{:.4e},{:.4e},{:.4f},{},{:.3f},{:.4e}\n", name, p.y.size(),
                       trained.seconds, t, batched_seconds, batched.iterations, noisy, latent, per_row_seconds, per_row,
                       cholesky_seconds, cholesky_latent);
    csv.flush();
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::select_blas_core(argv);
  namespace po = boost::program_options;
  std::string data_dir, out_dir, datasets_text, tables_text;
  std::size_t restarts = 2, variance_rows = 200, test_rows = 1000, per_row = 5;
  double variance_tolerance = VarianceOptions{}.tolerance;
  po::options_description options("bench_hyper_variance options");
  // clang-format off
  options.add_options()("help,h", "show this help")
      ("data", po::value(&data_dir)->default_value("../shared/data"), "directory of the shared datasets")
      ("out", po::value(&out_dir)->default_value("out/bench"), "where to write CSV files")
      ("datasets", po::value(&datasets_text)->default_value("kin40k,calhouse,friedman1"), "datasets")
      ("tables", po::value(&tables_text)->default_value("3,4"), "which tables to reproduce")
      ("restarts", po::value(&restarts)->default_value(restarts), "Table 4: random restarts of the hyperparameter search")
      ("variance-rows", po::value(&variance_rows)->default_value(variance_rows), "Table 4: test rows whose variance is computed")
      ("test-rows", po::value(&test_rows)->default_value(test_rows), "Table 3: test rows in the batch")
      ("per-row", po::value(&per_row)->default_value(per_row), "Table 3: rows solved one at a time, for comparison")
      ("variance-tol", po::value(&variance_tolerance)->default_value(variance_tolerance), "per-row tolerance of the variance solves");
  // clang-format on
  po::variables_map values;
  if (!gpstream::bench::parse_bench_options(argc, argv, options, values)) return 0;
  fs::create_directories(out_dir);
  std::vector<std::string> datasets, tables;
  boost::split(datasets, datasets_text, boost::is_any_of(","));
  boost::split(tables, tables_text, boost::is_any_of(","));
  const fs::path data(data_dir);
  if (std::find(tables.begin(), tables.end(), "3") != tables.end()) {
    std::ofstream csv((fs::path(out_dir) / "table3.csv").string());
    csv << "dataset,rows,mean_seconds,test_rows,batched_seconds,iterations,relative_rmse_noisy,relative_rmse_latent,"
           "per_row_seconds,per_row_rows,cholesky_seconds,cholesky_relative_rmse_latent\n";
    table3(data, datasets, test_rows, per_row, variance_tolerance, csv);
    fmt::print("wrote {}\n", (fs::path(out_dir) / "table3.csv").string());
  }
  if (std::find(tables.begin(), tables.end(), "4") != tables.end()) {
    std::ofstream csv((fs::path(out_dir) / "table4.csv").string());
    csv << "dataset,rows,learn_seconds,train_seconds,iterations,mean_seconds,variance_rows,variance_seconds_per_row,"
           "rmse,snlp,coverage,signal_variance,noise_variance,lengthscales\n";
    table4(data, datasets, restarts, variance_rows, variance_tolerance, csv);
    fmt::print("wrote {}\n", (fs::path(out_dir) / "table4.csv").string());
  }
  return 0;
}

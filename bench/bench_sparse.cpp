// Sparse models on the papers' benchmarks:
//
//  - GBCD paper Table 4, sparse columns: SD, SR and MPGP with p = 2000 basis
//    rows on kin40k, calhouse and Friedman1 (100,000 rows), with the
//    hyperparameters learned exactly as bench_hyper_variance learns them for
//    the GBCD column (2000 random rows, seed 0), so every column is the same
//    GP: training time, prediction (mean + variance) time per test row, RMSE
//    (eq. 16), SNLP and coverage.
//  - Schwaighofer & Tresp 2003 Table 1 on kin40k: remaining variance
//    100·MSE/MSE_mean for B = 200 and 1000 basis functions of SR-random,
//    SGMA, SGGP ("SRM PostApp"), Nyström (RRA), SRM-Trans, the online GP and
//    the BCM (k-means modules and query blocks of B rows), plus MPGP.
//  - Cao et al. 2015 Fig. 5 on kin40k: CholQR (variational objective, z = 128
//    information pivots as the paper uses for KIN40K, hyperparameters learned
//    with the inducing set) against the paper's "Random" (the same objective
//    and hyperparameter steps on a random inducing set) and the greedy SGGP
//    and MPGP selections (with the 2000-row hyperparameters), at m = 32 …
//    1024: objective, SMSE, SNLP and training time.
//
// Prints the tables and writes sparse_table4.csv, sparse_table1.csv and
// sparse_cholqr.csv (plot_sparse.sh draws the Fig. 5 panels from it).
#include "bench/bench_problems.h"
#include "engine/data/in_memory_row_source.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/prediction/prediction_metrics.h"
#include "engine/solvers/solver_driver.h"
#include "engine/data/k_means.h"
#include "engine/sparse/cholqr_selection.h"
#include "engine/sparse/committee_machine.h"
#include "engine/sparse/greedy_basis_selection.h"
#include "engine/sparse/online_gp.h"
#include "engine/sparse/sparse_fit.h"
#include "engine/sparse/sparse_prediction.h"
#include "engine/linalg/blas_core.h"
#include "engine/hyper/subset_learning.h"
#include "engine/training/training_method.h"

#include <boost/algorithm/string.hpp>
#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <limits>

namespace {

using namespace gpstream;
using namespace gpstream::bench;
namespace fs = std::filesystem;

struct Fitted {
  SparseModel model;
  double train_seconds = 0.0;
};

// Trains `method` with a basis of m rows on the problem's training rows.
Fitted train(const std::string& method, KernelMatrix& matrix, const std::vector<double>& y, std::size_t m,
             std::uint64_t seed) {
  const auto start = Clock::now();
  Fitted fitted;
  SparseMethodOptions options;
  options.name = method;
  options.basis_size = m;
  options.seed = seed;
  if (!find_training_method(method)->iterative()) {
    fitted.model = fit_direct_sparse_model(options, matrix, y);
  } else {
    SolverState state = initial_solver_state({}, seed);
    const auto training = make_sparse_training_method(options, matrix, y, state);
    StoppingRule rule;
    rule.tolerance = -std::numeric_limits<
        double>::infinity();  // SGGP too is held to exactly m basis functions, as Schwaighofer & Tresp did
    run_iterations(*training, matrix, rule, true);
    fitted.model = training->model();
  }
  fitted.train_seconds = seconds_since(start);
  fitted.model.columns = matrix.rows().columns();
  return fitted;
}

struct Scored {
  PredictionMetrics metrics;
  double seconds_per_row = 0.0;
  std::size_t negative_variances = 0;
};

// Metrics of y* predictions that took `seconds` for all test rows.
Scored metrics_of(const SparsePrediction& prediction, double noise, const Problem& p, double seconds) {
  std::vector<double> variance = prediction.latent;
  for (double& v : variance) v += noise;
  return {evaluate_predictions(p.test_y, prediction.mean, variance, 0.0, 1.0),
          seconds / static_cast<double>(p.test_y.size()), prediction.negative_variances};
}

Scored score(const SparseModel& model, const Kernel& kernel, const Problem& p, KernelMatrix& matrix) {
  const auto start = Clock::now();
  const SparsePrediction prediction = predict_sparse(model, kernel, p.test_x.data(), p.test_y.size(), true, &matrix);
  return metrics_of(prediction, kernel.noise_variance(), p, seconds_since(start));
}

// BCM: k-means modules of about m training rows, query blocks of m test rows.
Scored committee(KernelMatrix& matrix, const Kernel& kernel, const Problem& p, std::size_t m, double& seconds,
                 std::string& notes) {
  const auto start = Clock::now();
  const CommitteePrediction prediction = predict_by_committee(matrix, p.y, p.test_x.data(), p.test_y.size(),
                                                              {.module_size = m, .query_block = m, .seed = 1}, true);
  seconds = seconds_since(start);
  notes = fmt::format(
      "{} k-means modules of {}-{} rows; {} covariances needed extra jitter; trained per query block: "
      "the time is training and prediction",
      prediction.modules, prediction.smallest_module, prediction.largest_module, prediction.extra_jitter);
  return metrics_of(prediction, kernel.noise_variance(), p, seconds);
}

// SRM-Trans: the test rows in blocks of m are the bases of SR fits.
Scored transductive(KernelMatrix& matrix, const Kernel& kernel, const Problem& p, std::size_t m, double& seconds) {
  const auto start = Clock::now();
  const SparsePrediction prediction = predict_transductive(matrix, p.y, p.test_x.data(), p.test_y.size(), m, true);
  seconds = seconds_since(start);
  return metrics_of(prediction, kernel.noise_variance(), p, seconds);
}

KernelHyperparameters learned_hyperparameters(const Problem& p, std::size_t restarts) {
  InMemoryRowSource rows(p.x, p.y, p.d);
  Context context({.memory_budget_bytes = std::size_t{8} << 30, .seed = 0});  // as gpstream hyper --seed 0
  SubsetLearningOptions learning;
  learning.restarts = restarts;
  return learn_on_subset(context, rows, KernelType::squared_exponential_ard, learning).search.hyperparameters;
}

Problem load(const std::string& name, const fs::path& data) {
  return name == "friedman1" ? make_friedman1(data, 100000, 10000) : load_real(name, data, 1u << 30, 0);
}

// kin40k with the kernel learned as for every table, and a KernelMatrix over its training rows.
struct LearnedKin40k {
  LearnedKin40k(const fs::path& data, std::size_t restarts)
      : problem(learned(data, restarts)),
        rows(problem.x, problem.y, problem.d),
        kernel(make_kernel(problem.hyper, problem.d)),
        context({.memory_budget_bytes = std::size_t{8} << 30}),
        matrix(context, rows, *kernel) {}
  static Problem learned(const fs::path& data, std::size_t restarts) {
    Problem p = load("kin40k", data);
    p.hyper = learned_hyperparameters(p, restarts);
    return p;
  }
  Problem problem;
  InMemoryRowSource rows;
  std::unique_ptr<Kernel> kernel;
  Context context;
  KernelMatrix matrix;
};

void table4(const fs::path& data, const std::vector<std::string>& datasets, std::size_t basis, std::size_t restarts,
            bool reference_hyper, std::ofstream& csv) {
  fmt::print("\nGBCD paper Table 4, sparse columns: p = {} basis rows, hyperparameters {}\n", basis,
             reference_hyper ? "of ../shared/data/hyper" : "learned on 2000 rows (as the GBCD column)");
  fmt::print("{:<10} {:>7} {:<7} {:>6} {:>9} {:>14} {:>8} {:>8} {:>9}\n", "dataset", "rows", "model", "basis",
             "train s", "predict ms/row", "RMSE", "SNLP", "coverage");
  for (const std::string& name : datasets) {
    if (name != "friedman1" && !fs::exists(data / (name + "_train.csv"))) continue;
    Problem p = load(name, data);
    if (!reference_hyper) p.hyper = learned_hyperparameters(p, restarts);
    InMemoryRowSource rows(p.x, p.y, p.d);
    const auto kernel = make_kernel(p.hyper, p.d);
    Context context({.memory_budget_bytes = std::size_t{8} << 30});
    KernelMatrix matrix(context, rows, *kernel);
    for (const char* method : {"sd", "sr", "mpgp"}) {
      const Fitted fitted = train(method, matrix, p.y, basis, 0);
      const Scored scored = score(fitted.model, *kernel, p, matrix);
      fmt::print("{:<10} {:>7} {:<7} {:>6} {:>9.1f} {:>14.4f} {:>8.4f} {:>8.3f} {:>9.3f}\n", name, p.y.size(), method,
                 fitted.model.basis_size(), fitted.train_seconds, 1e3 * scored.seconds_per_row,
                 scored.metrics.normalised_rmse, *scored.metrics.snlp, *scored.metrics.coverage);
      std::fflush(stdout);
      csv << fmt::format("{},{},{},{},{:.2f},{:.6f},{:.5f},{:.4f},{:.4f}\n", name, p.y.size(), method,
                         fitted.model.basis_size(), fitted.train_seconds, 1e3 * scored.seconds_per_row,
                         scored.metrics.normalised_rmse, *scored.metrics.snlp, *scored.metrics.coverage);
      csv.flush();
    }
  }
}

void table1(LearnedKin40k& kin40k, const std::vector<std::size_t>& sizes, const std::vector<std::string>& methods,
            std::ofstream& csv) {
  const Problem& p = kin40k.problem;
  const auto& kernel = kin40k.kernel;
  KernelMatrix& matrix = kin40k.matrix;
  fmt::print(
      "\nSchwaighofer & Tresp 2003 Table 1, kin40k ({} training rows, {} test rows): remaining variance "
      "100 MSE / MSE_mean, %\nlearned kernel: lengthscales [{:.4g}], signal variance {:.4g}, noise variance {:.4g}\n",
      p.y.size(), p.test_y.size(), fmt::join(p.hyper.lengthscales, ", "), p.hyper.signal_variance,
      p.hyper.noise_variance);
  fmt::print("{:<10} {:>6} {:>10} {:>9} {:>14} {:>8}  {}\n", "method", "B", "remaining", "train s", "predict ms/row",
             "SNLP", "notes");
  for (const std::size_t b : sizes) {
    for (const std::string& method : methods) {
      Scored scored;
      double seconds = 0.0;
      std::size_t basis = b;
      std::string notes;
      if (method == "srm-trans") {
        scored = transductive(matrix, *kernel, p, b, seconds);
        notes = "trained per block of test rows: the time is training and prediction";
      } else if (method == "bcm") {
        scored = committee(matrix, *kernel, p, b, seconds, notes);
      } else {
        const Fitted fitted = train(method, matrix, p.y, b, 0);
        seconds = fitted.train_seconds;
        basis = fitted.model.basis_size();
        scored = score(fitted.model, *kernel, p, matrix);
        if (fitted.model.diagnostics.count("gap") != 0)
          notes += fmt::format("gap {:.4f}", fitted.model.diagnostics.at("gap"));
        if (fitted.model.diagnostics.count("deleted_basis_vectors") != 0) {
          notes += fmt::format("{} basis vectors deleted", fitted.model.diagnostics.at("deleted_basis_vectors"));
        }
        if (fitted.model.diagnostics.count("max_abs_weight") != 0) {
          notes += fmt::format("max |w| {:.3g}, rms w {:.3g}, {} negative variances",
                               fitted.model.diagnostics.at("max_abs_weight"), fitted.model.diagnostics.at("rms_weight"),
                               scored.negative_variances);
        }
      }
      const double remaining = 100.0 * scored.metrics.smse;
      fmt::print("{:<10} {:>6} {:>10.2f} {:>9.1f} {:>14.4f} {:>8.3f}  {}\n", method, basis, remaining, seconds,
                 1e3 * scored.seconds_per_row, *scored.metrics.snlp, notes);
      std::fflush(stdout);
      csv << fmt::format("{},{},{},{:.4f},{:.2f},{:.6f},{:.4f},\"{}\"\n", method, b, basis, remaining, seconds,
                         1e3 * scored.seconds_per_row, *scored.metrics.snlp, notes);
      csv.flush();
    }
  }
}

// One CholQR run (or its "Random" baseline with swap_inducing_rows off) from the learned kernel.
struct CholQrScore {
  Scored scored;
  double objective = 0.0, seconds = 0.0;
  std::size_t epochs = 0, accepted = 0;
};

CholQrScore run_cholqr(KernelMatrix& matrix, const Problem& p, std::size_t m, bool swaps, std::size_t max_epochs) {
  CholQrOptions options;
  options.basis_size = m;
  options.information_pivots = 128;
  options.swap_inducing_rows = swaps;
  options.seed = 1;
  SolverState state;
  const auto start = Clock::now();
  CholQrSelection selection(matrix, p.y, options, state);
  StoppingRule rule;
  rule.tolerance = 1e-4;
  rule.max_iterations = max_epochs;
  const SolverRun run = run_iterations(selection, matrix, rule, true);
  CholQrScore result;
  result.seconds = seconds_since(start);
  SparseModel model = selection.model();
  model.columns = p.d;
  const auto learned = make_kernel(model.prior.kernel, p.d);
  const auto predict_start = Clock::now();
  const SparsePrediction prediction = predict_sparse(model, *learned, p.test_x.data(), p.test_y.size(), true);
  result.scored = metrics_of(prediction, learned->noise_variance(), p, seconds_since(predict_start));
  result.objective = selection.objective();
  result.epochs = run.last.iteration;
  result.accepted = selection.accepted_swaps();
  return result;
}

void cholqr_figure(LearnedKin40k& kin40k, const std::vector<std::size_t>& sizes, std::size_t max_epochs,
                   std::ofstream& csv) {
  const Problem& p = kin40k.problem;
  const auto& kernel = kin40k.kernel;
  KernelMatrix& matrix = kin40k.matrix;
  fmt::print(
      "\nCao et al. 2015 Fig. 5, kin40k ({} training rows, {} test rows): F is the variational free energy "
      "(nats; lower is better), at most {} epochs\n",
      p.y.size(), p.test_y.size(), max_epochs);
  fmt::print("{:<8} {:>6} {:>12} {:>8} {:>8} {:>9} {:>7}  {}\n", "method", "m", "F", "SMSE", "SNLP", "train s",
             "epochs", "notes");
  for (const std::size_t m : sizes) {
    for (const char* method : {"random", "cholqr", "sggp", "mpgp"}) {
      CholQrScore result;
      std::string notes;
      if (std::string(method) == "random" || std::string(method) == "cholqr") {
        result = run_cholqr(matrix, p, m, std::string(method) == "cholqr", max_epochs);
        if (std::string(method) == "cholqr")
          notes = fmt::format("{} swaps accepted, z = 128", result.accepted);
        else
          notes = "random inducing set, hyperparameter steps only";
      } else {
        const Fitted fitted = train(method, matrix, p.y, m, 0);
        result.seconds = fitted.train_seconds;
        result.scored = score(fitted.model, *kernel, p, matrix);
        result.objective =
            evaluate_inducing_objective(p.hyper, p.x.data(), p.y.size(), p.d, p.y, fitted.model.basis_indices,
                                        InducingObjective::variational, false)
                .value;
        notes = fmt::format("{} basis rows, the 2000-row hyperparameters", fitted.model.basis_size());
      }
      fmt::print("{:<8} {:>6} {:>12.2f} {:>8.4f} {:>8.4f} {:>9.1f} {:>7}  {}\n", method, m, result.objective,
                 result.scored.metrics.smse, *result.scored.metrics.snlp, result.seconds, result.epochs, notes);
      std::fflush(stdout);
      csv << fmt::format("{},{},{:.4f},{:.6f},{:.5f},{:.2f},{},\"{}\"\n", method, m, result.objective,
                         result.scored.metrics.smse, *result.scored.metrics.snlp, result.seconds, result.epochs, notes);
      csv.flush();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::select_blas_core(argv);
  namespace po = boost::program_options;
  std::string data_dir, out_dir, datasets_text, tables_text, sizes_text, hyper, csv_name, methods_text, table1_csv,
      cholqr_sizes_text;
  std::size_t max_epochs = 10;
  std::size_t restarts = 2, basis = 2000;
  po::options_description options("bench_sparse options");
  // clang-format off
  options.add_options()("help,h", "show this help")
      ("data", po::value(&data_dir)->default_value("../shared/data"), "directory of the shared datasets")
      ("out", po::value(&out_dir)->default_value("out/bench"), "where to write CSV files")
      ("datasets", po::value(&datasets_text)->default_value("kin40k,calhouse,friedman1"), "Table 4 datasets")
      ("tables", po::value(&tables_text)->default_value("4,1,cholqr"), "which tables: 4 (GBCD paper), 1 (Schwaighofer & Tresp), cholqr (Cao et al. Fig. 5)")
      ("methods", po::value(&methods_text)->default_value("sggp,sgma,sr,mpgp,nystrom,srm-trans,online,bcm"), "Table 1: methods")
      ("table1-csv", po::value(&table1_csv)->default_value("sparse_table1.csv"), "Table 1: the CSV file's name")
      ("cholqr-sizes", po::value(&cholqr_sizes_text)->default_value("32,64,128,256,512,1024"), "Fig. 5: inducing set sizes m")
      ("max-epochs", po::value(&max_epochs)->default_value(max_epochs), "Fig. 5: CholQR epochs at most")
      ("basis", po::value(&basis)->default_value(basis), "Table 4: basis rows p")
      ("sizes", po::value(&sizes_text)->default_value("200,1000"), "Table 1: basis sizes B")
      ("restarts", po::value(&restarts)->default_value(restarts), "random restarts of the hyperparameter search")
      ("hyper", po::value(&hyper)->default_value("learned"), "Table 4: learned (as bench_hyper_variance) or reference (../shared/data/hyper)")
      ("table4-csv", po::value(&csv_name)->default_value("sparse_table4.csv"), "Table 4: the CSV file's name");
  // clang-format on
  po::variables_map values;
  if (!gpstream::bench::parse_bench_options(argc, argv, options, values)) return 0;
  fs::create_directories(out_dir);
  std::vector<std::string> datasets, tables, sizes;
  boost::split(datasets, datasets_text, boost::is_any_of(","));
  boost::split(tables, tables_text, boost::is_any_of(","));
  boost::split(sizes, sizes_text, boost::is_any_of(","));
  const fs::path data(data_dir);
  if (std::find(tables.begin(), tables.end(), "4") != tables.end()) {
    std::ofstream csv((fs::path(out_dir) / csv_name).string());
    csv << "dataset,rows,model,basis,train_seconds,predict_ms_per_row,rmse,snlp,coverage\n";
    table4(data, datasets, basis, restarts, hyper == "reference", csv);
  }
  // Table 1 and Fig. 5 share kin40k and its learned kernel (learned once).
  const bool table_1 = std::find(tables.begin(), tables.end(), "1") != tables.end();
  const bool figure_5 = std::find(tables.begin(), tables.end(), "cholqr") != tables.end();
  std::unique_ptr<LearnedKin40k> kin40k;
  if ((table_1 || figure_5) && fs::exists(data / "kin40k_train.csv"))
    kin40k = std::make_unique<LearnedKin40k>(data, restarts);
  if (table_1 && kin40k) {
    std::vector<std::size_t> basis_sizes;
    for (const std::string& size : sizes) basis_sizes.push_back(std::stoul(size));
    std::vector<std::string> methods;
    boost::split(methods, methods_text, boost::is_any_of(","));
    std::ofstream csv((fs::path(out_dir) / table1_csv).string());
    csv << "method,B,basis,remaining_variance_percent,train_seconds,predict_ms_per_row,snlp,notes\n";
    table1(*kin40k, basis_sizes, methods, csv);
  }
  if (figure_5 && kin40k) {
    std::vector<std::string> texts;
    boost::split(texts, cholqr_sizes_text, boost::is_any_of(","));
    std::vector<std::size_t> cholqr_sizes;
    for (const std::string& size : texts) cholqr_sizes.push_back(std::stoul(size));
    std::ofstream csv((fs::path(out_dir) / "sparse_cholqr.csv").string());
    csv << "method,m,objective,smse,snlp,train_seconds,epochs,notes\n";
    cholqr_figure(*kin40k, cholqr_sizes, max_epochs, csv);
  }
  return 0;
}

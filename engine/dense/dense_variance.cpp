// The dense model's variances: the route planner, the batches, and the
// joint covariance. The routes themselves: gbcd_variances.cpp and
// cholesky_variances.cpp.
#include "engine/dense/dense_variance.h"

#include "engine/core/blas_threads.h"
#include "engine/core/error.h"
#include "engine/core/human_readable.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"
#include "engine/dense/variance_routes.h"
#include "engine/solvers/cholesky_solver.h"

#include <cblas.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <optional>

namespace gpstream {
namespace {

constexpr std::size_t kMaxBatchRows = 1024;
// The cholesky route's batches: fewer rows make the triangular solve a
// matrix-vector product; more only cost memory.
constexpr std::size_t kMinimumCholeskyBatch = 64;
// The gbcd route's cost, in passes over K̄ (n² kernel entries, each against
// the open columns): its variance batches took 47–53 sweeps (m·iterations/n)
// on kin40k at 10,000 and 30,000 training rows, under the absolute tolerance
// 3e-5 it had before the relative bound (bench/results/hyper_variance.log,
// docs/commands.md tour). They grow about as s²/σ² below kin40k's σ²/s² (6e-3): 34
// sweeps at σ²/s² = 1e-3, 12,700 at 1e-6 on the K singular to working
// precision of tests/engine/test_variance.cpp (measured as the test was written).
constexpr double kGbcdSweeps = 50.0, kGbcdSweepsNoiseRatio = 6e-3;
// One kernel entry costs about this many multiply-adds per input plus an exp.
constexpr double kEntryFlopsPerInput = 2.0, kEntryFlopsExp = 30.0;

}  // namespace

namespace variance_routes {

// Σ_i G_ij² for each of the r columns of G (n×r, row-major), summed in a
// fixed order (blocks of rows in sequence) so that the stopping decisions do
// not depend on the thread count.
std::vector<double> column_squared_norms(const std::vector<double>& gradient, std::size_t n, std::size_t r) {
  constexpr std::size_t kRowsPerPart = 1024;
  const std::size_t parts = (n + kRowsPerPart - 1) / kRowsPerPart;
  std::vector<double> partial(checked_multiply(parts, r), 0.0);
  tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t part) {
    double* sums = partial.data() + part * r;
    for (std::size_t i = part * kRowsPerPart; i < std::min(n, (part + 1) * kRowsPerPart); ++i) {
      const double* row = gradient.data() + i * r;
      for (std::size_t j = 0; j < r; ++j) sums[j] += row[j] * row[j];
    }
  });
  std::vector<double> norms(r, 0.0);
  for (std::size_t part = 0; part < parts; ++part) {
    for (std::size_t j = 0; j < r; ++j) norms[j] += partial[part * r + j];
  }
  return norms;
}

std::size_t factor_bytes(std::size_t n) { return checked_multiply(n, n, sizeof(double)); }

// The factor and the training rows read whole to form it (dense_kernel_matrix).
std::size_t cholesky_route_bytes(std::size_t n, std::size_t d) {
  return checked_add(factor_bytes(n), checked_multiply(n, d, sizeof(double)));
}

}  // namespace variance_routes

VarianceMethod parse_variance_method(const std::string& text) {
  if (text == "auto") return VarianceMethod::automatic;
  if (text == "cholesky") return VarianceMethod::cholesky;
  if (text == "gbcd") return VarianceMethod::gbcd;
  GPSTREAM_THROW("unknown variance method \"{}\" (choose auto, cholesky or gbcd)", text);
}

const char* to_string(VarianceMethod method) {
  switch (method) {
    case VarianceMethod::automatic:
      return "auto";
    case VarianceMethod::cholesky:
      return "cholesky";
    case VarianceMethod::gbcd:
      return "gbcd";
  }
  return "?";
}

VariancePlan plan_variances(KernelMatrix& training, std::size_t count, const VarianceOptions& options) {
  if (training.distributed()) {
    GPSTREAM_CHECK(options.method != VarianceMethod::cholesky,
                   "the cholesky variance route factorises all of K̄ in one process, but the training rows are "
                   "partitioned among ranks: take the gbcd route");
    return {VarianceMethod::gbcd, "the training rows are partitioned among the ranks (each solves for its own rows)"};
  }
  const std::size_t n = training.size(), d = training.rows().columns();
  const std::size_t rows = count > options.first_row ? count - options.first_row : 0;
  const double order = static_cast<double>(n);
  const double cholesky_flops = PanelCholesky::flops(n) + order * order * static_cast<double>(rows);
  const double signal = training.kernel().constant_self_covariance().value_or(1.0);
  const double sweeps =
      kGbcdSweeps * std::max(1.0, kGbcdSweepsNoiseRatio * signal / training.kernel().noise_variance());
  const double gbcd_flops = sweeps * order * order *
                            (static_cast<double>(rows) + kEntryFlopsPerInput * static_cast<double>(d) + kEntryFlopsExp);
  const std::size_t needed = checked_add(variance_routes::cholesky_route_bytes(n, training.rows().columns()),
                                         checked_multiply(n, std::min(rows, kMinimumCholeskyBatch), sizeof(double)));
  const std::size_t available = training.context().memory().available();
  const bool fits = needed <= available;
  const std::string costs = fmt::format("n³/3 + n²·r = {:.2g} flops against ~{:.2g} for gbcd (~{:.3g} sweeps over K̄)",
                                        cholesky_flops, gbcd_flops, sweeps);
  const std::string memory =
      fmt::format("K̄'s factor ({}) {} the free memory budget ({})", format_bytes(static_cast<double>(needed)),
                  fits ? "fits" : "does not fit", format_bytes(static_cast<double>(available)));
  switch (options.method) {
    case VarianceMethod::cholesky:
      if (!fits) {
        GPSTREAM_THROW(
            "the cholesky variance route needs {} but {} is free: give the run more memory, or take the gbcd route",
            format_bytes(static_cast<double>(needed)), format_bytes(static_cast<double>(available)));
      }
      return {VarianceMethod::cholesky, "as asked; " + memory};
    case VarianceMethod::gbcd:
      return {VarianceMethod::gbcd, "as asked"};
    case VarianceMethod::automatic:
      break;
  }
  if (fits && cholesky_flops <= gbcd_flops) return {VarianceMethod::cholesky, memory + ", and " + costs};
  if (!fits) return {VarianceMethod::gbcd, memory};
  return {VarianceMethod::gbcd, costs};
}

VariancePrediction predict_latent_variance(KernelMatrix& training, const double* test_rows, std::size_t count,
                                           const VarianceOptions& options, const VariancePlan& plan,
                                           const VarianceBatchSink& sink) {
  GPSTREAM_CHECK(options.tolerance > 0.0, "the variance tolerance must be positive, not {}", options.tolerance);
  GPSTREAM_CHECK(plan.method != VarianceMethod::automatic, "plan_variances chooses the variance route");
  const std::size_t n = training.size();
  VariancePrediction result;
  result.latent.resize(count);
  if (options.first_row >= count) return result;
  GPSTREAM_CHECK(training.partition().global_rows > 0, "the model has no training rows");
  const bool cholesky = plan.method == VarianceMethod::cholesky;
  GPSTREAM_CHECK(cholesky || training.kernel().noise_variance() > 0.0,
                 "the gbcd variance route bounds its error by the noise variance, which is 0: take the "
                 "cholesky route");
  std::optional<MemoryReservation> factor_memory;
  if (cholesky) {
    factor_memory.emplace(
        training.context().memory().reserve(fmt::format("the factor of K̄ for the variances ({} x {} doubles)", n, n),
                                            variance_routes::cholesky_route_bytes(n, training.rows().columns()),
                                            "take the gbcd route, which forms no n×n matrix"));
  }
  // Test rows per batch (n doubles each): as many as half of the free budget
  // holds, at most kMaxBatchRows, unless the caller fixed it.
  const std::size_t rows = count - options.first_row;
  // (A rank of a distributed run may own no rows, when there are fewer than ranks.)
  const std::size_t column_bytes = checked_multiply(std::max<std::size_t>(n, 1), sizeof(double));
  const std::size_t wanted = std::min(rows, options.batch_rows > 0 ? options.batch_rows : kMaxBatchRows);
  const std::size_t minimum = options.batch_rows > 0 ? wanted : cholesky ? std::min(rows, kMinimumCholeskyBatch) : 1;
  const MemoryReservation batch_memory = training.context().memory().reserve_up_to(
      "a batch of variance solves", checked_multiply(wanted, column_bytes), options.batch_rows > 0 ? 1 : 2,
      checked_multiply(minimum, column_bytes));
  result.batch_rows = std::clamp<std::size_t>(batch_memory.bytes() / column_bytes, 1, rows);
  // Every rank solves the same batches: the smallest any rank's budget holds.
  result.batch_rows =
      static_cast<std::size_t>(training.context().communicator().min(static_cast<double>(result.batch_rows)));
  if (!cholesky && training.column_cache() == nullptr)
    result.cache = configure_column_cache(training, {options.policy, ColumnReusePattern::reselected, 0}, options.cache);

  const variance_routes::BatchCursor cursor{options.first_row, count, result.batch_rows};
  std::unique_ptr<IterativeMethod> method;
  if (cholesky) {
    method =
        variance_routes::make_cholesky_variances(training, test_rows, cursor, std::move(*factor_memory), result, sink);
  } else {
    method = variance_routes::make_gbcd_variances(training, test_rows, cursor, options, result, sink);
  }
  StoppingRule rule;
  rule.time_limit_seconds = options.time_limit_seconds;
  const SolverRun run = run_iterations(*method, training, rule, /*fresh_start=*/true);
  if (run.reason == StopReason::interrupted) throw Cancelled("variance computation stopped");
  result.time_limit_reached = run.reason == StopReason::time_limit;
  return result;
}

std::vector<double> predict_latent_covariance(KernelMatrix& training, const double* test_rows, std::size_t count) {
  GPSTREAM_CHECK(!training.distributed(), "the joint covariance factorises all of K̄ in one process");
  const std::size_t n = training.size(), m = count;
  const MemoryReservation memory = training.context().memory().reserve(
      fmt::format("the factor of K̄ for the joint covariance ({} x {} doubles)", n, n),
      checked_add(variance_routes::cholesky_route_bytes(n, training.rows().columns()),
                  checked_multiply(n, m, sizeof(double))),
      "ask for per-row variances instead");
  std::vector<double> factor = dense_kernel_matrix(training);
  const ScopedBlasThreads all_cores = training.context().parallel_blas();
  cholesky_factor(factor.data(), n, "K̄ = K + σ²I");
  std::vector<double> w(checked_multiply(n, m));
  training.cross_covariance(test_rows, m, w.data());
  const int ni = static_cast<int>(n), mi = static_cast<int>(m);
  cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, ni, mi, 1.0, factor.data(), ni,
              w.data(), mi);
  std::vector<double> covariance(checked_multiply(m, m));
  training.block(test_rows, m, test_rows, m, covariance.data());
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, mi, mi, ni, -1.0, w.data(), mi, w.data(), mi, 1.0,
              covariance.data(), mi);
  return covariance;
}

}  // namespace gpstream

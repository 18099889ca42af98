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
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

namespace gpstream {
namespace {

constexpr std::size_t kMaxBatchRows = 1024;
// With the local start: its rows must cover a batch's extent and the reach of
// the kernel around it, so that its cost per test row grows with the batch
// (docs/benchmarks.md, "Tuning constants and their figures").
constexpr std::size_t kLocalStartBatchRows = 256;

// The largest batch of a route, with or without the local start.
std::size_t largest_batch(bool local_start) { return local_start ? kLocalStartBatchRows : kMaxBatchRows; }
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
// The cholesky route with the factor on disk: panels of this many columns when the budget holds two, else as
// many as it holds (at least kMinimumDiskPanel): wider panels read the factor fewer times.
constexpr std::size_t kDiskPanelColumns = 2048, kMinimumDiskPanel = 64;
// The planner's pilot of the gbcd route: this many test rows solved as one
// batch, stopped once it has cost this fraction of the cholesky route's flops.
// With the local start they lie together, as that route's batches do (rows
// spread over the set need many more steps than a batch: docs/variance.md);
// else they are evenly spaced over the test set.
constexpr std::size_t kPilotRows = 64;
constexpr double kPilotShare = 0.02;

// Flops of one GBCD step of the variance route on a batch of r open rows: the
// m active columns over n rows (kernel entries) and their product with G.
double gbcd_step_flops(std::size_t n, std::size_t d, std::size_t m, std::size_t r) {
  return static_cast<double>(n) * static_cast<double>(m) *
         (kEntryFlopsPerInput * static_cast<double>(d) + kEntryFlopsExp + 2.0 * static_cast<double>(r));
}

struct Pilot {
  std::uint64_t iterations = 0;
  bool finished = false;       // every row within the tolerance before the cap
  std::size_t local_rows = 0;  // of the local start of each batch (0: none)
};

// Solves kPilotRows of the test rows by the gbcd route, quietly, for at most `max_iterations` steps.
Pilot run_pilot(KernelMatrix& training, const double* test_rows, std::size_t count, const VarianceOptions& options,
                bool local_start, std::uint64_t max_iterations) {
  const std::size_t d = training.rows().columns(), rows = count - options.first_row;
  const std::size_t s = std::min(kPilotRows, rows);
  std::vector<std::size_t> chosen(s);
  for (std::size_t k = 0; k < s; ++k) chosen[k] = options.first_row + k * rows / s;
  if (local_start) {
    chosen = variance_routes::nearest_test_rows(training.kernel().hyperparameters(), test_rows, d, options.first_row,
                                                rows, s);
  }
  std::vector<double> sample(checked_multiply(s, d));
  for (std::size_t k = 0; k < s; ++k) std::copy_n(test_rows + chosen[k] * d, d, sample.data() + k * d);
  const MemoryReservation memory = training.context().memory().reserve(
      "the variance planner's pilot batch",
      checked_multiply(std::max<std::size_t>(training.size(), 1), 3 * s, sizeof(double)));
  VarianceOptions pilot = options;
  pilot.first_row = 0;
  pilot.max_iterations = max_iterations;
  VariancePrediction result;
  result.latent.resize(s);
  const auto method =
      variance_routes::make_gbcd_variances(training, sample.data(), {0, s, s}, pilot, local_start, result, {});
  const Context::ObserverScope quiet(training.context(), {});
  const SolverRun run = run_iterations(*method, training, StoppingRule{}, /*fresh_start=*/true);
  if (run.reason == StopReason::interrupted) throw Cancelled("variance planning stopped");
  return {result.iterations, result.unconverged_rows == 0, result.local_rows};
}

// The gbcd route's flops as a pilot batch measures them, and the note that says so. The sweep count of the
// estimate is kin40k's; kernels of short reach (spatial data) need far fewer. The pilot's steps are priced at
// a full batch's each, for every batch, with each batch's local start (a block step on its s rows and their
// factor); a pilot stopped at its cap leaves the estimate where that is larger. (Only where the cholesky route
// is a choice: else gbcd is the route whatever it costs.)
std::pair<double, std::string> piloted_gbcd_flops(KernelMatrix& training, const double* test_rows, std::size_t count,
                                                  const VarianceOptions& options, bool local_start,
                                                  double cholesky_flops, double estimate) {
  const std::size_t n = training.size(), d = training.rows().columns();
  const std::size_t rows = count - options.first_row, full_batch = std::min(rows, largest_batch(local_start));
  const double pilot_step = gbcd_step_flops(n, d, options.active_set_size, std::min(rows, kPilotRows));
  const auto cap = static_cast<std::uint64_t>(std::max(1.0, kPilotShare * cholesky_flops / pilot_step));
  const Pilot pilot = run_pilot(training, test_rows, count, options, local_start, cap);
  const double batches = std::ceil(static_cast<double>(rows) / static_cast<double>(full_batch));
  const double local = static_cast<double>(pilot.local_rows);
  const double measured =
      (static_cast<double>(pilot.iterations) * gbcd_step_flops(n, d, options.active_set_size, full_batch) +
       gbcd_step_flops(n, d, pilot.local_rows, full_batch) + local * local * local / 3.0) *
      batches;
  if (pilot.finished) {
    return {measured, fmt::format(" (a pilot batch of {} rows took {} step{})", std::min(rows, kPilotRows),
                                  pilot.iterations, pilot.iterations == 1 ? "" : "s")};
  }
  return {std::max(estimate, measured), fmt::format(" (a pilot batch of {} rows was not done after {} steps)",
                                                    std::min(rows, kPilotRows), pilot.iterations)};
}

}  // namespace

namespace variance_routes {

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
  if (text == "nearest") return VarianceMethod::nearest;
  GPSTREAM_THROW_ARGUMENT("unknown variance method \"{}\" (choose auto, cholesky, gbcd or nearest)", text);
}

const char* to_string(VarianceMethod method) {
  switch (method) {
    case VarianceMethod::automatic:
      return "auto";
    case VarianceMethod::cholesky:
      return "cholesky";
    case VarianceMethod::gbcd:
      return "gbcd";
    case VarianceMethod::nearest:
      return "nearest";
  }
  return "?";
}

VariancePlan plan_variances(KernelMatrix& training, std::size_t count, const VarianceOptions& options,
                            const double* test_rows) {
  if (options.method == VarianceMethod::nearest) {
    GPSTREAM_CHECK(!training.distributed(),
                   "the nearest variance route runs in one process (it ranks every training row for each test row), "
                   "but the training rows are partitioned among ranks: take the gbcd route");
    return {VarianceMethod::nearest,
            fmt::format("as asked: an upper bound, each row conditioned on its {} training rows of highest covariance",
                        std::min(options.neighbours, training.size())),
            false};
  }
  if (training.distributed()) {
    GPSTREAM_CHECK(options.method != VarianceMethod::cholesky,
                   "the cholesky variance route factorises all of K̄ in one process, but the training rows are "
                   "partitioned among ranks: take the gbcd route");
    return {VarianceMethod::gbcd, "the training rows are partitioned among the ranks (each solves for its own rows)",
            false};
  }
  const std::size_t n = training.size(), d = training.rows().columns();
  const std::size_t rows = count > options.first_row ? count - options.first_row : 0;
  const double order = static_cast<double>(n);
  const double cholesky_flops = PanelCholesky::flops(n) + order * order * static_cast<double>(rows);
  const double signal = training.kernel().constant_self_covariance().value_or(1.0);
  const double sweeps =
      kGbcdSweeps * std::max(1.0, kGbcdSweepsNoiseRatio * signal / training.kernel().noise_variance());
  double gbcd_flops = sweeps * order * order *
                      (static_cast<double>(rows) + kEntryFlopsPerInput * static_cast<double>(d) + kEntryFlopsExp);
  const std::size_t needed = checked_add(variance_routes::cholesky_route_bytes(n, training.rows().columns()),
                                         checked_multiply(n, std::min(rows, kMinimumCholeskyBatch), sizeof(double)));
  const std::size_t available = training.context().memory().available();
  const bool fits = needed <= available;
  // On disk: the rows, two panels and a batch in memory.
  const std::size_t disk_needed =
      checked_add(checked_multiply(n, d, sizeof(double)),
                  checked_multiply(n, 2 * kMinimumDiskPanel + std::min(rows, kMinimumCholeskyBatch), sizeof(double)));
  const std::uint64_t factor_disk_bytes =
      checked_multiply(variance_routes::factor_store_doubles(n, kDiskPanelColumns), std::uint64_t{sizeof(double)});
  const std::uint64_t disk_room =
      options.factor_store_room ? options.factor_store_room() : std::numeric_limits<std::uint64_t>::max();
  const bool room_on_disk = factor_disk_bytes <= disk_room;
  const bool on_disk = !fits && options.open_factor_store && disk_needed <= available && room_on_disk;
  std::string pilot_note;
  const bool local_start = variance_routes::local_start_applies(training, options, test_rows, count);
  if (test_rows != nullptr && rows > 0 && options.method == VarianceMethod::automatic && (fits || on_disk) &&
      training.kernel().noise_variance() > 0.0) {
    std::tie(gbcd_flops, pilot_note) =
        piloted_gbcd_flops(training, test_rows, count, options, local_start, cholesky_flops, gbcd_flops);
  }
  const std::string costs =
      fmt::format("n³/3 + n²·r = {:.2g} flops against ~{:.2g} for gbcd{}", cholesky_flops, gbcd_flops, pilot_note);
  const std::string memory =
      fmt::format("K̄'s factor ({}) {} the free memory budget ({})", format_bytes(static_cast<double>(needed)),
                  fits ? "fits" : "does not fit", format_bytes(static_cast<double>(available)));
  const std::string disk =
      fmt::format("K̄'s factor ({}) does not fit the free memory budget ({}): on disk",
                  format_bytes(static_cast<double>(needed)), format_bytes(static_cast<double>(available)));
  switch (options.method) {
    case VarianceMethod::cholesky:
      if (on_disk) return {VarianceMethod::cholesky, "as asked; " + disk, true};
      if (!fits) {
        GPSTREAM_THROW(
            "the cholesky variance route needs {} but {} is free: give the run more memory, or take the gbcd route",
            format_bytes(static_cast<double>(needed)), format_bytes(static_cast<double>(available)));
      }
      return {VarianceMethod::cholesky, "as asked; " + memory, false};
    case VarianceMethod::gbcd:
      return {VarianceMethod::gbcd, "as asked", false};
    case VarianceMethod::nearest:
    case VarianceMethod::automatic:
      break;
  }
  if (fits && cholesky_flops <= gbcd_flops) return {VarianceMethod::cholesky, memory + ", and " + costs, false};
  if (on_disk && cholesky_flops <= gbcd_flops) return {VarianceMethod::cholesky, disk + ", and " + costs, true};
  if (!fits && !on_disk) {
    const std::string no_room =
        options.open_factor_store && !room_on_disk
            ? fmt::format(", nor on disk ({} free for its {})", format_bytes(static_cast<double>(disk_room)),
                          format_bytes(static_cast<double>(factor_disk_bytes)))
            : "";
    return {
        VarianceMethod::gbcd,
        memory + no_room + " (where gbcd's solves take too long, the nearest route bounds each variance from above)",
        false};
  }
  if (!fits) return {VarianceMethod::gbcd, memory + ", and " + costs, false};
  return {VarianceMethod::gbcd, costs, false};
}

VariancePrediction predict_latent_variance(KernelMatrix& training, const double* test_rows, std::size_t count,
                                           const VarianceOptions& options, const VariancePlan& plan,
                                           const VarianceBatchSink& sink) {
  GPSTREAM_CHECK_ARGUMENT(options.tolerance > 0.0, "the variance tolerance must be positive, not {}",
                          options.tolerance);
  GPSTREAM_CHECK(plan.method != VarianceMethod::automatic, "plan_variances chooses the variance route");
  const std::size_t n = training.size();
  VariancePrediction result;
  result.latent.resize(count);
  if (options.first_row >= count) return result;
  GPSTREAM_CHECK(training.partition().global_rows > 0, "the model has no training rows");
  const bool cholesky = plan.method == VarianceMethod::cholesky, nearest = plan.method == VarianceMethod::nearest;
  GPSTREAM_CHECK(cholesky || nearest || training.kernel().noise_variance() > 0.0,
                 "the gbcd variance route bounds its error by the noise variance, which is 0: take the "
                 "cholesky route");
  std::optional<MemoryReservation> factor_memory, disk_route_rows;  // held while the route runs
  std::size_t panel_columns = 0;
  if (cholesky && plan.factor_on_disk) {
    GPSTREAM_CHECK(options.open_factor_store,
                   "the variance plan puts K̄'s factor on disk, but there is no store for it");
    // The rows, then two panels as wide as the budget allows (the batch takes its share next).
    const std::size_t d = training.rows().columns();
    disk_route_rows =
        training.context().memory().reserve("the training rows for K̄'s factor", checked_multiply(n, d, sizeof(double)));
    MemoryReservation panels = training.context().memory().reserve_up_to(
        "two panels of K̄'s factor", checked_multiply(n, 2 * kDiskPanelColumns, sizeof(double)), 2,
        checked_multiply(n, 2 * kMinimumDiskPanel, sizeof(double)));
    panel_columns = std::max(kMinimumDiskPanel, panels.bytes() / checked_multiply(n, 2 * sizeof(double)) /
                                                    kMinimumDiskPanel * kMinimumDiskPanel);
    factor_memory.emplace(std::move(panels));
  } else if (cholesky) {
    factor_memory.emplace(
        training.context().memory().reserve(fmt::format("the factor of K̄ for the variances ({} x {} doubles)", n, n),
                                            variance_routes::cholesky_route_bytes(n, training.rows().columns()),
                                            "take the gbcd route, which forms no n×n matrix"));
  }
  // Test rows per batch (n doubles each; the nearest route's also its M
  // neighbours' numbers and rows): as many as half of the free budget
  // holds, at most largest_batch, unless the caller fixed it.
  const std::size_t rows = count - options.first_row;
  // (A rank of a distributed run may own no rows, when there are fewer than ranks.)
  const std::size_t neighbour_doubles =
      nearest ? checked_multiply(std::min(options.neighbours, n), training.rows().columns() + 2) : 0;
  const std::size_t column_bytes =
      checked_multiply(checked_add(std::max<std::size_t>(n, 1), neighbour_doubles), sizeof(double));
  const bool local_start =
      plan.method == VarianceMethod::gbcd && variance_routes::local_start_applies(training, options, test_rows, count);
  const std::size_t wanted = std::min(rows, options.batch_rows > 0 ? options.batch_rows : largest_batch(local_start));
  const std::size_t minimum = options.batch_rows > 0 ? wanted : cholesky ? std::min(rows, kMinimumCholeskyBatch) : 1;
  const MemoryReservation batch_memory = training.context().memory().reserve_up_to(
      "a batch of variance solves", checked_multiply(wanted, column_bytes), options.batch_rows > 0 ? 1 : 2,
      checked_multiply(minimum, column_bytes));
  result.batch_rows = std::clamp<std::size_t>(batch_memory.bytes() / column_bytes, 1, rows);
  // Every rank solves the same batches: the smallest any rank's budget holds.
  result.batch_rows =
      static_cast<std::size_t>(training.context().communicator().min(static_cast<double>(result.batch_rows)));
  if (!cholesky && !nearest && training.column_cache() == nullptr)
    result.cache = configure_column_cache(training, {options.policy, ColumnReusePattern::reselected, 0}, options.cache);

  const variance_routes::BatchCursor cursor{options.first_row, count, result.batch_rows};
  std::unique_ptr<IterativeMethod> method;
  if (cholesky && plan.factor_on_disk) {
    method = variance_routes::make_disk_cholesky_variances(
        training, test_rows, cursor, panel_columns,
        options.open_factor_store(variance_routes::factor_store_doubles(n, panel_columns)), result, sink);
  } else if (cholesky) {
    method =
        variance_routes::make_cholesky_variances(training, test_rows, cursor, std::move(*factor_memory), result, sink);
  } else if (nearest) {
    method = variance_routes::make_nearest_variances(training, test_rows, cursor, options.neighbours, result, sink);
  } else {
    method = variance_routes::make_gbcd_variances(training, test_rows, cursor, options, local_start, result, sink);
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

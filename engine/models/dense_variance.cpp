#include "engine/models/dense_variance.h"

#include "engine/core/error.h"
#include "engine/core/human_readable.h"
#include "engine/core/size_arithmetic.h"
#include "engine/core/blas_threads.h"
#include "engine/linalg/cholesky.h"
#include "engine/solvers/block_coordinate_descent.h"
#include "engine/solvers/cholesky_solver.h"
#include "engine/solvers/solver_driver.h"

#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

namespace gpstream {
namespace {

constexpr std::size_t kMaxBatchRows = 1024;
// Beyond this many open columns the greedy selection scores a sketch G·P
// with this many columns instead of G (see the header).
constexpr std::size_t kSketchColumns = 32;
// Columns of K̄ per panel of the cholesky route's factorisation: one panel's
// trailing update is n²·256 flops (4 s at n = 30,000 on 2 cores), how long a
// stop request can wait.
constexpr std::size_t kPanelColumns = 256;
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

// S (n×p) = G (n×r) · P (r×p), row-major, rows spread over the cores.
void sketch(const std::vector<double>& gradient, std::size_t n, std::size_t r, const std::vector<double>& projection,
            std::size_t p, std::vector<double>& out) {
  out.resize(n * p);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 512), [&](const tbb::blocked_range<std::size_t>& rows) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows.size()), static_cast<int>(p),
                static_cast<int>(r), 1.0, gradient.data() + rows.begin() * r, static_cast<int>(r), projection.data(),
                static_cast<int>(p), 0.0, out.data() + rows.begin() * p, static_cast<int>(p));
  });
}

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

// Keeps the columns `keep` (increasing) of G (n×r, row-major), in place.
void keep_columns(std::vector<double>& gradient, std::size_t n, std::size_t r, const std::vector<std::size_t>& keep) {
  const std::size_t kept = keep.size();
  for (std::size_t i = 0; i < n; ++i) {
    // Row i moves to i·kept ≤ i·r, and within it column keep[j] ≥ j to j: never overwrites what is still to be read.
    for (std::size_t j = 0; j < kept; ++j) gradient[i * kept + j] = gradient[i * r + keep[j]];
  }
  gradient.resize(n * kept);
}

// The first row of each batch of `batch_rows` from `first` on, and the
// rows each holds: the batches a run from `first` makes.
struct BatchCursor {
  std::size_t first = 0, count = 0, batch_rows = 1;
  bool done() const { return first >= count; }
  std::size_t rows() const { return std::min(batch_rows, count - first); }
};

// The gbcd route: one GBCD step at a time on a batch of test rows, batch
// after batch, for the solver driver: one driver loop (and one progress
// mechanism) for the variances as for training. A column closes when its
// error bound meets the tolerance (see the header), or above it after
// max_iterations of its batch (counted as unconverged). Each batch draws from
// its own random stream, seeded by (seed, first row): a batch gives the same
// variances whether a run starts at it or reaches it.
class GbcdVariances final : public IterativeMethod {
 public:
  GbcdVariances(KernelMatrix& training, const double* test_rows, BatchCursor cursor, const VarianceOptions& options,
                VariancePrediction& result, const VarianceBatchSink& sink)
      : training_(training),
        test_rows_(test_rows),
        cursor_(cursor),
        options_(options),
        result_(result),
        sink_(sink),
        descent_(training, make_active_set_policy(options.policy, options.candidates), options.active_set_size),
        rows_done_(cursor.first) {}

  void start() override { begin_batch(); }

  void iterate() override {
    BlockCoordinateDescent::Columns columns{gradient_.data(), open_.size()};
    if (open_.size() > kSketchColumns) {
      sketch(gradient_, n(), open_.size(), projection_, kSketchColumns, sketched_);
      columns.scored = sketched_.data();
      columns.scored_columns = kSketchColumns;
    }
    const ActiveSet& active = descent_.iterate_columns(columns, random_, auxiliary_, delta_, &gradient_on_b_);
    // f_j += ½ Σ_{i∈B} (G_B)_ij Δ_ij.
    const std::size_t m = active.indices.size();
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < open_.size(); ++j) {
        objective_[open_[j]] += 0.5 * gradient_on_b_[i * open_.size() + j] * delta_[i * open_.size() + j];
      }
    }
    ++batch_iteration_;
    ++result_.iterations;
    close_columns();
    if (open_.empty()) finish_batch();
  }

  RunCounters counters() const override { return counters_; }
  void set_counters(const RunCounters& counters) override { counters_ = counters; }
  // Σ_j f_j over the batch: −½ Σ k*ᵀK̄⁻¹k* as the solves converge.
  double objective() const override { return std::accumulate(objective_.begin(), objective_.end(), 0.0); }
  double convergence_measure() const override { return open_bound_; }
  std::string measure_name() const override { return "largest relative error bound of the open rows"; }
  bool complete() const override { return cursor_.done(); }
  bool converges() const override { return false; }  // each row stops at the tolerance on its own
  // Rows before the run's first (a resumed run) count as done.
  std::pair<std::uint64_t, std::uint64_t> work_done() const override { return {rows_done_, cursor_.count}; }

 private:
  std::size_t n() const { return training_.size(); }

  // U = 0: G = −K(X, Z), f_j = 0, for the batch at the cursor.
  void begin_batch() {
    if (cursor_.done()) return;
    const std::size_t r = cursor_.rows(), d = training_.rows().columns();
    std::seed_seq seed{static_cast<std::uint32_t>(options_.seed), static_cast<std::uint32_t>(options_.seed >> 32),
                       static_cast<std::uint32_t>(cursor_.first), static_cast<std::uint32_t>(cursor_.first >> 32)};
    random_.seed(seed);
    gradient_.resize(checked_multiply(n(), r));
    const double* z = test_rows_ + cursor_.first * d;
    training_.cross_covariance(z, r, gradient_.data());
    for (double& value : gradient_) value = -value;
    prior_.resize(r);
    for (std::size_t j = 0; j < r; ++j) prior_[j] = training_.kernel().self_covariance(z + j * d);
    open_.resize(r);  // batch column of each open column of G
    std::iota(open_.begin(), open_.end(), std::size_t{0});
    // P (r×p): random signs / √p, so that E ‖e P‖² = ‖e‖² (Johnson–Lindenstrauss).
    projection_.resize(r * kSketchColumns);
    const double sign = 1.0 / std::sqrt(static_cast<double>(kSketchColumns));
    for (double& value : projection_) value = (random_() & 1u) != 0 ? sign : -sign;
    objective_.assign(r, 0.0);
    final_bound_.assign(r, 0.0);
    batch_iteration_ = 0;
    close_columns();
    if (open_.empty()) finish_batch();
  }

  // The relative error bound of batch column j with ‖g_j‖₂² = `squared_norm`:
  // b / (V̂ − b), b = ‖g‖₂²/σ² (the header); infinite while V̂ ≤ b.
  double error_bound(std::size_t j, double squared_norm) const {
    const double noise = training_.kernel().noise_variance();
    const double bound = squared_norm / noise;
    const double written = prior_[j] + 2.0 * objective_[j] + (options_.noisy ? noise : 0.0);
    if (bound == 0.0) return 0.0;
    return written > bound ? bound / (written - bound) : std::numeric_limits<double>::infinity();
  }

  // Closes the columns whose bound meets the tolerance (or all, at the iteration limit).
  void close_columns() {
    const std::size_t r = open_.size();
    std::vector<double> squared_norms = column_squared_norms(gradient_, n(), r);
    training_.context().communicator().sum(squared_norms);  // over every rank's rows of G
    std::vector<std::size_t> keep_positions, still_open;
    open_bound_ = 0.0;
    for (std::size_t j = 0; j < r; ++j) {
      const double bound = error_bound(open_[j], squared_norms[j]);
      final_bound_[open_[j]] = bound;
      if (bound > options_.tolerance && batch_iteration_ < options_.max_iterations) {
        keep_positions.push_back(j);
        still_open.push_back(open_[j]);
        open_bound_ = std::max(open_bound_, bound);
      } else {
        if (bound > options_.tolerance) ++result_.unconverged_rows;
        ++rows_done_;
      }
    }
    if (still_open.size() != r) {
      keep_columns(gradient_, n(), r, keep_positions);
      // P keeps the rows of the open columns.
      for (std::size_t j = 0; j < keep_positions.size(); ++j) {
        std::copy_n(projection_.begin() + static_cast<std::ptrdiff_t>(keep_positions[j] * kSketchColumns),
                    kSketchColumns, projection_.begin() + static_cast<std::ptrdiff_t>(j * kSketchColumns));
      }
    }
    open_ = std::move(still_open);
  }

  void finish_batch() {
    const std::size_t first = cursor_.first, r = objective_.size();
    for (std::size_t j = 0; j < r; ++j) {
      // K** − k*ᵀK̄⁻¹k*, with k*ᵀK̄⁻¹k* ≈ −2 f_j; never below 0, which rounding could otherwise give.
      result_.latent[first + j] = std::max(0.0, prior_[j] + 2.0 * objective_[j]);
      result_.largest_error_bound = std::max(result_.largest_error_bound, final_bound_[j]);
    }
    ++result_.batches;
    if (sink_) sink_(first, std::span<const double>(result_.latent.data() + first, r));
    cursor_.first += r;
    begin_batch();
  }

  KernelMatrix& training_;
  const double* test_rows_;
  BatchCursor cursor_;
  const VarianceOptions& options_;
  VariancePrediction& result_;
  const VarianceBatchSink& sink_;
  BlockCoordinateDescent descent_;
  std::mt19937_64 random_;
  AuxiliaryState auxiliary_;
  RunCounters counters_;
  std::size_t rows_done_ = 0;
  std::uint64_t batch_iteration_ = 0;
  double open_bound_ = 0.0;
  std::vector<std::size_t> open_;
  std::vector<double> gradient_, delta_, gradient_on_b_, projection_, sketched_, objective_, prior_, final_bound_;
};

// The cholesky route: K̄ = LLᵀ one panel per iteration, then one batch of
// test rows per iteration, k*ᵀK̄⁻¹k* = ‖L⁻¹k*‖². Work is counted in Mflop.
class CholeskyVariances final : public IterativeMethod {
 public:
  CholeskyVariances(KernelMatrix& training, const double* test_rows, BatchCursor cursor,
                    MemoryReservation factor_memory, VariancePrediction& result, const VarianceBatchSink& sink)
      : training_(training),
        test_rows_(test_rows),
        cursor_(cursor),
        factor_memory_(std::move(factor_memory)),
        result_(result),
        sink_(sink) {
    const double order = static_cast<double>(training.size());
    total_flops_ =
        PanelCholesky::flops(training.size()) + order * order * static_cast<double>(cursor.count - cursor.first);
  }

  void start() override {
    factor_matrix_ = dense_kernel_matrix(training_);
    factorisation_ =
        std::make_unique<PanelCholesky>(factor_matrix_.data(), training_.size(), kPanelColumns, "K̄ = K + σ²I");
  }

  void iterate() override {
    const ScopedBlasThreads all_cores = training_.context().parallel_blas();
    ++result_.iterations;
    if (!factorisation_->done()) {
      done_flops_ += factorisation_->factor_next_panel();
      return;
    }
    const std::size_t n = training_.size(), d = training_.rows().columns(), r = cursor_.rows();
    const double* z = test_rows_ + cursor_.first * d;
    // W = L⁻¹K(X, Z) (n×r row-major), then v_j = K** − ‖w_j‖².
    batch_.resize(checked_multiply(n, r));
    training_.cross_covariance(z, r, batch_.data());
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, static_cast<int>(n),
                static_cast<int>(r), 1.0, factor_matrix_.data(), static_cast<int>(n), batch_.data(),
                static_cast<int>(r));
    const std::vector<double> quadratic = column_squared_norms(batch_, n, r);
    for (std::size_t j = 0; j < r; ++j) {
      result_.latent[cursor_.first + j] = std::max(0.0, training_.kernel().self_covariance(z + j * d) - quadratic[j]);
    }
    done_flops_ += static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(r);
    ++result_.batches;
    if (sink_) sink_(cursor_.first, std::span<const double>(result_.latent.data() + cursor_.first, r));
    cursor_.first += r;
  }

  RunCounters counters() const override { return counters_; }
  void set_counters(const RunCounters& counters) override { counters_ = counters; }
  double objective() const override { return 0.0; }
  double convergence_measure() const override { return 0.0; }
  std::string measure_name() const override { return ""; }
  bool complete() const override { return factorisation_ && factorisation_->done() && cursor_.done(); }
  bool converges() const override { return false; }
  std::pair<std::uint64_t, std::uint64_t> work_done() const override {
    return {static_cast<std::uint64_t>(done_flops_ / 1e6), static_cast<std::uint64_t>(total_flops_ / 1e6)};
  }

 private:
  KernelMatrix& training_;
  const double* test_rows_;
  BatchCursor cursor_;
  MemoryReservation factor_memory_;
  VariancePrediction& result_;
  const VarianceBatchSink& sink_;
  RunCounters counters_;
  std::vector<double> factor_matrix_, batch_;
  std::unique_ptr<PanelCholesky> factorisation_;
  double done_flops_ = 0.0, total_flops_ = 0.0;
};

std::size_t factor_bytes(std::size_t n) { return checked_multiply(n, n, sizeof(double)); }

// The factor and the training rows read whole to form it (dense_kernel_matrix).
std::size_t cholesky_route_bytes(std::size_t n, std::size_t d) {
  return checked_add(factor_bytes(n), checked_multiply(n, d, sizeof(double)));
}

}  // namespace

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
  const std::size_t needed = checked_add(cholesky_route_bytes(n, training.rows().columns()),
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
    factor_memory.emplace(training.context().memory().reserve(
        fmt::format("the factor of K̄ for the variances ({} x {} doubles)", n, n),
        cholesky_route_bytes(n, training.rows().columns()), "take the gbcd route, which forms no n×n matrix"));
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

  const BatchCursor cursor{options.first_row, count, result.batch_rows};
  std::unique_ptr<IterativeMethod> method;
  if (cholesky) {
    method = std::make_unique<CholeskyVariances>(training, test_rows, cursor, std::move(*factor_memory), result, sink);
  } else {
    method = std::make_unique<GbcdVariances>(training, test_rows, cursor, options, result, sink);
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
      checked_add(cholesky_route_bytes(n, training.rows().columns()), checked_multiply(n, m, sizeof(double))),
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

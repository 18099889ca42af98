#include "engine/models/dense_variance.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/solvers/block_coordinate_descent.h"
#include "engine/solvers/solver_driver.h"

#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpstream {
namespace {

constexpr std::size_t kMaxBatchRows = 1024;
// Beyond this many open columns the greedy selection scores a sketch G·P
// with this many columns instead of G (see the header).
constexpr std::size_t kSketchColumns = 32;

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

// max_i |G_ij| for each of the r columns of G (n×r, row-major).
std::vector<double> column_max_norms(const std::vector<double>& gradient, std::size_t n, std::size_t r) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n, 1024), std::vector<double>(r, 0.0),
      [&](const tbb::blocked_range<std::size_t>& range, std::vector<double> norms) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
          const double* row = gradient.data() + i * r;
          for (std::size_t j = 0; j < r; ++j) norms[j] = std::max(norms[j], std::abs(row[j]));
        }
        return norms;
      },
      [](std::vector<double> a, const std::vector<double>& b) {
        for (std::size_t j = 0; j < a.size(); ++j) a[j] = std::max(a[j], b[j]);
        return a;
      });
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

// One GBCD step at a time on a batch of test rows, batch after batch, for
// the solver driver: one driver loop (and one progress mechanism) for the
// variances as for training. A column closes when ‖g_j‖∞ ≤ tol, or above it
// after max_iterations of its batch (counted as unconverged).
class VarianceBatches final : public IterativeMethod {
 public:
  VarianceBatches(KernelMatrix& training, const double* test_rows, std::size_t count, const VarianceOptions& options,
                  std::size_t batch_rows, VariancePrediction& result)
      : training_(training),
        test_rows_(test_rows),
        count_(count),
        options_(options),
        batch_rows_(batch_rows),
        result_(result),
        descent_(training, make_active_set_policy(options.policy, options.candidates), options.active_set_size),
        random_(options.seed) {}

  void start() override { begin_batch(0); }

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
  double convergence_measure() const override { return open_norm_; }
  std::string measure_name() const override { return "max |g|inf of the open rows"; }
  bool complete() const override { return first_ >= count_; }
  bool converges() const override { return false; }  // each row stops at the tolerance on its own
  std::pair<std::uint64_t, std::uint64_t> work_done() const override { return {rows_done_, count_}; }

 private:
  std::size_t n() const { return training_.size(); }

  // U = 0: G = −K(X, Z), f_j = 0, for the test rows from `first` on.
  void begin_batch(std::size_t first) {
    first_ = first;
    if (first_ >= count_) return;
    const std::size_t r = std::min(batch_rows_, count_ - first_);
    gradient_.resize(checked_multiply(n(), r));
    training_.cross_covariance(test_rows_ + first_ * training_.rows().columns(), r, gradient_.data());
    for (double& value : gradient_) value = -value;
    open_.resize(r);  // batch column of each open column of G
    std::iota(open_.begin(), open_.end(), std::size_t{0});
    // P (r×p): random signs / √p, so that E ‖e P‖² = ‖e‖² (Johnson–Lindenstrauss).
    projection_.resize(r * kSketchColumns);
    const double sign = 1.0 / std::sqrt(static_cast<double>(kSketchColumns));
    for (double& value : projection_) value = (random_() & 1u) != 0 ? sign : -sign;
    objective_.assign(r, 0.0);
    final_norm_.assign(r, 0.0);
    batch_iteration_ = 0;
    close_columns();
    if (open_.empty()) finish_batch();
  }

  // Closes the columns that have converged (or all, at the iteration limit).
  void close_columns() {
    const std::size_t r = open_.size();
    const std::vector<double> norms = column_max_norms(gradient_, n(), r);
    std::vector<std::size_t> keep_positions, still_open;
    open_norm_ = 0.0;
    for (std::size_t j = 0; j < r; ++j) {
      final_norm_[open_[j]] = norms[j];
      if (norms[j] > options_.tolerance && batch_iteration_ < options_.max_iterations) {
        keep_positions.push_back(j);
        still_open.push_back(open_[j]);
        open_norm_ = std::max(open_norm_, norms[j]);
      } else {
        if (norms[j] > options_.tolerance) ++result_.unconverged_rows;
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
    const std::size_t d = training_.rows().columns();
    const Kernel& kernel = training_.kernel();
    for (std::size_t j = 0; j < objective_.size(); ++j) {
      // K** − k*ᵀK̄⁻¹k*, with k*ᵀK̄⁻¹k* ≈ −2 f_j; never below 0, which rounding could otherwise give.
      const double* z = test_rows_ + (first_ + j) * d;
      result_.latent[first_ + j] = std::max(0.0, kernel.self_covariance(z) + 2.0 * objective_[j]);
      result_.gradient_max_norm = std::max(result_.gradient_max_norm, final_norm_[j]);
    }
    ++result_.batches;
    begin_batch(first_ + objective_.size());
  }

  KernelMatrix& training_;
  const double* test_rows_;
  std::size_t count_;
  const VarianceOptions& options_;
  std::size_t batch_rows_;
  VariancePrediction& result_;
  BlockCoordinateDescent descent_;
  std::mt19937_64 random_;
  AuxiliaryState auxiliary_;
  RunCounters counters_;
  std::size_t first_ = 0, rows_done_ = 0;
  std::uint64_t batch_iteration_ = 0;
  double open_norm_ = 0.0;
  std::vector<std::size_t> open_;
  std::vector<double> gradient_, delta_, gradient_on_b_, projection_, sketched_, objective_, final_norm_;
};

}  // namespace

VariancePrediction predict_latent_variance(KernelMatrix& training, const double* test_rows, std::size_t count,
                                           const VarianceOptions& options) {
  GPSTREAM_CHECK(options.tolerance > 0.0, "the variance tolerance must be positive, not {}", options.tolerance);
  const std::size_t n = training.size();
  VariancePrediction result;
  result.latent.resize(count);
  if (count == 0) return result;
  GPSTREAM_CHECK(n > 0, "the model has no training rows");

  // Test rows per batch: as many columns of G (n×r) as half of the free
  // budget holds, at most kMaxBatchRows, unless the caller fixed it.
  const std::size_t column_bytes = checked_multiply(std::max<std::size_t>(n, 1), sizeof(double));
  const std::size_t wanted = options.batch_rows > 0 ? options.batch_rows : std::min(count, kMaxBatchRows);
  const MemoryReservation batch_memory = training.context().memory().reserve_up_to(
      "a batch of variance solves", checked_multiply(std::min(wanted, count), column_bytes),
      options.batch_rows > 0 ? 1 : 2, column_bytes);
  result.batch_rows = std::max<std::size_t>(1, std::min(batch_memory.bytes() / column_bytes, count));

  VarianceBatches batches(training, test_rows, count, options, result.batch_rows, result);
  const SolverRun run = run_iterations(batches, training, StoppingRule{}, /*fresh_start=*/true);
  if (run.reason == StopReason::interrupted) throw Cancelled("variance computation stopped");
  return result;
}

}  // namespace gpstream

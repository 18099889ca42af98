// The gbcd route of the dense model's variances (dense_variance.h): batched
// GBCD solves K̄U = K(X, X*) with a per-row relative error bound
// (BoSminchisescu08 §3.1).
#include "engine/core/size_arithmetic.h"
#include "engine/dense/variance_routes.h"
#include "engine/solvers/block_coordinate_descent.h"

#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace gpstream::variance_routes {
namespace {

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

// Keeps the columns `keep` (increasing) of G (n×r, row-major), in place.
void keep_columns(std::vector<double>& gradient, std::size_t n, std::size_t r, const std::vector<std::size_t>& keep) {
  const std::size_t kept = keep.size();
  for (std::size_t i = 0; i < n; ++i) {
    // Row i moves to i·kept ≤ i·r, and within it column keep[j] ≥ j to j: never overwrites what is still to be read.
    for (std::size_t j = 0; j < kept; ++j) gradient[i * kept + j] = gradient[i * r + keep[j]];
  }
  gradient.resize(n * kept);
}

// The gbcd route: one GBCD step at a time on a batch of test rows, batch
// after batch, for the solver driver: one driver loop (and one progress
// mechanism) for the variances as for training. A column closes when its
// error bound meets the tolerance (see the header), or above it after
// max_iterations of its batch (counted as unconverged). Each batch draws from
// its own random stream, seeded by (seed, first row): a batch gives the same
// variances whether a run starts at it or reaches it.
class GbcdVariances final : public VarianceRoute {
 public:
  GbcdVariances(KernelMatrix& training, const double* test_rows, BatchCursor cursor, const VarianceOptions& options,
                VariancePrediction& result, const VarianceBatchSink& sink)
      : VarianceRoute(training, test_rows, cursor, result, sink),
        options_(options),
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

  // Σ_j f_j over the batch: −½ Σ k*ᵀK̄⁻¹k* as the solves converge.
  double objective() const override { return std::accumulate(objective_.begin(), objective_.end(), 0.0); }
  double convergence_measure() const override { return open_bound_; }
  std::string measure_name() const override { return "largest relative error bound of the open rows"; }
  bool complete() const override { return cursor_.done(); }  // each row stops at the tolerance on its own
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
    publish_batch(r);
    begin_batch();
  }

  const VarianceOptions& options_;
  BlockCoordinateDescent descent_;
  std::mt19937_64 random_;
  AuxiliaryState auxiliary_;
  std::size_t rows_done_ = 0;
  std::uint64_t batch_iteration_ = 0;
  double open_bound_ = 0.0;
  std::vector<std::size_t> open_;
  std::vector<double> gradient_, delta_, gradient_on_b_, projection_, sketched_, objective_, prior_, final_bound_;
};

}  // namespace

std::unique_ptr<IterativeMethod> make_gbcd_variances(KernelMatrix& training, const double* test_rows,
                                                     BatchCursor cursor, const VarianceOptions& options,
                                                     VariancePrediction& result, const VarianceBatchSink& sink) {
  return std::make_unique<GbcdVariances>(training, test_rows, cursor, options, result, sink);
}

}  // namespace gpstream::variance_routes

// The gbcd route of the dense model's variances (dense_variance.h): batched
// GBCD solves K̄U = K(X, X*) with a per-row relative error bound
// (BoSminchisescu08 §3.1), on spatially compact batches, each started by the
// exact solve on its local training rows.
#include "engine/core/size_arithmetic.h"
#include "engine/dense/low_rank_error_bound.h"
#include "engine/dense/variance_routes.h"
#include "engine/linalg/cholesky.h"
#include "engine/solvers/block_coordinate_descent.h"

#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <random>

namespace gpstream::variance_routes {
namespace {

// Beyond this many open columns the greedy selection scores a sketch G·P
// with this many columns instead of G (see the header).
constexpr std::size_t kSketchColumns = 32;
// Rows published together: this many batches, ordered into compact tiles
// (more with the local start, whose local rows must cover a batch; docs/benchmarks.md, "Tuning constants
// and their figures").
// Resume continues after the last window published.
constexpr std::size_t kWindowBatches = 4, kLocalStartWindowBatches = 16;
// The local start's rows: those whose covariance with a row of the batch is
// at least this fraction of the prior variance, at least a GBCD step's active
// set (one exact block step is not worth a pass over G on fewer rows than a
// GBCD step takes; docs/variance.md) and at most VarianceOptions::local_rows.
constexpr double kReachFraction = 0.5;
// A batch's last open rows (a few, which each GBCD step closes slowly: the
// step's n×m kernel entries cost the same for 5 rows as for 256) go on with
// the next batch of the window once at most this fraction of a batch is
// open: its start and steps serve them too, at the cost of their columns in
// the products (docs/variance.md, "Carried rows").
constexpr double kCarriedFraction = 0.25;
// The Nyström certificate is computed while it pays: a check that closes fewer
// than this fraction of the rows the plain bound leaves open is not made again,
// after a local start or after a GBCD step (each on its own), until the next
// window (multiscale's model: it closes almost none there; docs/variance.md).
constexpr double kCertificatePaysFraction = 0.25;

// The scale of each input as the kernel sees it: the shortest lengthscale any
// term gives it (1 where none does), so that an input the kernel hardly
// uses (bcef's third, ℓ = 6 against 0.035) does not split the batches.
std::vector<double> input_scales(const KernelHyperparameters& kernel, std::size_t d) {
  std::vector<double> scales(d, std::numeric_limits<double>::infinity());
  const auto take = [&](const std::vector<double>& lengthscales) {
    for (std::size_t l = 0; l < d && !lengthscales.empty(); ++l) {
      scales[l] = std::min(scales[l], lengthscales.size() == d ? lengthscales[l] : lengthscales.front());
    }
  };
  for (std::size_t t = 0; t < kernel.term_count(); ++t) take(kernel.term(t).lengthscales);
  for (double& scale : scales) scale = std::isfinite(scale) && scale > 0.0 ? scale : 1.0;
  return scales;
}

// Orders rows [first, first + count) of `points` (d columns) into tiles (the
// batches) of at most `tile_rows` rows that lie together: recursive bisection,
// on the coordinate of widest range in units of `scales`, at the quantile that
// leaves whole tiles on one side. `order` gets the rows, `starts` each tile's
// first position in it (and count at the end). Deterministic: ties go by row.
void spatial_tiles(const double* points, std::size_t d, const std::vector<double>& scales, std::size_t first,
                   std::size_t count, std::size_t tile_rows, std::vector<std::size_t>& order,
                   std::vector<std::size_t>& starts) {
  order.resize(count);
  std::iota(order.begin(), order.end(), first);
  starts.clear();
  const auto split = [&](auto&& self, std::size_t begin, std::size_t end) -> void {
    if (end - begin <= tile_rows) {
      starts.push_back(begin);
      return;
    }
    std::size_t widest = 0;
    double widest_range = -1.0;
    for (std::size_t c = 0; c < d; ++c) {
      double low = std::numeric_limits<double>::infinity(), high = -low;
      for (std::size_t k = begin; k < end; ++k) {
        low = std::min(low, points[order[k] * d + c]);
        high = std::max(high, points[order[k] * d + c]);
      }
      if ((high - low) / scales[c] > widest_range) widest_range = (high - low) / scales[c], widest = c;
    }
    // Whole tiles to one side, so that there are ⌈count / tile_rows⌉, all but the last full.
    const std::size_t tiles = (end - begin + tile_rows - 1) / tile_rows;
    const std::size_t middle = begin + tiles / 2 * tile_rows;
    const auto before = [&](std::size_t a, std::size_t b) {
      const double x = points[a * d + widest], y = points[b * d + widest];
      return x < y || (x == y && a < b);
    };
    std::nth_element(order.begin() + static_cast<std::ptrdiff_t>(begin),
                     order.begin() + static_cast<std::ptrdiff_t>(middle),
                     order.begin() + static_cast<std::ptrdiff_t>(end), before);
    self(self, begin, middle);
    self(self, middle, end);
  };
  if (count > 0) split(split, 0, count);
  starts.push_back(count);
}

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

// G (n×r, row-major) becomes n×width, its columns where they were and the rest unset; in place (each row
// moves to a place at or after its own, the last row first, so none is overwritten before it moves).
void widen_columns(std::vector<double>& gradient, std::size_t n, std::size_t r, std::size_t width) {
  gradient.resize(checked_multiply(n, width));
  if (r == 0) return;
  for (std::size_t i = n; i-- > 0;)
    std::memmove(gradient.data() + i * width, gradient.data() + i * r, r * sizeof(double));
}

// The gbcd route: one GBCD step at a time on a batch of test rows, batch
// after batch, for the solver driver: one driver loop (and one progress
// mechanism) for the variances as for training. The rows go in windows of
// a few batches, each window ordered into compact tiles (a batch's
// rows share every active set, so rows that lie together need fewer); a
// window's rows are published once all its rows are done. A batch starts
// with the exact solve on its local rows (local_start) where that applies;
// once few of its rows are open, the next batch of the window begins and
// they go on with it (kCarriedFraction). A column closes when its error
// bound meets the tolerance (see the header), or above it after
// max_iterations GBCD steps since its batch began (counted as unconverged).
// Each batch draws from its own random stream, seeded by (seed, window's
// first row, batch): a batch gives the same variances whether a run starts
// at its window or reaches it.
class GbcdVariances final : public VarianceRoute {
 public:
  GbcdVariances(KernelMatrix& training, const double* test_rows, BatchCursor cursor, const VarianceOptions& options,
                bool local_start, VariancePrediction& result, const VarianceBatchSink& sink)
      : VarianceRoute(training, test_rows, cursor, result, sink),
        options_(options),
        local_start_(local_start),
        descent_(training, make_active_set_policy(options.policy, options.candidates), options.active_set_size),
        rows_done_(cursor.first) {}

  void start() override {
    // The carried columns of G beside a batch's, as far as the budget allows.
    const std::size_t carried = static_cast<std::size_t>(kCarriedFraction * static_cast<double>(cursor_.batch_rows));
    const std::size_t column_bytes = checked_multiply(n(), sizeof(double));
    carried_memory_ = training_.context().memory().reserve_up_to("the variance rows carried to the next batch",
                                                                 checked_multiply(carried, column_bytes), 1);
    most_carried_ = std::min(carried, carried_memory_.bytes() / column_bytes);
    gradient_.reserve(checked_multiply(n(), cursor_.batch_rows + most_carried_));  // G never moves as it widens
    if (local_start_) {
      const std::size_t s = options_.local_rows, d = training_.rows().columns();
      // K̄ on the local rows, their rows, and their block of G and of Δ; without the room, no local start.
      const std::size_t bytes = checked_multiply(
          checked_add(checked_multiply(s, s + d), checked_multiply(2 * s, cursor_.batch_rows + most_carried_)),
          sizeof(double));
      MemoryReservation memory =
          training_.context().memory().reserve_up_to("the local start of the variance batches", bytes, 1);
      if (memory.bytes() >= bytes) {
        local_memory_ = std::move(memory);
        result_.local_rows = s;
      }
    }
    // With the local start only: what GBCD steps alone leave is rough, and there the bound gains little.
    if (options_.certificate_points > 0 && result_.local_rows > 0) {
      certificate_.emplace(training_, options_.certificate_points);
      result_.certificate_points = certificate_->points();
    }
    begin_window();
    begin_batch();
  }

  // One unit of work between the driver's reports and stop checks: the next
  // batch's start (with its local start), or one GBCD step on the open rows.
  void iterate() override {
    if (open_.empty() || (open_.size() <= most_carried_ && tile_ + 1 < tile_starts_.size())) {
      begin_batch();
      return;
    }
    BlockCoordinateDescent::Columns columns{gradient_.data(), open_.size()};
    if (open_.size() > kSketchColumns) {
      sketch(gradient_, n(), open_.size(), projection_, kSketchColumns, sketched_);
      columns.scored = sketched_.data();
      columns.scored_columns = kSketchColumns;
    }
    const ActiveSet& active = descent_.iterate_columns(columns, random_, auxiliary_, delta_, &gradient_on_b_);
    // f_j += ½ Σ_{i∈B} (G_B)_ij Δ_ij.
    add_to_objective(active.indices.size(), gradient_on_b_, delta_);
    ++batch_iteration_;
    ++result_.iterations;
    close_columns();
    if (open_.empty()) finish_window();
  }

  // Σ_j f_j over the window: −½ Σ k*ᵀK̄⁻¹k* as the solves converge.
  double objective() const override { return std::accumulate(objective_.begin(), objective_.end(), 0.0); }
  double convergence_measure() const override { return open_bound_; }
  std::string measure_name() const override { return "largest relative error bound of the open rows"; }
  bool complete() const override { return cursor_.done(); }  // each row stops at the tolerance on its own
  // Rows before the run's first (a resumed run) count as done.
  std::pair<std::uint64_t, std::uint64_t> work_done() const override { return {rows_done_, cursor_.count}; }

 private:
  std::size_t n() const { return training_.size(); }

  // The window at the cursor, in tiles.
  void begin_window() {
    if (cursor_.done()) return;
    const std::size_t batches = local_start_ ? kLocalStartWindowBatches : kWindowBatches;
    window_rows_ = std::min(cursor_.count - cursor_.first, batches * cursor_.batch_rows);
    const std::size_t d = training_.rows().columns();
    spatial_tiles(test_rows_, d, input_scales(training_.kernel().hyperparameters(), d), cursor_.first, window_rows_,
                  cursor_.batch_rows, window_order_, tile_starts_);
    tile_ = 0;
    prior_.assign(window_rows_, 0.0);
    objective_.assign(window_rows_, 0.0);
    final_bound_.assign(window_rows_, 0.0);
    first_step_.assign(window_rows_, 0);
    certificate_pays_after_start_ = certificate_pays_after_step_ = true;
  }

  // The window's next tile: its columns of G, −K(X, Z) (U = 0, f_j = 0),
  // beside those still open; then the local start. Rows that close here are
  // written at once; a window whose rows all close is published (the next
  // begins at the next iterate, so that the driver reports and polls between).
  void begin_batch() {
    if (cursor_.done()) return;
    const std::size_t d = training_.rows().columns();
    const std::size_t begin = tile_starts_[tile_], r = tile_starts_[tile_ + 1] - begin, carried = open_.size();
    std::seed_seq seed{static_cast<std::uint32_t>(options_.seed), static_cast<std::uint32_t>(options_.seed >> 32),
                       static_cast<std::uint32_t>(cursor_.first), static_cast<std::uint32_t>(cursor_.first >> 32),
                       static_cast<std::uint32_t>(tile_)};
    random_.seed(seed);
    ++tile_;
    result_.carried_rows += carried;
    points_.resize(r * d);
    for (std::size_t j = 0; j < r; ++j)
      std::copy_n(test_rows_ + window_order_[begin + j] * d, d, points_.data() + j * d);
    const std::size_t width = carried + r;
    widen_columns(gradient_, n(), carried, width);
    training_.cross_covariance(points_.data(), r, gradient_.data() + carried, width);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n(), 1024), [&](const tbb::blocked_range<std::size_t>& rows) {
      for (std::size_t i = rows.begin(); i < rows.end(); ++i)
        for (std::size_t j = carried; j < width; ++j) gradient_[i * width + j] = -gradient_[i * width + j];
    });
    for (std::size_t j = 0; j < r; ++j) {
      prior_[begin + j] = training_.kernel().self_covariance(points_.data() + j * d);
      first_step_[begin + j] = result_.iterations;
      open_.push_back(begin + j);  // window position of each open column of G
    }
    // P (r×p): random signs / √p, so that E ‖e P‖² = ‖e‖² (Johnson–Lindenstrauss).
    projection_.resize((carried + r) * kSketchColumns);
    const double sign = 1.0 / std::sqrt(static_cast<double>(kSketchColumns));
    for (std::size_t k = carried * kSketchColumns; k < projection_.size(); ++k)
      projection_[k] = (random_() & 1u) != 0 ? sign : -sign;
    batch_iteration_ = 0;
    if (result_.local_rows > 0) local_start(carried);
    close_columns();
    if (open_.empty()) finish_window();
  }

  // One block step on the s training rows of highest covariance with the
  // batch (largest k*_ij over its rows j, the columns after the `carried`
  // first; s from the kernel's reach, below), for every open column:
  // Δ_S = −K̄_SS⁻¹ G_S (for the batch's own, U_S = K̄_SS⁻¹ K(X_S, Z)), G += K̄[:, S] Δ_S.
  // The solve is exact on the rows that matter most to the batch, and what
  // it leaves of G lies far from it and is smooth (low_rank_error_bound.h).
  void local_start(std::size_t carried) {
    const std::size_t most = result_.local_rows, r = open_.size(), d = training_.rows().columns();
    std::vector<double> closeness(n());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n(), 1024), [&](const tbb::blocked_range<std::size_t>& rows) {
      for (std::size_t i = rows.begin(); i < rows.end(); ++i) {
        closeness[i] = -*std::min_element(gradient_.begin() + static_cast<std::ptrdiff_t>(i * r + carried),
                                          gradient_.begin() + static_cast<std::ptrdiff_t>((i + 1) * r));
      }
    });
    // The rows within reach: covariance with some row of the batch at least half the prior variance (a
    // kernel of short reach, bcef's, has few; heaton_sim's, about 50 grid cells, more than the most).
    const double prior = *std::max_element(prior_.begin(), prior_.end());
    const std::size_t within_reach = static_cast<std::size_t>(std::count_if(
        closeness.begin(), closeness.end(), [&](double value) { return value >= kReachFraction * prior; }));
    const std::size_t s = std::clamp(within_reach, std::min(options_.active_set_size, most), most);
    std::vector<std::size_t> local(n());
    std::iota(local.begin(), local.end(), std::size_t{0});
    std::nth_element(local.begin(), local.begin() + static_cast<std::ptrdiff_t>(s), local.end(),
                     [&](std::size_t a, std::size_t b) {
                       return closeness[a] > closeness[b] || (closeness[a] == closeness[b] && a < b);
                     });
    local.resize(s);
    std::sort(local.begin(), local.end());
    std::vector<double> x(s * d), factor(s * s);
    training_.rows().gather_rows(local, x.data(), nullptr);
    training_.block(x.data(), s, x.data(), s, factor.data());
    training_.count_kernel_evaluations(s * s);
    for (std::size_t k = 0; k < s; ++k) factor[k * s + k] += training_.kernel().noise_variance();
    cholesky_factor(factor.data(), s, "K̄ on a variance batch's local training rows");
    gradient_on_b_.resize(s * r);
    for (std::size_t k = 0; k < s; ++k) std::copy_n(gradient_.data() + local[k] * r, r, gradient_on_b_.data() + k * r);
    delta_.resize(s * r);
    std::transform(gradient_on_b_.begin(), gradient_on_b_.end(), delta_.begin(), [](double g) { return -g; });
    cholesky_solve(factor.data(), s, delta_.data(), r);
    add_to_objective(s, gradient_on_b_, delta_);
    training_.multiply_columns(local, x.data(), delta_.data(), r, gradient_.data(), true);
  }

  // f_j += ½ Σ_i (G_B)_ij Δ_ij over the m rows of a block step.
  void add_to_objective(std::size_t m, const std::vector<double>& gradient_on_b, const std::vector<double>& delta) {
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < open_.size(); ++j) {
        objective_[open_[j]] += 0.5 * gradient_on_b[i * open_.size() + j] * delta[i * open_.size() + j];
      }
    }
  }

  // The relative error bound of window position j whose error gᵀK̄⁻¹g is at most
  // `error`: b / (V̂ − b) (the header); infinite while V̂ ≤ b.
  double relative_bound(std::size_t j, double error) const {
    const double noise = training_.kernel().noise_variance();
    const double written = prior_[j] + 2.0 * objective_[j] + (options_.noisy ? noise : 0.0);
    if (error == 0.0) return 0.0;
    return written > error ? error / (written - error) : std::numeric_limits<double>::infinity();
  }

  // Closes the columns whose bound meets the tolerance (or all, at the
  // iteration limit). The Nyström bound is computed for the columns the plain
  // ‖g‖²/σ² leaves open, while it pays (kCertificatePaysFraction).
  void close_columns() {
    const std::size_t r = open_.size();
    const auto at_limit = [&](std::size_t position) {
      return result_.iterations - first_step_[position] >= options_.max_iterations;
    };
    const bool any_at_limit = std::any_of(open_.begin(), open_.end(), at_limit);
    std::vector<double> squared_norms = column_squared_norms(gradient_, n(), r);
    training_.context().communicator().sum(squared_norms);  // over every rank's rows of G
    std::vector<double> errors(r);
    std::size_t left_open = 0;
    for (std::size_t j = 0; j < r; ++j) {
      errors[j] = squared_norms[j] / training_.kernel().noise_variance();
      left_open += relative_bound(open_[j], errors[j]) > options_.tolerance;
    }
    bool& pays = batch_iteration_ == 0 ? certificate_pays_after_start_ : certificate_pays_after_step_;
    if (left_open > 0 && certificate_ && !certificate_->empty() && (pays || any_at_limit)) {
      errors = certificate_->bound(gradient_.data(), r, squared_norms);
      ++result_.certificate_checks;
      std::size_t still_open = 0;
      for (std::size_t j = 0; j < r; ++j) still_open += relative_bound(open_[j], errors[j]) > options_.tolerance;
      pays = static_cast<double>(left_open - still_open) >= kCertificatePaysFraction * static_cast<double>(left_open);
    }
    std::vector<std::size_t> keep_positions, still_open;
    open_bound_ = 0.0;
    for (std::size_t j = 0; j < r; ++j) {
      const double bound = relative_bound(open_[j], errors[j]);
      final_bound_[open_[j]] = bound;
      if (bound > options_.tolerance && !at_limit(open_[j])) {
        keep_positions.push_back(j);
        still_open.push_back(open_[j]);
        open_bound_ = std::max(open_bound_, bound);
      } else {
        if (bound > options_.tolerance) ++result_.unconverged_rows;
        ++rows_done_;
        write_row(open_[j]);
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

  // Writes the variance of window position j.
  void write_row(std::size_t j) {
    // K** − k*ᵀK̄⁻¹k*, with k*ᵀK̄⁻¹k* ≈ −2 f_j; never below 0, which rounding could otherwise give.
    result_.latent[window_order_[j]] = std::max(0.0, prior_[j] + 2.0 * objective_[j]);
    result_.largest_error_bound = std::max(result_.largest_error_bound, final_bound_[j]);
  }

  // Publishes the window once its rows are all done (none open, every batch begun).
  void finish_window() {
    if (tile_ + 1 < tile_starts_.size()) return;
    publish_batch(window_rows_, tile_);
    begin_window();
  }

  const VarianceOptions& options_;
  const bool local_start_;
  BlockCoordinateDescent descent_;
  std::mt19937_64 random_;
  AuxiliaryState auxiliary_;
  MemoryReservation local_memory_, carried_memory_;
  std::optional<LowRankErrorBound> certificate_;
  std::size_t rows_done_ = 0, window_rows_ = 0, tile_ = 0, most_carried_ = 0;
  std::uint64_t batch_iteration_ = 0;
  double open_bound_ = 0.0;
  bool certificate_pays_after_start_ = true, certificate_pays_after_step_ = true;
  std::vector<std::size_t> open_, window_order_, tile_starts_;
  std::vector<std::uint64_t> first_step_;  // result_.iterations when each window position's batch began
  // By window position: the prior variance, f_j and the last error bound.
  std::vector<double> prior_, objective_, final_bound_;
  std::vector<double> points_, gradient_, delta_, gradient_on_b_, projection_, sketched_;
};

}  // namespace

std::vector<std::size_t> nearest_test_rows(const KernelHyperparameters& kernel, const double* test_rows, std::size_t d,
                                           std::size_t first, std::size_t count, std::size_t how_many) {
  const std::vector<double> scales = input_scales(kernel, d);
  std::vector<double> distance(count, 0.0);
  for (std::size_t k = 0; k < count; ++k) {
    for (std::size_t c = 0; c < d; ++c) {
      const double difference = (test_rows[(first + k) * d + c] - test_rows[first * d + c]) / scales[c];
      distance[k] += difference * difference;
    }
  }
  std::vector<std::size_t> rows(count);
  std::iota(rows.begin(), rows.end(), first);
  how_many = std::min(how_many, count);
  std::nth_element(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(how_many), rows.end(),
                   [&](std::size_t a, std::size_t b) {
                     return distance[a - first] < distance[b - first] ||
                            (distance[a - first] == distance[b - first] && a < b);
                   });
  rows.resize(how_many);
  std::sort(rows.begin(), rows.end());
  return rows;
}

bool local_start_applies(KernelMatrix& training, const VarianceOptions& options, const double* test_rows,
                         std::size_t count) {
  const std::size_t n = training.size();
  if (options.local_rows == 0 || training.distributed() || training.kernel().noise_variance() <= 0.0 ||
      n <= 2 * options.local_rows || test_rows == nullptr || count == 0) {
    return false;
  }
  // A sum of terms (a field of several scales): its long-range term couples a test row with every training
  // row, where GBCD from zero makes slow progress; the local start takes the near rows at once and the
  // Nyström certificate the smooth rest (measured on multiscale's model: docs/variance.md).
  if (training.kernel().hyperparameters().term_count() > 1) return true;
  constexpr std::size_t kProbes = 16, kMinimumReach = 128;
  const std::size_t d = training.rows().columns(), probes = std::min(kProbes, count);
  std::vector<double> z(probes * d), covariance(checked_multiply(n, probes));
  for (std::size_t k = 0; k < probes; ++k) {
    std::copy_n(test_rows + k * count / probes * d, d, z.data() + k * d);
  }
  training.cross_covariance(z.data(), probes, covariance.data());
  std::vector<std::size_t> within_reach(probes, 0);
  for (std::size_t k = 0; k < probes; ++k) {
    const double prior = training.kernel().self_covariance(z.data() + k * d);
    for (std::size_t i = 0; i < n; ++i) within_reach[k] += covariance[i * probes + k] >= kReachFraction * prior;
  }
  std::nth_element(within_reach.begin(), within_reach.begin() + static_cast<std::ptrdiff_t>(probes / 2),
                   within_reach.end());
  return within_reach[probes / 2] >= kMinimumReach;
}

std::unique_ptr<IterativeMethod> make_gbcd_variances(KernelMatrix& training, const double* test_rows,
                                                     BatchCursor cursor, const VarianceOptions& options,
                                                     bool local_start, VariancePrediction& result,
                                                     const VarianceBatchSink& sink) {
  return std::make_unique<GbcdVariances>(training, test_rows, cursor, options, local_start, result, sink);
}

}  // namespace gpstream::variance_routes

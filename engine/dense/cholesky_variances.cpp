// The cholesky route of the dense model's variances (dense_variance.h): K̄
// factorised panel by panel, then k*ᵀK̄⁻¹k* = ‖L⁻¹k*‖² per batch of test rows.
#include "engine/core/blas_threads.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"
#include "engine/dense/variance_routes.h"
#include "engine/solvers/cholesky_solver.h"

#include <cblas.h>
#include <fmt/format.h>
#include <lapacke.h>

namespace gpstream::variance_routes {
namespace {

// Columns of K̄ per panel of the cholesky route's factorisation: one panel's
// trailing update is n²·256 flops (4 s at n = 30,000 on 2 cores), how long a
// stop request can wait.
constexpr std::size_t kPanelColumns = 256;

// The cholesky route: K̄ = LLᵀ one panel per iteration, then one batch of
// test rows per iteration, k*ᵀK̄⁻¹k* = ‖L⁻¹k*‖². Work is counted in Mflop.
class CholeskyVariances final : public VarianceRoute {
 public:
  CholeskyVariances(KernelMatrix& training, const double* test_rows, BatchCursor cursor,
                    MemoryReservation factor_memory, VariancePrediction& result, const VarianceBatchSink& sink)
      : VarianceRoute(training, test_rows, cursor, result, sink), factor_memory_(std::move(factor_memory)) {
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
    publish_batch(r);
  }

  bool complete() const override { return factorisation_ && factorisation_->done() && cursor_.done(); }
  std::pair<std::uint64_t, std::uint64_t> work_done() const override {
    return {static_cast<std::uint64_t>(done_flops_ / 1e6), static_cast<std::uint64_t>(total_flops_ / 1e6)};
  }

 private:
  MemoryReservation factor_memory_;
  std::vector<double> factor_matrix_, batch_;
  std::unique_ptr<PanelCholesky> factorisation_;
  double done_flops_ = 0.0, total_flops_ = 0.0;
};

// The cholesky route with K̄'s factor on disk (a ScratchStore), for K̄ that
// does not fit in memory: left-looking by panels of w columns [c0, c1), each
// kept as its rows c0 … n−1 (the lower part, row-major): a panel is formed
// from the kernel, updated by every earlier panel read back (A −= L[c0:, q]
// L[c0:c1, q]ᵀ), factorised (dpotrf on its top block, dtrsm below) and
// written; then per batch of test rows W = L⁻¹K(X, Z) by one read of the
// factor, panel by panel (dtrsm, then the rows below −= L·W). Two panels
// and a batch are in memory; one panel per iteration, so that a stop request
// waits for one panel at most. The same flops as in memory, plus reading
// the factor (n²/2 doubles) once per panel pair of the factorisation (~the
// number of panels / 2 times in all) and once per batch.
class DiskCholeskyVariances final : public VarianceRoute {
 public:
  DiskCholeskyVariances(KernelMatrix& training, const double* test_rows, BatchCursor cursor, std::size_t panel_columns,
                        std::unique_ptr<ScratchStore> store, VariancePrediction& result, const VarianceBatchSink& sink)
      : VarianceRoute(training, test_rows, cursor, result, sink), store_(std::move(store)) {
    const std::size_t n = training.size();
    for (std::size_t c0 = 0; c0 < n; c0 += panel_columns) {
      const std::size_t w = std::min(panel_columns, n - c0);
      panels_.push_back({c0, w, stored_});
      stored_ += static_cast<std::uint64_t>(n - c0) * w;
    }
    const double order = static_cast<double>(n);
    total_flops_ = PanelCholesky::flops(n) + order * order * static_cast<double>(cursor.count - cursor.first);
  }

  // Doubles the factor's panels take on disk, for `panel_columns` wide panels.
  static std::uint64_t stored_doubles(std::size_t n, std::size_t panel_columns) {
    std::uint64_t doubles = 0;
    for (std::size_t c0 = 0; c0 < n; c0 += panel_columns) {
      doubles += static_cast<std::uint64_t>(n - c0) * std::min(panel_columns, n - c0);
    }
    return doubles;
  }

  void start() override {
    const std::size_t n = training_.size(), d = training_.rows().columns();
    x_.resize(checked_multiply(n, d));
    training_.rows().read_rows(0, n, x_.data(), nullptr);
  }

  void iterate() override {
    const ScopedBlasThreads all_cores = training_.context().parallel_blas();
    ++result_.iterations;
    if (factored_ < panels_.size()) {
      factor_panel(panels_[factored_++]);
      return;
    }
    solve_panel();
  }

  bool complete() const override { return factored_ == panels_.size() && cursor_.done(); }
  std::pair<std::uint64_t, std::uint64_t> work_done() const override {
    // The panels' counts differ from n³/3 + n²r by the triangles' rounding: never past the total.
    return {static_cast<std::uint64_t>(std::min(done_flops_, total_flops_) / 1e6),
            static_cast<std::uint64_t>(total_flops_ / 1e6)};
  }

 private:
  struct Panel {
    std::size_t first, width;
    std::uint64_t offset;  // in the store
  };

  void factor_panel(const Panel& panel) {
    const std::size_t n = training_.size(), d = training_.rows().columns();
    const std::size_t c0 = panel.first, w = panel.width, height = n - c0;
    panel_.resize(checked_multiply(height, w));
    training_.block(x_.data() + c0 * d, height, x_.data() + c0 * d, w, panel_.data());
    training_.count_kernel_evaluations(checked_multiply(height, w));
    for (std::size_t k = 0; k < w; ++k) panel_[k * w + k] += training_.kernel().noise_variance();
    for (const Panel& earlier : panels_) {
      if (earlier.first >= c0) break;
      // Rows c0 … n−1 of the earlier panel: the tail of its stored rows.
      other_.resize(checked_multiply(height, earlier.width));
      store_->read(earlier.offset + static_cast<std::uint64_t>(c0 - earlier.first) * earlier.width, other_);
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(height), static_cast<int>(w),
                  static_cast<int>(earlier.width), -1.0, other_.data(), static_cast<int>(earlier.width), other_.data(),
                  static_cast<int>(earlier.width), 1.0, panel_.data(), static_cast<int>(w));
      done_flops_ += 2.0 * static_cast<double>(height) * static_cast<double>(w) * static_cast<double>(earlier.width);
    }
    const lapack_int order = static_cast<lapack_int>(w);
    const lapack_int info = LAPACKE_dpotrf_work(LAPACK_ROW_MAJOR, 'L', order, panel_.data(), order);
    if (info != 0) {
      throw_not_positive_definite(
          "K̄ = K + σ²I", fmt::format("Cholesky failed at column {} of {}", c0 + static_cast<std::size_t>(info), n));
    }
    if (height > w) {
      cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, static_cast<int>(height - w),
                  static_cast<int>(w), 1.0, panel_.data(), static_cast<int>(w), panel_.data() + w * w,
                  static_cast<int>(w));
    }
    const double width = static_cast<double>(w);
    done_flops_ += width * width * width / 3.0 + static_cast<double>(height - w) * width * width;
    store_->write(panel.offset, panel_);
  }

  // One panel of the forward substitution of the batch at the cursor (W formed at its first panel).
  void solve_panel() {
    const std::size_t n = training_.size(), d = training_.rows().columns(), r = cursor_.rows();
    const double* z = test_rows_ + cursor_.first * d;
    if (solved_ == 0) {
      batch_.resize(checked_multiply(n, r));
      training_.cross_covariance(z, r, batch_.data());
    }
    const Panel& panel = panels_[solved_++];
    const std::size_t c0 = panel.first, w = panel.width, height = n - c0;
    panel_.resize(checked_multiply(height, w));
    store_->read(panel.offset, panel_);
    cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, static_cast<int>(w),
                static_cast<int>(r), 1.0, panel_.data(), static_cast<int>(w), batch_.data() + c0 * r,
                static_cast<int>(r));
    if (height > w) {
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(height - w), static_cast<int>(r),
                  static_cast<int>(w), -1.0, panel_.data() + w * w, static_cast<int>(w), batch_.data() + c0 * r,
                  static_cast<int>(r), 1.0, batch_.data() + (c0 + w) * r, static_cast<int>(r));
    }
    done_flops_ += static_cast<double>(w) * static_cast<double>(w) * static_cast<double>(r) +
                   2.0 * static_cast<double>(height - w) * static_cast<double>(w) * static_cast<double>(r);
    if (solved_ < panels_.size()) return;
    // W = L⁻¹K(X, Z): v_j = K** − ‖w_j‖².
    const std::vector<double> quadratic = column_squared_norms(batch_, n, r);
    for (std::size_t j = 0; j < r; ++j) {
      result_.latent[cursor_.first + j] = std::max(0.0, training_.kernel().self_covariance(z + j * d) - quadratic[j]);
    }
    publish_batch(r);
    solved_ = 0;
  }

  std::unique_ptr<ScratchStore> store_;
  std::vector<Panel> panels_;
  std::uint64_t stored_ = 0;
  std::size_t factored_ = 0, solved_ = 0;
  std::vector<double> x_, panel_, other_, batch_;
  double done_flops_ = 0.0, total_flops_ = 0.0;
};

}  // namespace

std::uint64_t factor_store_doubles(std::size_t n, std::size_t panel_columns) {
  return DiskCholeskyVariances::stored_doubles(n, panel_columns);
}

std::unique_ptr<IterativeMethod> make_disk_cholesky_variances(KernelMatrix& training, const double* test_rows,
                                                              BatchCursor cursor, std::size_t panel_columns,
                                                              std::unique_ptr<ScratchStore> store,
                                                              VariancePrediction& result,
                                                              const VarianceBatchSink& sink) {
  return std::make_unique<DiskCholeskyVariances>(training, test_rows, cursor, panel_columns, std::move(store), result,
                                                 sink);
}

std::unique_ptr<IterativeMethod> make_cholesky_variances(KernelMatrix& training, const double* test_rows,
                                                         BatchCursor cursor, MemoryReservation factor_memory,
                                                         VariancePrediction& result, const VarianceBatchSink& sink) {
  return std::make_unique<CholeskyVariances>(training, test_rows, cursor, std::move(factor_memory), result, sink);
}

}  // namespace gpstream::variance_routes

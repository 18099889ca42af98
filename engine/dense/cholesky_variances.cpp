// The cholesky route of the dense model's variances (dense_variance.h): K̄
// factorised panel by panel, then k*ᵀK̄⁻¹k* = ‖L⁻¹k*‖² per batch of test rows.
#include "engine/core/blas_threads.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"
#include "engine/dense/variance_routes.h"
#include "engine/solvers/cholesky_solver.h"

#include <cblas.h>

namespace gpstream::variance_routes {
namespace {

// Columns of K̄ per panel of the cholesky route's factorisation: one panel's
// trailing update is n²·256 flops (4 s at n = 30,000 on 2 cores), how long a
// stop request can wait.
constexpr std::size_t kPanelColumns = 256;

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

}  // namespace

std::unique_ptr<IterativeMethod> make_cholesky_variances(KernelMatrix& training, const double* test_rows,
                                                         BatchCursor cursor, MemoryReservation factor_memory,
                                                         VariancePrediction& result, const VarianceBatchSink& sink) {
  return std::make_unique<CholeskyVariances>(training, test_rows, cursor, std::move(factor_memory), result, sink);
}

}  // namespace gpstream::variance_routes

#include "engine/solvers/cholesky_solver.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/core/blas_threads.h"
#include "engine/linalg/cholesky.h"

#include <cblas.h>
#include <fmt/format.h>

namespace gpstream {

CholeskySolver::CholeskySolver(KernelMatrix& kernel)
    : kernel_(kernel),
      factor_memory_(kernel.context().memory().reserve(
          fmt::format("the cholesky solver's K̄ ({} x {} doubles)", kernel.size(), kernel.size()),
          checked_multiply(kernel.size(), kernel.size(), sizeof(double)),
          "solve by block coordinate descent (gbcd), which forms no n×n matrix")) {}

std::vector<double> dense_kernel_matrix(KernelMatrix& kernel) {
  const std::size_t n = kernel.size();
  const std::size_t d = kernel.rows().columns();
  std::vector<double> x(checked_multiply(n, d));
  kernel.rows().read_rows(0, n, x.data(), nullptr);
  std::vector<double> matrix(checked_multiply(n, n));
  // Column panels of K̄ as products with unit vectors would repeat work; a
  // block evaluation of the whole matrix is one GEMM plus one pass.
  kernel.block(x.data(), n, x.data(), n, matrix.data());
  for (std::size_t i = 0; i < n; ++i) matrix[i * n + i] += kernel.kernel().noise_variance();
  kernel.count_kernel_evaluations(checked_multiply(n, n));
  return matrix;
}

void CholeskySolver::iterate(SolverState& state, std::span<const double> y) {
  const std::size_t n = kernel_.size();
  std::vector<double> factor = dense_kernel_matrix(kernel_);
  const ScopedBlasThreads all_cores = kernel_.context().parallel_blas();  // nothing else runs during the factorisation
  cholesky_factor(factor.data(), n, "K̄ = K + σ²I");
  state.alpha.assign(y.begin(), y.end());
  cholesky_solve(factor.data(), n, state.alpha.data(), 1);
  // g = K̄α − y = L(Lᵀα) − y: the residual left by rounding.
  std::vector<double> product(state.alpha);
  cblas_dtrmv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, static_cast<int>(n), factor.data(),
              static_cast<int>(n), product.data(), 1);
  cblas_dtrmv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, static_cast<int>(n), factor.data(),
              static_cast<int>(n), product.data(), 1);
  for (std::size_t i = 0; i < n; ++i) state.gradient[i] = product[i] - y[i];
}

}  // namespace gpstream

#include "engine/sparse/sparse_fit.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"

#include <algorithm>
#include <cmath>

namespace gpstream {
namespace {

void check_basis(const KernelMatrix& kernel, std::size_t m) {
  GPSTREAM_CHECK(m > 0, "the basis is empty: give at least one basis row");
  GPSTREAM_CHECK(m <= kernel.size(), "a basis of {} rows is larger than the {} training rows", m, kernel.size());
}

// chol(K_B + jitter·s²·I), the factor of the projected-process variance.
std::vector<double> basis_kernel_factor(const KernelMatrix& kernel, const std::vector<double>& basis_rows, std::size_t m) {
  std::vector<double> factor(checked_multiply(m, m));
  kernel.block(basis_rows.data(), m, basis_rows.data(), m, factor.data());
  const double jitter = kBasisJitter * kernel.kernel().hyperparameters().signal_variance;
  for (std::size_t i = 0; i < m; ++i) factor[i * m + i] += jitter;
  cholesky_factor(factor.data(), m, "the basis kernel matrix K_B");
  return factor;
}

// The SR system A = σ²K_B + K_NBᵀK_NB, factorised, and b = K_NBᵀ y.
struct SubsetOfRegressorsSystem {
  std::vector<double> factor;  // chol(A), m×m
  std::vector<double> b;
};

SubsetOfRegressorsSystem subset_of_regressors_system(KernelMatrix& kernel, std::span<const double> y,
                                                     const std::vector<double>& basis_rows, std::size_t m) {
  GPSTREAM_CHECK(y.size() == kernel.size(), "{} targets for {} training rows", y.size(), kernel.size());
  CrossProducts products = kernel.cross_products(basis_rows.data(), m, basis_rows.data(), m, y.data(), 1);
  std::vector<double> k_b(checked_multiply(m, m));
  kernel.block(basis_rows.data(), m, basis_rows.data(), m, k_b.data());
  const double noise = kernel.kernel().noise_variance();
  std::vector<double>& a = products.pq;
  for (std::size_t k = 0; k < a.size(); ++k) a[k] += noise * k_b[k];
  cholesky_factor(a.data(), m, "the subset-of-regressors system sigma^2 K_B + K_NB^T K_NB");
  return {std::move(a), std::move(products.q_times_w)};
}

}  // namespace

std::vector<double> gather_basis_rows(KernelMatrix& kernel, std::span<const std::size_t> indices) {
  std::vector<double> rows(checked_multiply(indices.size(), kernel.rows().columns()));
  kernel.rows().gather_rows(indices, rows.data(), nullptr);
  return rows;
}

SparseModel fit_subset_of_data(KernelMatrix& kernel, std::span<const double> y, std::span<const std::size_t> subset) {
  const std::size_t m = subset.size();
  check_basis(kernel, m);
  SparseModel model;
  model.basis_indices.assign(subset.begin(), subset.end());
  model.basis_rows = gather_basis_rows(kernel, subset);
  std::vector<double>& factor = model.variance_factor;
  factor.resize(checked_multiply(m, m));
  kernel.block(model.basis_rows.data(), m, model.basis_rows.data(), m, factor.data());
  for (std::size_t i = 0; i < m; ++i) factor[i * m + i] += kernel.kernel().noise_variance();
  cholesky_factor(factor.data(), m, "the subset's K + sigma^2 I");
  model.weights.resize(m);
  for (std::size_t i = 0; i < m; ++i) model.weights[i] = y[subset[i]];
  cholesky_solve(factor.data(), m, model.weights.data(), 1);
  model.variance_form = SparseVarianceForm::exact_on_subset;
  return model;
}

SparseModel fit_subset_of_regressors(KernelMatrix& kernel, std::span<const double> y, std::vector<double> basis_rows) {
  const std::size_t d = kernel.rows().columns();
  GPSTREAM_CHECK(basis_rows.size() % d == 0, "{} basis values are not rows of {} inputs", basis_rows.size(), d);
  const std::size_t m = basis_rows.size() / d;
  GPSTREAM_CHECK(m > 0, "the basis is empty: give at least one basis row");
  SubsetOfRegressorsSystem system = subset_of_regressors_system(kernel, y, basis_rows, m);
  SparseModel model;
  model.weights = system.b;
  cholesky_solve(system.factor.data(), m, model.weights.data(), 1);
  model.variance_form = SparseVarianceForm::projected_process;
  model.variance_factor = std::move(system.factor);
  model.basis_factor = basis_kernel_factor(kernel, basis_rows, m);
  model.basis_rows = std::move(basis_rows);
  return model;
}

SparseModel fit_reduced_rank(KernelMatrix& kernel, std::span<const double> y, std::span<const std::size_t> basis) {
  const std::size_t m = basis.size();
  check_basis(kernel, m);
  const std::size_t n = kernel.size();
  SparseModel model;
  model.basis_indices.assign(basis.begin(), basis.end());
  model.basis_rows = gather_basis_rows(kernel, basis);
  SubsetOfRegressorsSystem system = subset_of_regressors_system(kernel, y, model.basis_rows, m);
  // v = A⁻¹ K_NBᵀ y, then w = σ⁻²(y − K_NB v): K̄[:, B] v less the σ² v it adds on the basis rows.
  std::vector<double> v = system.b;
  cholesky_solve(system.factor.data(), m, v.data(), 1);
  std::vector<double> k_v(n);
  kernel.multiply_columns(basis, model.basis_rows.data(), v.data(), 1, k_v.data());
  const double noise = kernel.kernel().noise_variance();
  for (std::size_t j = 0; j < m; ++j) k_v[basis[j]] -= noise * v[j];
  model.training_weights.resize(n);
  double largest = 0.0, squares = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double w = (y[i] - k_v[i]) / noise;
    model.training_weights[i] = w;
    largest = std::max(largest, std::abs(w));
    squares += w * w;
  }
  model.diagnostics["max_abs_weight"] = largest;
  model.diagnostics["rms_weight"] = std::sqrt(squares / static_cast<double>(n));
  model.weights.assign(m, 0.0);  // the mean uses the training weights
  model.variance_form = SparseVarianceForm::reduced_rank;
  model.variance_factor = std::move(system.factor);
  model.rows = n;
  return model;
}

}  // namespace gpstream

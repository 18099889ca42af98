#include "engine/sparse/sparse_fit.h"
#include "engine/kernels/cross_products.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/row_source_utilities.h"
#include "engine/linalg/cholesky.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

namespace gpstream {
namespace {

void check_basis(const KernelMatrix& kernel, std::size_t m) {
  GPSTREAM_CHECK(m > 0, "the basis is empty: give at least one basis row");
  GPSTREAM_CHECK(m <= kernel.partition().global_rows, "a basis of {} rows is larger than the {} training rows", m,
                 kernel.partition().global_rows);
}

}  // namespace

std::vector<double> basis_kernel_factor(const KernelMatrix& kernel, const std::vector<double>& basis_rows,
                                        std::size_t m, double diagonal, const char* what) {
  std::vector<double> factor(checked_multiply(m, m));
  kernel.block(basis_rows.data(), m, basis_rows.data(), m, factor.data());
  for (std::size_t i = 0; i < m; ++i) factor[i * m + i] += diagonal;
  cholesky_factor(factor.data(), m, what);
  return factor;
}

SparseModel subset_of_regressors_on(KernelMatrix& kernel, std::span<const double> y, std::vector<double> basis_rows,
                                    std::span<const std::size_t> indices) {
  const std::size_t m = basis_rows.size() / kernel.kernel().dimension();
  GPSTREAM_CHECK(y.size() == kernel.size(), "{} targets for {} training rows", y.size(), kernel.size());
  SparseModel model;
  // L_K = chol(K_B + jitter·s²·I).
  model.basis_factor = basis_kernel_factor(
      kernel, basis_rows, m, basis_resolution(kernel.kernel().hyperparameters()).jitter, "the basis kernel matrix K_B");
  const double* l_k = model.basis_factor.data();
  CrossProducts whitened =
      cross_products(kernel, basis_rows.data(), m, basis_rows.data(), m, y.data(), 1, l_k, nullptr, indices);
  std::vector<double>& s = whitened.pq;  // ΦᵀΦ, then S = σ²I + ΦᵀΦ
  const double noise = kernel.kernel().noise_variance();
  for (std::size_t i = 0; i < m; ++i) s[i * m + i] += noise;
  cholesky_factor(s.data(), m, "the whitened subset-of-regressors system sigma^2 I + Phi^T Phi");
  std::vector<double>& beta = whitened.q_times_w;  // Φᵀy, then β = L_K⁻ᵀ S⁻¹ Φᵀy
  cholesky_solve(s.data(), m, beta.data(), 1);
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, static_cast<int>(m), l_k, static_cast<int>(m),
              beta.data(), 1);
  model.weights = std::move(beta);
  model.variance_factor = std::move(s);
  model.variance_form = SparseVarianceForm::projected_process;
  model.basis_rows = std::move(basis_rows);
  return model;
}

std::vector<double> gather_basis_rows(KernelMatrix& kernel, std::span<const std::size_t> indices) {
  std::vector<double> rows;
  kernel.exchange().collect_rows(indices, rows);
  return rows;
}

SparseModel fit_subset_of_data(KernelMatrix& kernel, std::span<const double> y, std::span<const std::size_t> subset) {
  const std::size_t m = subset.size();
  check_basis(kernel, m);
  SparseModel model;
  model.basis_indices.assign(subset.begin(), subset.end());
  model.basis_rows = gather_basis_rows(kernel, subset);
  model.variance_factor =
      basis_kernel_factor(kernel, model.basis_rows, m, kernel.kernel().noise_variance(), "the subset's K + sigma^2 I");
  model.weights = kernel.exchange().collect_values(subset, y);  // y_B, from the ranks that own them
  cholesky_solve(model.variance_factor.data(), m, model.weights.data(), 1);
  model.variance_form = SparseVarianceForm::exact_on_subset;
  return model;
}

std::vector<std::size_t> independent_rows(const Kernel& kernel, const std::vector<double>& rows) {
  const std::size_t d = kernel.dimension();
  const std::size_t m = rows.size() / d;
  std::vector<double> k(checked_multiply(m, m));
  PreparedRows prepared;
  kernel.prepare(rows.data(), m, prepared);
  kernel.evaluate(prepared, prepared, k.data());
  const double floor = basis_resolution(kernel.hyperparameters()).independence_floor;
  IncrementalCholesky factor(m);
  std::vector<std::size_t> kept;
  std::vector<double> column;
  for (std::size_t j = 0; j < m; ++j) {
    column.clear();
    for (const std::size_t i : kept) column.push_back(k[i * m + j]);
    if (factor.append(column.data(), k[j * m + j], floor)) kept.push_back(j);
  }
  return kept;
}

SparseModel fit_subset_of_regressors(KernelMatrix& kernel, std::span<const double> y, std::vector<double> basis_rows,
                                     std::span<const std::size_t> indices) {
  const std::size_t d = kernel.rows().columns();
  GPSTREAM_CHECK(basis_rows.size() % d == 0, "{} basis values are not rows of {} inputs", basis_rows.size(), d);
  const std::size_t given = basis_rows.size() / d;
  GPSTREAM_CHECK(given > 0, "the basis is empty: give at least one basis row");
  GPSTREAM_CHECK(indices.empty() || indices.size() == given, "{} indices for {} basis rows", indices.size(), given);
  GPSTREAM_CHECK(y.size() == kernel.size(), "{} targets for {} training rows", y.size(), kernel.size());
  const std::vector<std::size_t> kept = independent_rows(kernel.kernel(), basis_rows);
  std::vector<double> rows;
  std::vector<std::size_t> kept_indices;
  for (const std::size_t j : kept) {
    rows.insert(rows.end(), basis_rows.begin() + static_cast<std::ptrdiff_t>(j * d),
                basis_rows.begin() + static_cast<std::ptrdiff_t>((j + 1) * d));
    if (!indices.empty()) kept_indices.push_back(indices[j]);
  }
  const std::size_t m = kept.size();
  SparseModel model = subset_of_regressors_on(kernel, y, std::move(rows));
  model.basis_indices = std::move(kept_indices);
  model.diagnostics["dropped_basis_rows"] = static_cast<double>(given - m);
  return model;
}

SparseModel fit_reduced_rank(KernelMatrix& kernel, std::span<const double> y, std::span<const std::size_t> basis) {
  const std::size_t m = basis.size();
  check_basis(kernel, m);
  const std::size_t n = kernel.size();  // this rank's rows
  const RowPartition& own = kernel.partition();
  // The SR fit's β is v = A⁻¹ K_NBᵀ y; then w = σ⁻²(y − K_NB v): K̄[:, B] v less the σ² v it adds on the basis rows.
  SparseModel model = fit_subset_of_regressors(kernel, y, gather_basis_rows(kernel, basis), basis);
  const std::vector<double> v = model.weights;
  std::vector<double> k_v(n);
  const std::vector<std::size_t>& kept = model.basis_indices;
  kernel.multiply_columns(kept, model.basis_rows.data(), v.data(), 1, k_v.data());
  const double noise = kernel.kernel().noise_variance();
  for (std::size_t j = 0; j < kept.size(); ++j) {
    if (own.owns(kept[j])) k_v[own.local(kept[j])] -= noise * v[j];
  }
  std::vector<double> weights(n);
  double largest = 0.0, squares = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double w = (y[i] - k_v[i]) / noise;
    weights[i] = w;
    largest = std::max(largest, std::abs(w));
    squares += w * w;
  }
  // Distributed: every rank's rows of w, in row order, and the diagnostics over all of them.
  Communicator& ranks = kernel.context().communicator();
  model.training_weights = ranks.size() == 1 ? std::move(weights) : ranks.all_gather(weights);
  ranks.sum(std::span(&squares, 1));
  model.diagnostics["max_abs_weight"] = ranks.max(largest);
  model.diagnostics["rms_weight"] = std::sqrt(squares / static_cast<double>(own.global_rows));
  model.weights.assign(kept.size(), 0.0);  // the mean uses the training weights
  model.variance_form = SparseVarianceForm::reduced_rank;
  model.rows = own.global_rows;
  return model;
}

SparseModel fit_on_random_basis(const std::string& method, SubsetFit fit, KernelMatrix& kernel,
                                std::span<const double> y, std::size_t m, std::uint64_t seed) {
  const std::vector<std::size_t> subset = random_row_subset(kernel.partition().global_rows, m, seed);
  SparseModel model = fit(kernel, y, subset);
  model.method = method;
  model.prior.kernel = kernel.kernel().hyperparameters();
  return model;
}

}  // namespace gpstream

#include "engine/hyper/marginal_likelihood.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"

#include <lapacke.h>

#include <cmath>
#include <numbers>

namespace gpstream {

MarginalLikelihood Likelihood::evaluate_with_information(const KernelHyperparameters&, std::span<const double>) {
  GPSTREAM_THROW("this likelihood does not compute its Fisher information");
}

ExactLikelihood::ExactLikelihood(const double* x, std::span<const double> y, std::size_t d, MeanFunction mean)
    : x_(x), y_(y), d_(d), mean_(std::move(mean)) {
  GPSTREAM_CHECK(!y.empty(), "the marginal likelihood needs at least one row");
  mean_.coefficients.clear();
  const std::size_t p = mean_.basis_size();
  basis_.resize(checked_multiply(y.size(), p));
  for (std::size_t i = 0; i < y.size(); ++i) mean_.basis(x + i * d, basis_.data() + i * p);
}

MarginalLikelihood ExactLikelihood::evaluate(const KernelHyperparameters& hyperparameters,
                                             std::span<const double> beta) {
  const std::size_t n = y_.size(), d = d_, p = mean_.basis_size();
  GPSTREAM_CHECK(beta.size() == p, "{} mean coefficients for {} basis functions", beta.size(), p);
  const auto kernel = make_kernel(hyperparameters, d);
  PreparedRows rows;
  kernel->prepare(x_, n, rows);

  // r = y − Hβ; K̄ = K + σ²I = L Lᵀ; α = K̄⁻¹r; −log p = ½ rᵀα + Σ log L_ii + (n/2) log 2π.
  std::vector<double> residual(y_.begin(), y_.end());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < p; ++k) residual[i] -= basis_[i * p + k] * beta[k];
  const double noise = hyperparameters.noise_variance;
  std::vector<double> factor(checked_multiply(n, n));
  kernel->evaluate(rows, rows, factor.data());
  for (std::size_t i = 0; i < n; ++i) factor[i * n + i] += noise;
  cholesky_factor(factor.data(), n, "K̄ on the hyperparameter subset");
  std::vector<double> alpha = residual;
  cholesky_solve(factor.data(), n, alpha.data(), 1);
  MarginalLikelihood result;
  double log_determinant_half = 0.0;
  for (std::size_t i = 0; i < n; ++i) log_determinant_half += std::log(factor[i * n + i]);
  double fit = 0.0;
  for (std::size_t i = 0; i < n; ++i) fit += residual[i] * alpha[i];
  result.value = 0.5 * fit + log_determinant_half + 0.5 * static_cast<double>(n) * std::log(2.0 * std::numbers::pi);

  // The trace term needs K̄⁻¹ itself (every entry meets ∂K̄/∂θ), computed
  // from the factor by LAPACK dpotri — an inverse that is the quantity
  // wanted. Row-major lower = column-major upper, as in cholesky.cpp.
  const lapack_int info =
      LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(n), factor.data(), static_cast<lapack_int>(n));
  GPSTREAM_CHECK(info == 0, "LAPACK dpotri failed (info {})", info);
  // Q = ααᵀ − K̄⁻¹ in place, both triangles (dpotri filled the lower one in row-major terms).
  std::vector<double>& q = factor;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) q[i * n + j] = q[j * n + i] = alpha[i] * alpha[j] - q[i * n + j];

  const std::size_t parameters = kernel->parameter_count();
  result.gradient.assign(parameters + p, 0.0);
  kernel->add_parameter_gradient(rows.view(d), rows.view(d), q.data(), result.gradient.data());
  // ∂K̄/∂log σ² = σ² I.
  double trace = 0.0;
  for (std::size_t i = 0; i < n; ++i) trace += q[i * n + i];
  result.gradient[kernel->noise_index()] = noise * trace;
  for (std::size_t j = 0; j < parameters; ++j) result.gradient[j] *= -0.5;
  // ∂(½ rᵀK̄⁻¹r)/∂β = −Hᵀα.
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < p; ++k) result.gradient[parameters + k] -= basis_[i * p + k] * alpha[i];
  return result;
}

MarginalLikelihood negative_log_marginal_likelihood(const KernelHyperparameters& hyperparameters, const double* x,
                                                    std::span<const double> y, std::size_t d) {
  return ExactLikelihood(x, y, d).evaluate(hyperparameters, {});
}

}  // namespace gpstream

#include "engine/sparse/inducing_objective.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"
#include "engine/sparse/sparse_model.h"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gpstream {

std::string inducing_objective_name(InducingObjective objective) {
  return objective == InducingObjective::variational ? "var" : "mle";
}

InducingObjective parse_inducing_objective(const std::string& name) {
  if (name == "var") return InducingObjective::variational;
  if (name == "mle") return InducingObjective::likelihood;
  GPSTREAM_THROW(
      "unknown objective \"{}\" (choose var, the variational free energy, or mle, the projected-process "
      "likelihood)",
      name);
}

std::vector<double> inducing_kernel_factor(const Kernel& kernel, const PreparedRows& rows, const char* what) {
  const std::size_t m = rows.count;
  std::vector<double> factor(checked_multiply(m, m));
  kernel.evaluate(rows, rows, factor.data());
  // Exact when it can be; near-duplicate inducing rows get the jitter the other sparse models use.
  cholesky_factor_with_jitter(factor, m, basis_resolution(kernel.hyperparameters()).jitter, 1, what);
  return factor;
}

namespace {

// Φ = K_NI L_I⁻ᵀ (n×m), ΦᵀΦ (both triangles) and the factor L_S of S = σ²I + ΦᵀΦ = L_S L_Sᵀ.
struct ProjectedRows {
  std::vector<double> phi, gram, factor_s;
};

ProjectedRows project_onto_inducing(const Kernel& kernel, const PreparedRows& rows, const PreparedRows& inducing_rows,
                                    const std::vector<double>& factor_i, double noise) {
  const std::size_t n = rows.count, m = inducing_rows.count;
  const int ni = static_cast<int>(n), mi = static_cast<int>(m);
  ProjectedRows projected{
      std::vector<double>(checked_multiply(n, m)), std::vector<double>(checked_multiply(m, m), 0.0), {}};
  std::vector<double>& phi = projected.phi;
  kernel.evaluate(rows, inducing_rows, phi.data());
  cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, ni, mi, 1.0, factor_i.data(), mi,
              phi.data(), mi);
  std::vector<double>& gram = projected.gram;  // ΦᵀΦ, lower triangle, then mirrored
  cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, mi, ni, 1.0, phi.data(), mi, 0.0, gram.data(), mi);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < i; ++j) gram[j * m + i] = gram[i * m + j];
  projected.factor_s = gram;
  for (std::size_t i = 0; i < m; ++i) projected.factor_s[i * m + i] += noise;
  cholesky_factor(projected.factor_s.data(), m, "S = sigma^2 I + Phi^T Phi");
  return projected;
}

}  // namespace

InducingObjectiveValue evaluate_inducing_objective(const KernelHyperparameters& hyperparameters, const double* x,
                                                   std::size_t n, std::size_t d, std::span<const double> y,
                                                   std::span<const std::size_t> inducing, InducingObjective objective,
                                                   bool with_gradient) {
  const std::size_t m = inducing.size();
  GPSTREAM_CHECK(m > 0 && m <= n, "the inducing set must hold 1 to {} rows, not {}", n, m);
  GPSTREAM_CHECK(y.size() == n, "{} targets for {} rows", y.size(), n);
  const auto kernel = make_kernel(hyperparameters, d);
  const double noise = hyperparameters.noise_variance;
  const double variational = objective == InducingObjective::variational ? 1.0 : 0.0;
  const int ni = static_cast<int>(n), mi = static_cast<int>(m);

  PreparedRows rows, inducing_rows;
  kernel->prepare(x, n, rows);
  std::vector<double> x_i(checked_multiply(m, d));
  for (std::size_t k = 0; k < m; ++k) {
    GPSTREAM_CHECK(inducing[k] < n, "inducing row {} is beyond the {} training rows", inducing[k], n);
    std::copy_n(x + inducing[k] * d, d, &x_i[k * d]);
  }
  kernel->prepare(x_i.data(), m, inducing_rows);
  const std::vector<double> factor_i = inducing_kernel_factor(*kernel, inducing_rows, "K_I, the inducing rows' kernel");

  const ProjectedRows projected = project_onto_inducing(*kernel, rows, inducing_rows, factor_i, noise);
  const std::vector<double>&phi = projected.phi, &gram = projected.gram, &factor_s = projected.factor_s;

  std::vector<double> z(m);  // L_S⁻¹ Φᵀy
  cblas_dgemv(CblasRowMajor, CblasTrans, ni, mi, 1.0, phi.data(), mi, y.data(), 1, 0.0, z.data(), 1);
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, mi, factor_s.data(), mi, z.data(), 1);
  double squared_norm_y = 0.0, squared_norm_z = 0.0, log_determinant_s = 0.0, trace_k = 0.0, squared_norm_phi = 0.0;
  for (const double value : y) squared_norm_y += value * value;
  for (const double value : z) squared_norm_z += value * value;
  for (std::size_t i = 0; i < m; ++i) log_determinant_s += 2.0 * std::log(factor_s[i * m + i]);
  for (std::size_t i = 0; i < n; ++i) trace_k += kernel->self_covariance(x + i * d);
  for (const double value : phi) squared_norm_phi += value * value;
  const double trace_residual = trace_k - squared_norm_phi;
  const double data_term = (squared_norm_y - squared_norm_z) / noise;
  const double complexity_term = static_cast<double>(n - m) * std::log(noise) + log_determinant_s;
  InducingObjectiveValue result;
  result.value = 0.5 * (data_term + complexity_term + variational * trace_residual / noise) +
                 0.5 * static_cast<double>(n) * std::log(2.0 * std::numbers::pi);
  if (!with_gradient) return result;

  // α = σ⁻²(y − Φ S⁻¹ Φᵀy), a = Φᵀα.
  std::vector<double> beta = z;
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, mi, factor_s.data(), mi, beta.data(), 1);
  std::vector<double> alpha(y.begin(), y.end());
  cblas_dgemv(CblasRowMajor, CblasNoTrans, ni, mi, -1.0, phi.data(), mi, beta.data(), 1, 1.0, alpha.data(), 1);
  double squared_norm_alpha = 0.0;
  for (double& value : alpha) {
    value /= noise;
    squared_norm_alpha += value * value;
  }
  std::vector<double> a(m);
  cblas_dgemv(CblasRowMajor, CblasTrans, ni, mi, 1.0, phi.data(), mi, alpha.data(), 1, 0.0, a.data(), 1);
  // S⁻¹ itself is the weight the trace terms need (LAPACK dpotri from the
  // factor; row-major lower = column-major upper).
  std::vector<double> s_inverse = factor_s;
  const lapack_int info = LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'U', mi, s_inverse.data(), mi);
  GPSTREAM_CHECK(info == 0, "LAPACK dpotri failed (info {})", info);
  double trace_s_inverse = 0.0;
  for (std::size_t i = 0; i < m; ++i) {
    trace_s_inverse += s_inverse[i * m + i];
    for (std::size_t j = 0; j < i; ++j) s_inverse[j * m + i] = s_inverse[i * m + j];
  }

  // W_NI = [Φ(S⁻¹ − vσ⁻²I) − α aᵀ] L_I⁻¹ (overwrites Φ's copy).
  std::vector<double> middle = s_inverse;
  for (std::size_t i = 0; i < m; ++i) middle[i * m + i] -= variational / noise;
  std::vector<double> weights_ni(checked_multiply(n, m));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, mi, mi, 1.0, phi.data(), mi, middle.data(), mi, 0.0,
              weights_ni.data(), mi);
  cblas_dger(CblasRowMajor, ni, mi, -1.0, alpha.data(), 1, a.data(), 1, weights_ni.data(), mi);
  cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, ni, mi, 1.0, factor_i.data(), mi,
              weights_ni.data(), mi);
  // W_I = −½ L_I⁻ᵀ H L_I⁻¹, H = I − σ²S⁻¹ − aaᵀ − vσ⁻²ΦᵀΦ.
  std::vector<double> weights_i(checked_multiply(m, m));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < m; ++j)
      weights_i[i * m + j] = -0.5 * ((i == j ? 1.0 : 0.0) - noise * s_inverse[i * m + j] - a[i] * a[j] -
                                     variational * gram[i * m + j] / noise);
  cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, mi, mi, 1.0, factor_i.data(), mi,
              weights_i.data(), mi);
  cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, mi, mi, 1.0, factor_i.data(), mi,
              weights_i.data(), mi);

  const std::size_t noise_index = kernel->noise_index();
  result.gradient.assign(kernel->parameter_count(), 0.0);
  kernel->add_parameter_gradient(rows.view(d), inducing_rows.view(d), weights_ni.data(), result.gradient.data());
  kernel->add_parameter_gradient(inducing_rows.view(d), inducing_rows.view(d), weights_i.data(),
                                 result.gradient.data());
  result.gradient[kernel->signal_index()] += 0.5 * variational * trace_k / noise;  // ∂k_ii/∂log s² = k_ii
  const double noise_derivative = 0.5 * (static_cast<double>(n - m) / noise + trace_s_inverse - squared_norm_alpha -
                                         variational * trace_residual / (noise * noise));
  result.gradient[noise_index] = noise * noise_derivative;
  return result;
}

}  // namespace gpstream

#include "engine/sparse/sparse_prediction.h"
#include "engine/kernels/cross_products.h"

#include "engine/core/work_progress.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/sparse/sparse_fit.h"

#include <cblas.h>
#include <tbb/parallel_for.h>

#include <algorithm>

namespace gpstream {
namespace {

// K = L⁻¹ K in place (m×t, row-major), and out[j] = Σ_i K[i, j]² afterwards.
void squared_column_norms_after_solve(const std::vector<double>& factor, std::size_t m, double* k, std::size_t t,
                                      double* out) {
  cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, static_cast<int>(m),
              static_cast<int>(t), 1.0, factor.data(), static_cast<int>(m), k, static_cast<int>(t));
  std::fill(out, out + t, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < t; ++j) out[j] += k[i * t + j] * k[i * t + j];
  }
}

// Test rows [first, first + t): mean and latent variance from the basis alone.
void predict_from_basis(const SparseModel& model, const Kernel& kernel, const PreparedRows& basis, const double* test,
                        std::size_t t, bool with_variance, double* mean, double* latent) {
  const std::size_t m = model.basis_size();
  PreparedRows prepared;
  kernel.prepare(test, t, prepared);
  std::vector<double> k_bz(m * t);  // K(B, Z), m×t
  kernel.evaluate(basis, prepared, k_bz.data());
  cblas_dgemv(CblasRowMajor, CblasTrans, static_cast<int>(m), static_cast<int>(t), 1.0, k_bz.data(),
              static_cast<int>(t), model.weights.data(), 1, 0.0, mean, 1);
  if (!with_variance) return;
  const std::size_t d = model.columns;
  for (std::size_t j = 0; j < t; ++j) latent[j] = kernel.self_covariance(test + j * d);
  std::vector<double> norms(t);
  if (model.variance_form == SparseVarianceForm::exact_on_subset) {
    squared_column_norms_after_solve(model.variance_factor, m, k_bz.data(), t, norms.data());
    for (std::size_t j = 0; j < t; ++j) latent[j] -= norms[j];
  } else if (model.variance_form == SparseVarianceForm::online_posterior) {  // K** + k_Bᵀ C k_B
    std::vector<double> c_k(m * t);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(t),
                static_cast<int>(m), 1.0, model.variance_factor.data(), static_cast<int>(m), k_bz.data(),
                static_cast<int>(t), 0.0, c_k.data(), static_cast<int>(t));
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < t; ++j) latent[j] += k_bz[i * t + j] * c_k[i * t + j];
  } else {  // projected process: K** − ‖u‖² + σ²‖L_F⁻¹u‖², u = L_K⁻¹k_B
    squared_column_norms_after_solve(model.basis_factor, m, k_bz.data(), t, norms.data());
    for (std::size_t j = 0; j < t; ++j) latent[j] -= norms[j];
    squared_column_norms_after_solve(model.variance_factor, m, k_bz.data(), t, norms.data());
    const double noise = kernel.noise_variance();
    for (std::size_t j = 0; j < t; ++j) latent[j] += noise * norms[j];
  }
}

}  // namespace

SparsePrediction predict_sparse(const SparseModel& model, const Kernel& kernel, const double* test_rows,
                                std::size_t count, bool with_variance, KernelMatrix* training) {
  SparsePrediction prediction;
  prediction.mean.resize(count);
  if (with_variance) prediction.latent.resize(count);
  if (count == 0) return prediction;
  const std::size_t d = model.columns;
  GPSTREAM_CHECK(kernel.dimension() == d, "the kernel expects {} inputs but the model has {}", kernel.dimension(), d);
  const std::size_t m = model.basis_size();
  constexpr std::size_t kBatch = 256;

  if (model.variance_form == SparseVarianceForm::reduced_rank) {
    GPSTREAM_CHECK(training != nullptr && training->size() == model.rows,
                   "the reduced-rank model predicts from its {} training rows; they were not given", model.rows);
    const double noise = kernel.noise_variance();
    // One streamed pass per batch: K_BN k_N (m×t), ‖k_N‖² and k_Nᵀ w together.
    const std::size_t batch = std::max<std::size_t>(1, std::min<std::size_t>(1024, count));
    for (std::size_t first = 0; first < count; first += batch) {
      const std::size_t t = std::min(batch, count - first);
      const double* z = test_rows + first * d;
      CrossProducts products = cross_products(*training, model.basis_rows.data(), m, z, t, model.training_weights.data(),
                                                        1, model.basis_factor.data());
      std::copy_n(products.q_times_w.data(), t, prediction.mean.begin() + static_cast<std::ptrdiff_t>(first));
      if (!with_variance) continue;
      // (K_BN k_N)ᵀ A⁻¹ (K_BN k_N) = ‖L_F⁻¹ Φᵀ k_N‖², Φᵀk_N = L_K⁻¹ K_BN k_N from the whitened pass.
      std::vector<double> norms(t);
      squared_column_norms_after_solve(model.variance_factor, m, products.pq.data(), t, norms.data());
      for (std::size_t j = 0; j < t; ++j) {
        const double quadratic = (products.q_squared_norms[j] - norms[j]) / noise;  // k*ᵀ(K̃ + σ²I)⁻¹k*
        prediction.latent[first + j] = kernel.self_covariance(z + j * d) - quadratic;
      }
    }
  } else {
    PreparedRows basis;
    kernel.prepare(model.basis_rows.data(), m, basis);
    const std::size_t batches = (count + kBatch - 1) / kBatch;
    tbb::parallel_for(std::size_t{0}, batches, [&](std::size_t b) {
      const std::size_t first = b * kBatch;
      const std::size_t t = std::min(kBatch, count - first);
      predict_from_basis(model, kernel, basis, test_rows + first * d, t, with_variance, prediction.mean.data() + first,
                         with_variance ? prediction.latent.data() + first : nullptr);
    });
  }
  for (double& latent : prediction.latent) {
    if (latent < 0.0) {
      latent = 0.0;
      ++prediction.negative_variances;
    }
  }

  return prediction;
}

SparsePrediction predict_transductive(KernelMatrix& training, std::span<const double> y, const double* test_rows,
                                      std::size_t count, std::size_t block_rows, bool with_variance) {
  GPSTREAM_CHECK(block_rows > 0, "the transductive basis needs at least 1 test row per block");
  const Kernel& kernel = training.kernel();
  const std::size_t d = kernel.dimension();
  SparsePrediction prediction;
  prediction.mean.resize(count);
  if (with_variance) prediction.latent.resize(count);
  WorkProgress progress(training.context(), count);
  for (std::size_t first = 0; first < count; first += block_rows) {
    progress.throw_if_stopped("SRM-Trans");
    if (first > 0) progress.advance(first);
    const std::size_t rows = std::min(block_rows, count - first);
    std::vector<double> block(test_rows + first * d, test_rows + (first + rows) * d);
    SparseModel model = fit_subset_of_regressors(training, y, block);
    model.columns = d;
    const SparsePrediction part =
        training.context().execute([&] { return predict_sparse(model, kernel, block.data(), rows, with_variance); });
    std::copy(part.mean.begin(), part.mean.end(), prediction.mean.begin() + static_cast<std::ptrdiff_t>(first));
    std::copy(part.latent.begin(), part.latent.end(), prediction.latent.begin() + static_cast<std::ptrdiff_t>(first));
    prediction.negative_variances += part.negative_variances;
  }
  return prediction;
}

}  // namespace gpstream

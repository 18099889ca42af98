#include "engine/sparse/committee_machine.h"

#include "engine/core/work_progress.h"
#include "engine/data/k_means.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/core/blas_threads.h"
#include "engine/linalg/cholesky.h"
#include "engine/sparse/sparse_model.h"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>

namespace gpstream {
namespace {

// M⁻¹ (q×q, row-major, full) from its Cholesky factor (LAPACK dpotri): the
// precisions are what the committee sums, so the inverse is the quantity wanted.
void inverse_from_factor(std::vector<double>& factor, std::size_t q) {
  const lapack_int info =
      LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(q), factor.data(), static_cast<lapack_int>(q));
  GPSTREAM_CHECK(info == 0, "LAPACK dpotri failed (info {})", info);
  for (std::size_t i = 0; i < q; ++i)
    for (std::size_t j = 0; j < i; ++j) factor[j * q + i] = factor[i * q + j];
}

// Module i's terms for a block of q test rows: K_i* (size×q), E_i = K_*i α_i, V = L_i⁻¹ K_i*, C_i = K_** − VᵀV
// (`covariance` holds K_** + jitter·I); adds C_i⁻¹ to `precision_sum` and C_i⁻¹E_i to `weighted_sum`. True
// where C_i needed more jitter than K_**.
bool add_module_terms(const Kernel& kernel, const PreparedRows& module_rows, const std::vector<double>& factor,
                      const std::vector<double>& alpha, const PreparedView& test_block, std::vector<double> covariance,
                      double jitter, std::vector<double>& precision_sum, std::vector<double>& weighted_sum) {
  const std::size_t size = alpha.size(), q = weighted_sum.size(), d = kernel.dimension();
  const int si = static_cast<int>(size), qi = static_cast<int>(q);
  std::vector<double> v(checked_multiply(size, q));
  kernel.evaluate(module_rows.view(d), test_block, v.data());
  std::vector<double> mean(q);
  cblas_dgemv(CblasRowMajor, CblasTrans, si, qi, 1.0, v.data(), qi, alpha.data(), 1, 0.0, mean.data(), 1);
  cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, si, qi, 1.0, factor.data(), si,
              v.data(), qi);
  cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, qi, si, -1.0, v.data(), qi, 1.0, covariance.data(), qi);
  const bool more_jitter =
      cholesky_factor_with_jitter(covariance, q, 100.0 * jitter, 4, "a BCM module's posterior covariance C_i") > 0;
  std::vector<double> solved = mean;  // C_i⁻¹ E_i
  cholesky_solve(covariance.data(), q, solved.data(), 1);
  inverse_from_factor(covariance, q);
  for (std::size_t k = 0; k < q * q; ++k) precision_sum[k] += covariance[k];
  for (std::size_t k = 0; k < q; ++k) weighted_sum[k] += solved[k];
  return more_jitter;
}

// A test block's mean and latent variances from its modules' sums: C⁻¹ = Σ C_i⁻¹ − (M − 1) K_**⁻¹ (`prior`,
// K_** + jitter·I, where M > 1), E = C Σ C_i⁻¹E_i. Without `latent`, the mean only; a variance below 0 is
// counted and written as 0.
void combine_block(std::vector<double>& precision, std::vector<double> mean, std::vector<double> prior, double others,
                   double jitter, double* mean_out, double* latent, std::size_t& negative_variances) {
  const std::size_t q = mean.size();
  if (others > 0.0) {
    cholesky_factor(prior.data(), q, "the test block's prior K_**");
    inverse_from_factor(prior, q);
    for (std::size_t k = 0; k < q * q; ++k) precision[k] -= others * prior[k];
  }
  cholesky_factor(precision.data(), q,
                  "the committee's precision sum_i C_i^-1 - (M - 1) K_**^-1 (try larger modules or query blocks)");
  cholesky_solve(precision.data(), q, mean.data(), 1);
  std::copy(mean.begin(), mean.end(), mean_out);
  if (latent == nullptr) return;
  inverse_from_factor(precision, q);
  for (std::size_t j = 0; j < q; ++j) {
    latent[j] = precision[j * q + j] - jitter;
    if (latent[j] < 0.0) {
      latent[j] = 0.0;
      ++negative_variances;
    }
  }
}

}  // namespace

CommitteePrediction predict_committee(KernelMatrix& training, std::span<const double> y,
                                      const std::vector<std::vector<std::size_t>>& modules, const double* test_rows,
                                      std::size_t count, std::size_t block_rows, bool with_variance) {
  GPSTREAM_CHECK(!modules.empty(), "the committee needs at least one module");
  GPSTREAM_CHECK(block_rows > 0, "the committee needs at least 1 test row per query block");
  GPSTREAM_CHECK(y.size() == training.size(), "{} targets for {} training rows", y.size(), training.size());
  const ScopedBlasThreads all_cores =
      training.context().parallel_blas();  // one BLAS-3 call at a time, nothing else running
  const Kernel& kernel = training.kernel();
  const std::size_t d = kernel.dimension();
  const double noise = kernel.noise_variance();
  const double jitter = basis_resolution(kernel.hyperparameters()).jitter;
  CommitteePrediction prediction;
  prediction.modules = modules.size();
  prediction.mean.assign(count, 0.0);
  if (with_variance) prediction.latent.assign(count, 0.0);
  if (count == 0) return prediction;

  PreparedRows test;
  kernel.prepare(test_rows, count, test);
  const std::size_t blocks = (count + block_rows - 1) / block_rows;
  auto block_size = [&](std::size_t b) { return std::min(block_rows, count - b * block_rows); };
  // K_** + jitter·I of a block.
  auto prior = [&](std::size_t b) {
    const std::size_t q = block_size(b);
    std::vector<double> k(q * q);
    const PreparedView view = test.view(d, b * block_rows, q);
    kernel.evaluate(view, view, k.data());
    for (std::size_t i = 0; i < q; ++i) k[i * q + i] += jitter;
    return k;
  };
  std::vector<std::vector<double>> precision_sums(blocks), weighted_sums(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    precision_sums[b].assign(block_size(b) * block_size(b), 0.0);
    weighted_sums[b].assign(block_size(b), 0.0);
  }

  // Distributed: module i is rank i mod P's; every rank takes part in collecting each module's rows.
  Communicator& ranks = training.context().communicator();
  WorkProgress progress(training.context(), modules.size());
  for (std::size_t module = 0; module < modules.size(); ++module) {
    progress.throw_if_stopped("the committee machine");
    if (module > 0) progress.advance(module);
    const std::vector<std::size_t>& rows = modules[module];
    const std::size_t size = rows.size();
    GPSTREAM_CHECK(size > 0, "module {} is empty", module);
    // The module's exact GP: K̄_i = L_i L_iᵀ, α_i = K̄_i⁻¹ y_i.
    std::vector<double> x;
    training.exchange().collect_rows(rows, x);
    std::vector<double> alpha = training.exchange().collect_values(rows, y);
    if (module % ranks.size() != ranks.rank()) continue;
    PreparedRows prepared;
    kernel.prepare(x.data(), size, prepared);
    std::vector<double> factor(checked_multiply(size, size));
    kernel.evaluate(prepared, prepared, factor.data());
    for (std::size_t i = 0; i < size; ++i) factor[i * size + i] += noise;
    cholesky_factor(factor.data(), size, "a BCM module's K + sigma^2 I");
    cholesky_solve(factor.data(), size, alpha.data(), 1);
    training.count_kernel_evaluations(checked_multiply(size, size));

    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t q = block_size(b);
      if (add_module_terms(kernel, prepared, factor, alpha, test.view(d, b * block_rows, q), prior(b), jitter,
                           precision_sums[b], weighted_sums[b])) {
        ++prediction.extra_jitter;
      }
      training.count_kernel_evaluations(checked_multiply(size, q));
    }
  }

  // Every rank's modules' sums.
  for (std::size_t b = 0; b < blocks; ++b) {
    ranks.sum(precision_sums[b]);
    ranks.sum(weighted_sums[b]);
  }
  std::uint64_t extra_jitter = prediction.extra_jitter;
  ranks.sum(std::span(&extra_jitter, 1));
  prediction.extra_jitter = extra_jitter;
  // C⁻¹ = Σ C_i⁻¹ − (M − 1) K_**⁻¹; E = C Σ C_i⁻¹E_i.
  const double others = static_cast<double>(modules.size() - 1);
  for (std::size_t b = 0; b < blocks; ++b) {
    combine_block(precision_sums[b], weighted_sums[b], others > 0.0 ? prior(b) : std::vector<double>(), others, jitter,
                  prediction.mean.data() + b * block_rows,
                  with_variance ? prediction.latent.data() + b * block_rows : nullptr, prediction.negative_variances);
  }
  return prediction;
}

CommitteePrediction predict_by_committee(KernelMatrix& training, std::span<const double> y, const double* test_rows,
                                         std::size_t count, const CommitteeOptions& options, bool with_variance) {
  const std::size_t n = training.partition().global_rows;
  GPSTREAM_CHECK_ARGUMENT(options.modules > 0 || options.module_size > 0,
                          "the committee's module size must be at least 1");
  const std::size_t clusters =
      options.modules > 0 ? options.modules : (n + options.module_size - 1) / options.module_size;
  GPSTREAM_CHECK(clusters <= n, "{} committee modules are more than the {} training rows", clusters, n);
  const std::size_t target_size = (n + clusters - 1) / clusters;
  const std::size_t block = options.query_block > 0 ? options.query_block : target_size;
  const KMeansResult clustering =
      k_means(training.context(), training.rows(), training.partition(), {.clusters = clusters, .seed = options.seed});
  // Distributed: every rank's labels, in row order, so that every rank forms the same modules.
  std::vector<std::uint32_t> labels = clustering.labels;
  Communicator& ranks = training.context().communicator();
  if (ranks.size() > 1) {
    const std::vector<double> all = ranks.all_gather(std::vector<double>(labels.begin(), labels.end()));
    labels.resize(all.size());
    std::transform(all.begin(), all.end(), labels.begin(),
                   [](double label) { return static_cast<std::uint32_t>(label); });
  }
  const std::vector<std::vector<std::size_t>> modules = clusters_as_modules(labels, clusters, target_size);
  std::size_t smallest = n, largest = 0;
  for (const auto& module : modules)
    smallest = std::min(smallest, module.size()), largest = std::max(largest, module.size());
  // One module's factor and cross-covariances, the accumulated precisions of every query block.
  const MemoryReservation memory = training.context().memory().reserve(
      fmt::format("the committee machine (its largest module has {} rows, query blocks of {} over {} test rows)",
                  largest, block, count),
      sizeof(double) * checked_add(checked_add(checked_multiply(largest, largest), checked_multiply(largest, block)),
                                   checked_multiply(count + block, block)),
      "use smaller modules or query blocks");
  CommitteePrediction prediction = predict_committee(training, y, modules, test_rows, count, block, with_variance);
  prediction.smallest_module = smallest;
  prediction.largest_module = largest;
  prediction.query_block = block;
  return prediction;
}

}  // namespace gpstream

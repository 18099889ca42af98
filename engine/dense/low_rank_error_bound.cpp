// The Nyström certificate of the gbcd variance route (low_rank_error_bound.h).
#include "engine/dense/low_rank_error_bound.h"

#include "engine/core/blas_threads.h"
#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpstream {
namespace {

constexpr std::size_t kMinimumPoints = 64;

// γ_k = k·u / (1 − k·u), u the unit roundoff: the relative error bound of a sum of k products.
double gamma(std::size_t k) {
  const double ku = static_cast<double>(k) * std::numeric_limits<double>::epsilon() / 2.0;
  return ku / (1.0 - ku);
}

// out (r×b) = A (r×r) · B (r×b), row-major.
void square_times(const std::vector<double>& a, std::size_t r, const std::vector<double>& b, std::size_t columns,
                  std::vector<double>& out) {
  out.resize(r * columns);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(r), static_cast<int>(columns),
              static_cast<int>(r), 1.0, a.data(), static_cast<int>(r), b.data(), static_cast<int>(columns), 0.0,
              out.data(), static_cast<int>(columns));
}

}  // namespace

LowRankErrorBound::LowRankErrorBound(KernelMatrix& training, std::size_t points) : training_(training) {
  const std::size_t n = training.size();
  const double noise = training.kernel().noise_variance();
  if (training.distributed() || noise <= 0.0 || n < 2 * kMinimumPoints) return;
  const std::size_t wanted = std::min(points, n / 2);
  // K(X, Z) and four r×r matrices (C, |C|, its factor, the product forming it).
  memory_ = training.context().memory().reserve_up_to(
      "the Nyström certificate of the variances (n×r doubles)",
      checked_multiply(checked_add(checked_multiply(n, wanted), checked_multiply(4 * wanted, wanted)), sizeof(double)),
      4);
  const std::size_t r = std::min(wanted, memory_.bytes() / checked_multiply(n + 4 * wanted, sizeof(double)));
  if (r < kMinimumPoints) {
    memory_.release();
    return;
  }
  const std::size_t d = training.rows().columns();
  std::vector<std::size_t> indices(r);
  for (std::size_t k = 0; k < r; ++k) indices[k] = k * n / r;
  std::vector<double> z(r * d);
  training.rows().gather_rows(indices, z.data(), nullptr);
  cross_.resize(checked_multiply(n, r));
  training.cross_covariance(z.data(), r, cross_.data());
  system_.resize(r * r);
  training.block(z.data(), r, z.data(), r, system_.data());
  training.count_kernel_evaluations(checked_multiply(n, r) + r * r);

  // ε ≥ ‖E‖₂/σ² for the rounding E of K(Z, X)K(X, Z): |E| ≤ γ_n |K(Z, X)||K(X, Z)|, whose largest row sum
  // bounds its norm; and ‖|K(X, Z)|‖₂ ≤ √(‖·‖₁‖·‖∞) for the guard on h.
  std::vector<double> row_sums(n, 0.0), column_sums(r, 0.0), spread(r, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t a = 0; a < r; ++a) row_sums[i] += std::abs(cross_[i * r + a]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t a = 0; a < r; ++a) {
      column_sums[a] += std::abs(cross_[i * r + a]);
      spread[a] += std::abs(cross_[i * r + a]) * row_sums[i];
    }
  }
  const double largest_spread = *std::max_element(spread.begin(), spread.end());
  cross_norm_ = std::sqrt(*std::max_element(column_sums.begin(), column_sums.end()) *
                          *std::max_element(row_sums.begin(), row_sums.end()));
  const double jitter = 2.0 * gamma(n) * largest_spread / noise;

  // C = σ²(K_ZZ + εI) + K(Z, X)K(X, Z).
  std::vector<double> product(r * r);
  {
    const ScopedBlasThreads all_cores = training.context().parallel_blas();
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(r), static_cast<int>(r), static_cast<int>(n),
                1.0, cross_.data(), static_cast<int>(r), cross_.data(), static_cast<int>(r), 0.0, product.data(),
                static_cast<int>(r));
  }
  for (std::size_t a = 0; a < r; ++a) {
    for (std::size_t b = 0; b < r; ++b) {
      // Symmetric by construction, so that C = Cᵀ whichever triangle a routine reads.
      const double both = 0.5 * (product[a * r + b] + product[b * r + a]);
      system_[a * r + b] = noise * (system_[a * r + b] + (a == b ? jitter : 0.0)) + both;
    }
  }
  for (std::size_t a = 0; a < r; ++a) {
    for (std::size_t b = 0; b < a; ++b) system_[b * r + a] = system_[a * r + b];
  }
  absolute_.resize(r * r);
  std::transform(system_.begin(), system_.end(), absolute_.begin(), [](double value) { return std::abs(value); });
  factor_ = system_;
  try {
    cholesky_factor(factor_.data(), r, "the Nyström certificate's C");
  } catch (const Error&) {
    // C ⪰ σ²εI in exact arithmetic; should rounding defeat it, the plain bound serves.
    cross_.clear();
    memory_.release();
    return;
  }
  points_ = r;
}

std::vector<double> LowRankErrorBound::bound(const double* gradient, std::size_t columns,
                                             std::span<const double> squared_norms) const {
  const double noise = training_.kernel().noise_variance();
  std::vector<double> bounds(columns);
  for (std::size_t j = 0; j < columns; ++j) bounds[j] = squared_norms[j] / noise;
  if (empty() || columns == 0) return bounds;
  const std::size_t n = training_.size(), r = points_;
  std::vector<double> h(r * columns), w, cw, absolute_w(r * columns), absolute_cw;
  {
    // h = K(Z, X) G.
    const ScopedBlasThreads all_cores = training_.context().parallel_blas();
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(r), static_cast<int>(columns),
                static_cast<int>(n), 1.0, cross_.data(), static_cast<int>(r), gradient, static_cast<int>(columns), 0.0,
                h.data(), static_cast<int>(columns));
    w = h;
    cholesky_solve(factor_.data(), r, w.data(), columns);
    square_times(system_, r, w, columns, cw);
    std::transform(w.begin(), w.end(), absolute_w.begin(), [](double value) { return std::abs(value); });
    square_times(absolute_, r, absolute_w, columns, absolute_cw);
  }
  for (std::size_t j = 0; j < columns; ++j) {
    double q = 0.0, q_magnitude = 0.0, w_norm = 0.0;
    for (std::size_t a = 0; a < r; ++a) {
      const std::size_t k = a * columns + j;
      q += 2.0 * w[k] * h[k] - w[k] * cw[k];
      q_magnitude += 2.0 * std::abs(w[k] * h[k]) + absolute_w[k] * absolute_cw[k];
      w_norm += w[k] * w[k];
    }
    const double g2 = squared_norms[j];
    const double guard = gamma(n) * g2 + gamma(2 * r + 2) * q_magnitude +
                         2.0 * gamma(n) * cross_norm_ * std::sqrt(w_norm) * std::sqrt(g2);
    bounds[j] = std::min(bounds[j], std::max(0.0, g2 - q + guard) / noise);
  }
  return bounds;
}

}  // namespace gpstream

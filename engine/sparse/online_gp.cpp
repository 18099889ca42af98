#include "engine/sparse/online_gp.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/core/blas_threads.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace gpstream {
namespace {

double dot(const double* a, const double* b, std::size_t count) {
  double sum = 0.0;
  for (std::size_t i = 0; i < count; ++i) sum += a[i] * b[i];
  return sum;
}

// Swaps rows and columns i and j of the leading block of a stride×stride matrix.
void swap_symmetric(std::vector<double>& matrix, std::size_t stride, std::size_t size, std::size_t i, std::size_t j) {
  for (std::size_t k = 0; k < size; ++k) std::swap(matrix[i * stride + k], matrix[j * stride + k]);
  for (std::size_t k = 0; k < size; ++k) std::swap(matrix[k * stride + i], matrix[k * stride + j]);
}

std::vector<double> compact(const std::vector<double>& matrix, std::size_t stride, std::size_t m) {
  std::vector<double> out(m * m);
  for (std::size_t i = 0; i < m; ++i) std::copy_n(&matrix[i * stride], m, &out[i * m]);
  return out;
}

}  // namespace

OnlineGp::OnlineGp(KernelMatrix& kernel, std::span<const double> y, const OnlineGpOptions& options, SolverState& state)
    : matrix_(kernel),
      y_(y),
      options_(options),
      state_(state),
      n_(kernel.size()),
      d_(kernel.rows().columns()),
      noise_(kernel.kernel().noise_variance()),
      stride_(checked_add(options.basis_size, 1)) {
  GPSTREAM_CHECK_ARGUMENT(options.basis_size > 0, "the online GP needs a budget of at least 1 basis vector");
  GPSTREAM_CHECK_ARGUMENT(options.passes > 0, "the online GP needs at least one pass over the data");
  GPSTREAM_CHECK_ARGUMENT(options.rows_per_iteration > 0, "the online GP needs at least one row per iteration");
  GPSTREAM_CHECK(options.novelty >= 0.0 && std::isfinite(options.novelty),
                 "the novelty threshold must be a non-negative number, not {}", options.novelty);
  GPSTREAM_CHECK(y.size() == n_, "{} targets for {} training rows", y.size(), n_);
  c_.assign(checked_multiply(stride_, stride_), 0.0);
  q_.assign(checked_multiply(stride_, stride_), 0.0);
  basis_rows_.count = 0;

  if (state.auxiliary.find("basis") == state.auxiliary.end()) return;  // a fresh run
  constexpr const char* kOwner = "the online GP";
  auto get = [&](const char* name) -> const std::vector<double>& { return saved_entry(state, name, kOwner); };
  basis_ = saved_row_indices(state, "basis", n_, kOwner);
  const std::size_t m = basis_.size();
  GPSTREAM_CHECK(m <= options.basis_size, "checkpoint: {} basis vectors exceed the budget {}", m, options.basis_size);
  GPSTREAM_CHECK(get("a").size() == m && get("C").size() == m * m && get("Q").size() == m * m,
                 "checkpoint: the online GP's a, C and Q do not fit {} basis vectors", m);
  a_ = get("a");
  for (std::size_t i = 0; i < m; ++i) {
    std::copy_n(&get("C")[i * m], m, &c_[i * stride_]);
    std::copy_n(&get("Q")[i * m], m, &q_[i * stride_]);
  }
  const std::vector<double>& progress = get("progress");
  GPSTREAM_CHECK(progress.size() == 3, "checkpoint: the online GP's progress holds {} values, not 3", progress.size());
  processed_ = static_cast<std::uint64_t>(progress[0]);
  deleted_ = static_cast<std::uint64_t>(progress[1]);
  sequential_negative_log_likelihood_ = progress[2];
  raw_basis_rows_.resize(checked_multiply(m, d_));
  kernel.rows().gather_rows(basis_, raw_basis_rows_.data(), nullptr);
  kernel.kernel().prepare(raw_basis_rows_.data(), m, basis_rows_);
}

RunCounters OnlineGp::counters() const { return counters_of(state_); }

void OnlineGp::set_counters(const RunCounters& counters) { set_counters_of(state_, counters); }

double OnlineGp::convergence_measure() const {
  return 1.0 - static_cast<double>(processed_) / static_cast<double>(total_rows());
}

void OnlineGp::update(std::size_t row, const PreparedRows& prepared, std::size_t position, double y) {
  const Kernel& kernel = matrix_.kernel();
  const std::size_t m = basis_.size();
  const int mi = static_cast<int>(m), stride = static_cast<int>(stride_);
  std::vector<double> k_x(m + 1), c_k(m + 1, 0.0), e(m + 1, 0.0);
  if (m > 0) kernel.evaluate(basis_rows_.view(d_), prepared.view(d_, position, 1), k_x.data());
  const double k_xx = kernel.self_covariance(&raw_block_[position * d_]);
  if (m > 0) {
    cblas_dgemv(CblasRowMajor, CblasNoTrans, mi, mi, 1.0, c_.data(), stride, k_x.data(), 1, 0.0, c_k.data(), 1);
    cblas_dgemv(CblasRowMajor, CblasNoTrans, mi, mi, 1.0, q_.data(), stride, k_x.data(), 1, 0.0, e.data(), 1);
  }
  const double variance = k_xx + dot(k_x.data(), c_k.data(), m);  // s² of f(x) before this row
  const double predictive = noise_ + variance;
  const double residual = y - dot(k_x.data(), a_.data(), m);
  sequential_negative_log_likelihood_ +=
      0.5 * (std::log(2.0 * std::numbers::pi * predictive) + residual * residual / predictive);
  const double q_coefficient = residual / predictive, r_coefficient = -1.0 / predictive;
  const double novelty = k_xx - dot(k_x.data(), e.data(), m);  // γ

  if (!(novelty > options_.novelty * k_xx)) {
    // Projected update: s = C k_x + ê, a += q s, C += r s sᵀ.
    for (std::size_t i = 0; i < m; ++i) c_k[i] += e[i];
    for (std::size_t i = 0; i < m; ++i) a_[i] += q_coefficient * c_k[i];
    cblas_dger(CblasRowMajor, mi, mi, r_coefficient, c_k.data(), 1, c_k.data(), 1, c_.data(), stride);
    return;
  }
  // x joins BV: s = [C k_x; 1], a = [a; 0] + q s, C = [C 0; 0 0] + r s sᵀ,
  // Q = [Q 0; 0 0] + γ⁻¹ [ê; −1][ê; −1]ᵀ.
  c_k[m] = 1.0;
  e[m] = -1.0;
  a_.push_back(0.0);
  for (std::size_t i = 0; i <= m; ++i) {
    c(m, i) = c(i, m) = 0.0;
    q(m, i) = q(i, m) = 0.0;
  }
  for (std::size_t i = 0; i <= m; ++i) a_[i] += q_coefficient * c_k[i];
  cblas_dger(CblasRowMajor, mi + 1, mi + 1, r_coefficient, c_k.data(), 1, c_k.data(), 1, c_.data(), stride);
  cblas_dger(CblasRowMajor, mi + 1, mi + 1, 1.0 / novelty, e.data(), 1, e.data(), 1, q_.data(), stride);
  basis_.push_back(row);
  raw_basis_rows_.insert(raw_basis_rows_.end(), &raw_block_[position * d_], &raw_block_[(position + 1) * d_]);
  basis_rows_.append(prepared, position, d_);

  if (basis_.size() > options_.basis_size) {
    // Delete the least informative basis vector: the smallest |a_i| / Q_ii.
    std::size_t least = 0;
    double smallest = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < basis_.size(); ++i) {
      const double score = std::abs(a_[i]) / q(i, i);
      if (score < smallest) smallest = score, least = i;
    }
    remove(least);
    ++deleted_;
  }
}

void OnlineGp::remove(std::size_t i) {
  const std::size_t m = basis_.size(), last = m - 1;
  if (i != last) {
    std::swap(basis_[i], basis_[last]);
    std::swap(a_[i], a_[last]);
    swap_symmetric(c_, stride_, m, i, last);
    swap_symmetric(q_, stride_, m, i, last);
    std::swap_ranges(&raw_basis_rows_[i * d_], &raw_basis_rows_[(i + 1) * d_], &raw_basis_rows_[last * d_]);
    std::swap_ranges(&basis_rows_.values[i * d_], &basis_rows_.values[(i + 1) * d_], &basis_rows_.values[last * d_]);
    std::swap(basis_rows_.squared_norms[i], basis_rows_.squared_norms[last]);
  }
  // With q* = Q_ll, Q* = Q[:l, l], c* = C_ll, C* = C[:l, l] (NOTES.md):
  const double q_star = q(last, last), c_star = c(last, last), a_last = a_[last];
  std::vector<double> q_column(last), c_column(last);
  for (std::size_t k = 0; k < last; ++k) q_column[k] = q(k, last), c_column[k] = c(k, last);
  for (std::size_t k = 0; k < last; ++k) a_[k] -= a_last * q_column[k] / q_star;
  for (std::size_t r = 0; r < last; ++r) {
    for (std::size_t s = 0; s < last; ++s) {
      c(r, s) += c_star * q_column[r] * q_column[s] / (q_star * q_star) -
                 (q_column[r] * c_column[s] + c_column[r] * q_column[s]) / q_star;
      q(r, s) -= q_column[r] * q_column[s] / q_star;
    }
  }
  for (std::size_t k = 0; k < m; ++k) c(k, last) = c(last, k) = q(k, last) = q(last, k) = 0.0;
  a_.pop_back();
  basis_.pop_back();
  raw_basis_rows_.resize(last * d_);
  basis_rows_.values.resize(last * d_);
  basis_rows_.squared_norms.pop_back();
  basis_rows_.count -= 1;
}

void OnlineGp::iterate() {
  const ScopedBlasThreads all_cores = matrix_.context().parallel_blas();  // the BLAS calls here run one at a time
  const std::size_t first = static_cast<std::size_t>(processed_ % n_);
  const std::size_t count = static_cast<std::size_t>(
      std::min<std::uint64_t>({options_.rows_per_iteration, n_ - first, total_rows() - processed_}));
  raw_block_.resize(checked_multiply(count, d_));
  matrix_.rows().read_rows(first, count, raw_block_.data(), nullptr);
  PreparedRows prepared;
  matrix_.kernel().prepare(raw_block_.data(), count, prepared);
  for (std::size_t t = 0; t < count; ++t) {
    update(first + t, prepared, t, y_[first + t]);
    matrix_.count_kernel_evaluations(basis_.size() + 1);
  }
  processed_ += count;
}

void OnlineGp::store_state() {
  auto& saved = state_.auxiliary;
  const std::size_t m = basis_.size();
  saved["basis"] = std::vector<double>(basis_.begin(), basis_.end());
  saved["a"] = a_;
  saved["C"] = compact(c_, stride_, m);
  saved["Q"] = compact(q_, stride_, m);
  saved["progress"] = {static_cast<double>(processed_), static_cast<double>(deleted_),
                       sequential_negative_log_likelihood_};
}

SparseModel OnlineGp::model() {
  const std::size_t m = basis_.size();
  GPSTREAM_CHECK(m > 0, "the online GP has seen no rows");
  SparseModel model;
  model.method = "online";
  model.prior.kernel = matrix_.kernel().hyperparameters();
  model.basis_indices = basis_;
  model.basis_rows = raw_basis_rows_;
  model.weights = a_;
  model.variance_form = SparseVarianceForm::online_posterior;
  model.variance_factor = compact(c_, stride_, m);
  model.diagnostics["deleted_basis_vectors"] = static_cast<double>(deleted_);
  model.diagnostics["sequential_nll"] = sequential_negative_log_likelihood_;
  return model;
}

}  // namespace gpstream

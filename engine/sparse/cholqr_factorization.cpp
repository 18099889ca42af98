#include "engine/sparse/cholqr_factorization.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace gpstream {
namespace {

// (x, y) ← (c x + s y, −s x + c y) over `count` pairs at strides.
void rotate(double* x, double* y, std::size_t count, std::size_t stride, double c, double s) {
  for (std::size_t i = 0; i < count; ++i) {
    const double a = x[i * stride], b = y[i * stride];
    x[i * stride] = c * a + s * b;
    y[i * stride] = -s * a + c * b;
  }
}

}  // namespace

CholQrFactorization::CholQrFactorization(const double* x, std::size_t n, std::size_t d, std::span<const double> y,
                                         std::size_t capacity)
    : x_(x),
      n_(n),
      d_(d),
      y_(y),
      capacity_(capacity),
      q_rows_(checked_add(n, capacity)),
      is_pivot_(n, 0),
      l_(checked_multiply(n, capacity), 0.0),
      q_(checked_multiply(q_rows_, capacity), 0.0),
      r_(checked_multiply(capacity, capacity), 0.0),
      c_(capacity, 0.0),
      residual_(n, 0.0) {
  GPSTREAM_CHECK(capacity > 0 && capacity <= n, "CholQR needs 1 to {} inducing rows, not {}", n, capacity);
  GPSTREAM_CHECK(y.size() == n, "{} targets for {} rows", y.size(), n);
  for (const double value : y) squared_norm_y_ += value * value;
}

void CholQrFactorization::rebuild(const Kernel& kernel, std::span<const std::size_t> inducing) {
  const std::size_t m = inducing.size();
  GPSTREAM_CHECK(m > 0 && m <= capacity_, "CholQR has room for 1 to {} inducing rows, not {}", capacity_, m);
  kernel_ = &kernel;
  noise_ = kernel.noise_variance();
  kernel.prepare(x_, n_, prepared_);
  self_covariance_.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) self_covariance_[i] = kernel.self_covariance(x_ + i * d_);
  std::fill(is_pivot_.begin(), is_pivot_.end(), 0);
  std::fill(l_.begin(), l_.end(), 0.0);
  std::fill(q_.begin(), q_.end(), 0.0);
  std::fill(r_.begin(), r_.end(), 0.0);
  std::fill(c_.begin(), c_.end(), 0.0);
  pivots_.assign(inducing.begin(), inducing.end());

  std::vector<double> x_i(checked_multiply(m, d_));
  for (std::size_t k = 0; k < m; ++k) {
    GPSTREAM_CHECK(pivots_[k] < n_, "inducing row {} is beyond the {} training rows", pivots_[k], n_);
    GPSTREAM_CHECK(is_pivot_[pivots_[k]] == 0, "inducing row {} is listed twice", pivots_[k]);
    is_pivot_[pivots_[k]] = 1;
    std::copy_n(x_ + pivots_[k] * d_, d_, &x_i[k * d_]);
  }
  PreparedRows inducing_rows;
  kernel.prepare(x_i.data(), m, inducing_rows);
  const std::vector<double> factor_i = inducing_kernel_factor(kernel, inducing_rows, "K_I, the inducing rows' kernel");
  // Lᵀ = L_I⁻¹ K_IN: the column-major n×m L is the row-major m×n Lᵀ.
  const int ni = static_cast<int>(n_), mi = static_cast<int>(m);
  kernel.evaluate(inducing_rows.view(d_), prepared_.view(d_), l_.data());
  cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, mi, ni, 1.0, factor_i.data(), mi,
              l_.data(), ni);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t k = j + 1; k < m; ++k) l_[k * n_ + pivots_[j]] = 0.0;  // lower trapezoidal in pivot order
  for (std::size_t i = 0; i < n_; ++i) {
    double explained = 0.0;
    for (std::size_t k = 0; k < m; ++k) explained += l_[k * n_ + i] * l_[k * n_ + i];
    residual_[i] = is_pivot_[i] ? 0.0 : std::max(0.0, self_covariance_[i] - explained);
  }

  // Householder QR of L̃ = [L; σI] (LAPACK dgeqrf + dorgqr).
  const double sigma = std::sqrt(noise_);
  for (std::size_t k = 0; k < m; ++k) {
    std::copy_n(&l_[k * n_], n_, &q_[k * q_rows_]);
    q_[k * q_rows_ + n_ + k] = sigma;
  }
  const lapack_int rows = static_cast<lapack_int>(n_ + m), columns = static_cast<lapack_int>(m),
                   stride = static_cast<lapack_int>(q_rows_);
  std::vector<double> tau(m);
  lapack_int info = LAPACKE_dgeqrf(LAPACK_COL_MAJOR, rows, columns, q_.data(), stride, tau.data());
  GPSTREAM_CHECK(info == 0, "LAPACK dgeqrf failed (info {})", info);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t i = 0; i <= j; ++i) r_[j * capacity_ + i] = q_[j * q_rows_ + i];
  info = LAPACKE_dorgqr(LAPACK_COL_MAJOR, rows, columns, columns, q_.data(), stride, tau.data());
  GPSTREAM_CHECK(info == 0, "LAPACK dorgqr failed (info {})", info);
  cblas_dgemv(CblasColMajor, CblasTrans, ni, mi, 1.0, q_.data(), static_cast<int>(q_rows_), y_.data(), 1, 0.0,
              c_.data(), 1);
}

void CholQrFactorization::kernel_column(std::size_t row, double* out) const {
  kernel_->evaluate(prepared_.view(d_), prepared_.view(d_, row, 1), out);
}

void CholQrFactorization::new_column(std::size_t row, double* out) const {
  const std::size_t k = size();
  kernel_column(row, out);
  if (k > 0) {
    std::vector<double> l_row(k);
    for (std::size_t j = 0; j < k; ++j) l_row[j] = l_[j * n_ + row];
    cblas_dgemv(CblasColMajor, CblasNoTrans, static_cast<int>(n_), static_cast<int>(k), -1.0, l_.data(),
                static_cast<int>(n_), l_row.data(), 1, 1.0, out, 1);
  }
  const double pivot = std::sqrt(out[row]);
  for (std::size_t i = 0; i < n_; ++i) out[i] /= pivot;
  for (const std::size_t p : pivots_) out[p] = 0.0;
  out[row] = pivot;
}

void CholQrFactorization::orthogonalise(const double* l, double* r, double* coefficients) const {
  const std::size_t k = size(), rows = n_ + k + 1;
  std::copy_n(l, n_, r);
  std::fill(r + n_, r + rows, 0.0);
  r[n_ + k] = std::sqrt(noise_);
  std::fill(coefficients, coefficients + k, 0.0);
  if (k == 0) return;
  std::vector<double> pass(k);
  const int ri = static_cast<int>(rows), ki = static_cast<int>(k), stride = static_cast<int>(q_rows_);
  for (int repeat = 0; repeat < 2; ++repeat) {  // "twice is enough" (classical Gram–Schmidt, re-orthogonalised)
    cblas_dgemv(CblasColMajor, CblasTrans, ri, ki, 1.0, q_.data(), stride, r, 1, 0.0, pass.data(), 1);
    cblas_dgemv(CblasColMajor, CblasNoTrans, ri, ki, -1.0, q_.data(), stride, pass.data(), 1, 1.0, r, 1);
    for (std::size_t j = 0; j < k; ++j) coefficients[j] += pass[j];
  }
}

std::optional<ObjectiveDecrease> CholQrFactorization::decrease_if_appended(std::size_t row,
                                                                           double relative_floor) const {
  GPSTREAM_CHECK(row < n_ && !is_pivot(row), "row {} is not a candidate for the inducing set", row);
  if (!(residual_[row] > relative_floor * self_covariance_[row])) return std::nullopt;
  const std::size_t k = size();
  std::vector<double> l(n_), r(n_ + k + 1), coefficients(k);
  new_column(row, l.data());
  if (!std::isfinite(l[row]) || !(l[row] * l[row] > relative_floor * self_covariance_[row])) return std::nullopt;
  orthogonalise(l.data(), r.data(), coefficients.data());
  double squared_norm_r = 0.0, y_dot_r = 0.0, squared_norm_l = 0.0;
  for (const double value : r) squared_norm_r += value * value;
  for (std::size_t i = 0; i < n_; ++i) {
    y_dot_r += y_[i] * r[i];
    squared_norm_l += l[i] * l[i];
  }
  return ObjectiveDecrease{y_dot_r * y_dot_r / (noise_ * squared_norm_r), std::log(noise_) - std::log(squared_norm_r),
                           squared_norm_l / noise_};
}

bool CholQrFactorization::append(std::size_t row, double relative_floor) {
  GPSTREAM_CHECK(row < n_ && !is_pivot(row), "row {} cannot be appended to the inducing set", row);
  const std::size_t k = size();
  GPSTREAM_CHECK(k < capacity_, "the inducing set is full ({} rows)", capacity_);
  double* l = &l_[k * n_];
  new_column(row, l);
  if (!std::isfinite(l[row]) || !(l[row] * l[row] > relative_floor * self_covariance_[row])) {
    std::fill(l, l + n_, 0.0);
    return false;
  }
  for (std::size_t i = 0; i < n_; ++i) residual_[i] = std::max(0.0, residual_[i] - l[i] * l[i]);
  residual_[row] = 0.0;

  std::vector<double> r(n_ + k + 1), coefficients(k);
  orthogonalise(l, r.data(), coefficients.data());
  double norm = 0.0;
  for (const double value : r) norm += value * value;
  norm = std::sqrt(norm);
  for (std::size_t j = 0; j < k; ++j) r_[k * capacity_ + j] = coefficients[j];
  r_[k * capacity_ + k] = norm;
  double* q = &q_[k * q_rows_];
  for (std::size_t i = 0; i < r.size(); ++i) q[i] = r[i] / norm;
  c_[k] = cblas_ddot(static_cast<int>(n_), q, 1, y_.data(), 1);
  pivots_.push_back(row);
  is_pivot_[row] = 1;
  return true;
}

void CholQrFactorization::swap_adjacent(std::size_t s) {
  const std::size_t k = size();
  std::swap(pivots_[s], pivots_[s + 1]);
  const std::size_t w = pivots_[s];  // the pivot moving forward
  double* l_s = &l_[s * n_];
  double* l_t = &l_[(s + 1) * n_];
  // Column rotation G with [L(w, s), L(w, s+1)] G = [ρ, 0]: L stays lower trapezoidal.
  const double a = l_s[w], b = l_t[w], rho = std::hypot(a, b);
  const double c = a / rho, sn = b / rho;
  rotate(l_s, l_t, n_, 1, c, sn);
  l_t[w] = 0.0;
  rotate(&r_[s * capacity_], &r_[(s + 1) * capacity_], s + 2, 1, c, sn);
  // L̃'s augmented block became σG; rows n+s, n+s+1 of Q turn it back to σI.
  rotate(&q_[n_ + s], &q_[n_ + s + 1], k, q_rows_, c, sn);
  // Row rotation H restores R's triangle; Q ← Q Hᵀ and c ← H c keep QR = L̃ and c = Qᵀỹ.
  const double top = r_[s * capacity_ + s], below = r_[s * capacity_ + s + 1], rho2 = std::hypot(top, below);
  const double c2 = top / rho2, s2 = below / rho2;
  rotate(&r_[s * capacity_ + s], &r_[s * capacity_ + s + 1], k - s, capacity_, c2, s2);
  r_[s * capacity_ + s + 1] = 0.0;
  rotate(&q_[s * q_rows_], &q_[(s + 1) * q_rows_], n_ + k, 1, c2, s2);
  rotate(&c_[s], &c_[s + 1], 1, 1, c2, s2);
}

void CholQrFactorization::remove(std::size_t position) {
  const std::size_t k = size();
  GPSTREAM_CHECK(position < k, "no inducing row at position {} (there are {})", position, k);
  for (std::size_t s = position; s + 1 < k; ++s) swap_adjacent(s);
  const std::size_t last = k - 1;
  double* l = &l_[last * n_];
  for (std::size_t i = 0; i < n_; ++i) residual_[i] += l[i] * l[i];
  std::fill(l, l + n_, 0.0);
  std::fill(&q_[last * q_rows_], &q_[last * q_rows_] + q_rows_, 0.0);
  for (std::size_t j = 0; j < last; ++j) q_[j * q_rows_ + n_ + last] = 0.0;  // zero to rounding already
  for (std::size_t j = 0; j < k; ++j) r_[j * capacity_ + last] = 0.0;
  std::fill(&r_[last * capacity_], &r_[last * capacity_] + capacity_, 0.0);
  c_[last] = 0.0;
  is_pivot_[pivots_.back()] = 0;
  pivots_.pop_back();
}

double CholQrFactorization::data_term() const {
  double explained = 0.0;
  for (std::size_t j = 0; j < size(); ++j) explained += c_[j] * c_[j];
  return (squared_norm_y_ - explained) / noise_;
}

double CholQrFactorization::complexity_term() const {
  double log_determinant = 0.0;
  for (std::size_t j = 0; j < size(); ++j) log_determinant += std::log(std::abs(r_[j * capacity_ + j]));
  return static_cast<double>(n_ - size()) * std::log(noise_) + 2.0 * log_determinant;
}

double CholQrFactorization::trace_term() const {
  double trace = 0.0;
  for (const double value : residual_) trace += value;
  return trace / noise_;
}

double CholQrFactorization::objective(InducingObjective objective) const {
  const double trace = objective == InducingObjective::variational ? trace_term() : 0.0;
  return 0.5 * (data_term() + complexity_term() + trace) +
         0.5 * static_cast<double>(n_) * std::log(2.0 * std::numbers::pi);
}

void CholQrFactorization::residual_columns(std::span<const std::size_t> columns, double* out) const {
  const std::size_t z = columns.size(), k = size();
  if (z == 0) return;
  PreparedRows chosen;
  chosen.count = z;
  chosen.values.resize(checked_multiply(z, d_));
  chosen.squared_norms.resize(z);
  std::vector<double> l_rows(checked_multiply(std::max<std::size_t>(k, 1), z));
  for (std::size_t t = 0; t < z; ++t) {
    std::copy_n(&prepared_.values[columns[t] * d_], d_, &chosen.values[t * d_]);
    chosen.squared_norms[t] = prepared_.squared_norms[columns[t]];
    for (std::size_t j = 0; j < k; ++j) l_rows[j * z + t] = l_[j * n_ + columns[t]];
  }
  kernel_->evaluate(prepared_.view(d_), chosen.view(d_), out);
  if (k == 0) return;
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(n_), static_cast<int>(z), static_cast<int>(k),
              -1.0, l_.data(), static_cast<int>(n_), l_rows.data(), static_cast<int>(z), 1.0, out, static_cast<int>(z));
}

}  // namespace gpstream

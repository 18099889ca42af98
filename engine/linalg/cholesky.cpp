#include "engine/linalg/cholesky.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/core/vector_width.h"
#include "engine/core/worker_team.h"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace gpstream {

// A row-major lower triangle is the column-major upper one of the transpose:
// LAPACK is called column-major on the same memory, so that LAPACKE does not
// transpose (copy) the matrix on the way in and out.
void cholesky_factor(double* a, std::size_t n, const char* what) {
  if (n == 0) return;
  const lapack_int info =
      LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', static_cast<lapack_int>(n), a, static_cast<lapack_int>(n));
  GPSTREAM_CHECK(info >= 0, "LAPACK dpotrf rejected its arguments (argument {})", -info);
  if (info != 0) throw_not_positive_definite(what, fmt::format("Cholesky failed at column {} of {}", info, n));
}

PanelCholesky::PanelCholesky(double* a, std::size_t n, std::size_t panel_columns, const char* what)
    : a_(a), n_(n), panel_columns_(std::max<std::size_t>(panel_columns, 1)), what_(what) {
  GPSTREAM_CHECK(n <= static_cast<std::size_t>(std::numeric_limits<int>::max()), "{} is too large for LAPACK ({} rows)",
                 what, n);
}

double PanelCholesky::flops(std::size_t n) {
  const double order = static_cast<double>(n);
  return order * order * order / 3.0;
}

double PanelCholesky::factor_next_panel() {
  if (done()) return 0.0;
  // Column-major upper U = Lᵀ on the same memory (see cholesky_factor):
  // [U11 U12; 0 U22] with U11ᵀU11 = A11, U12 = U11⁻ᵀA12, A22 −= U12ᵀU12.
  const std::size_t k0 = factored_, k1 = std::min(n_, k0 + panel_columns_);
  const int order = static_cast<int>(n_), width = static_cast<int>(k1 - k0), rest = static_cast<int>(n_ - k1);
  double* a11 = a_ + k0 + k0 * n_;
  const lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', width, a11, order);
  GPSTREAM_CHECK(info >= 0, "LAPACK dpotrf rejected its arguments (argument {})", -info);
  if (info != 0) {
    throw_not_positive_definite(
        what_, fmt::format("Cholesky failed at column {} of {}", k0 + static_cast<std::size_t>(info), n_));
  }
  if (rest > 0) {
    double* a12 = a_ + k0 + k1 * n_;
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasUpper, CblasTrans, CblasNonUnit, width, rest, 1.0, a11, order, a12,
                order);
    cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, rest, width, -1.0, a12, order, 1.0, a_ + k1 + k1 * n_, order);
  }
  factored_ = k1;
  const double w = width, r = rest;
  return w * w * w / 3.0 + w * w * r + w * r * r;
}

void throw_not_positive_definite(const std::string& what, const std::string& evidence) {
  GPSTREAM_THROW(
      "{} is not numerically positive definite ({}): raise the noise variance, or look for duplicate rows "
      "and very long lengthscales",
      what, evidence);
}

void cholesky_solve(const double* factor, std::size_t n, double* b, std::size_t r) {
  if (n == 0 || r == 0) return;
  // L Lᵀ X = B as two triangular solves on the row-major data, in place.
  const int size = static_cast<int>(n), columns = static_cast<int>(r);
  if (r == 1) {  // OpenBLAS's trsm packs its operands first: 4× slower on one column at n = 500
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, size, factor, size, b, 1);
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, size, factor, size, b, 1);
    return;
  }
  cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, size, columns, 1.0, factor, size, b,
              columns);
  cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, size, columns, 1.0, factor, size, b,
              columns);
}

IncrementalCholesky::IncrementalCholesky(std::size_t capacity)
    : capacity_(capacity), factor_(checked_multiply(capacity, capacity)), forward_(capacity) {}

bool IncrementalCholesky::append(const double* k, double diagonal, double relative_floor) {
  GPSTREAM_CHECK(size_ < capacity_, "the Cholesky factor is full ({} rows)", capacity_);
  const int t = static_cast<int>(size_);
  std::copy(k, k + size_, forward_.begin());
  if (t > 0) {
    cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, t, factor_.data(), static_cast<int>(capacity_),
                forward_.data(), 1);
  }
  const double squared_norm = cblas_ddot(t, forward_.data(), 1, forward_.data(), 1);
  const double squared_pivot = diagonal - squared_norm;
  // Relative threshold: below it the pivot is rounding noise, and the system
  // it would define is singular to working precision.
  if (!(squared_pivot > relative_floor * diagonal)) return false;
  double* row = factor_.data() + size_ * capacity_;
  std::copy(forward_.begin(), forward_.begin() + t, row);
  row[size_] = std::sqrt(squared_pivot);
  ++size_;
  return true;
}

std::size_t IncrementalCholesky::append_block(const double* k_sb, const double* k_ss, std::size_t count,
                                              WorkerTeam* team, double relative_floor) {
  GPSTREAM_CHECK(size_ + count <= capacity_, "{} more rows do not fit the Cholesky factor ({} of {} rows used)", count,
                 size_, capacity_);
  const std::size_t t = size_;
  // The new rows beside L: X = K̄_SB L⁻ᵀ, i.e. L Xᵀ = K̄_BS, by forward
  // substitution — the O(t²·count) part of the block, as many FMAs as
  // `count` trsv but at the core's FMA rate: the right-hand sides in groups
  // of one vector register of doubles (core/vector_width.h; the lanes are
  // independent, so the results do not depend on the width), the groups on
  // separate cores, and four rows of L at a time, so that each row of Xᵀ
  // already solved is loaded once for the four. OpenBLAS's trsm packs L on
  // every call first, which at these sizes took longer than the solve.
  constexpr std::size_t kLanes = kVectorDoubles, kRows = 4;
  using Lanes = double __attribute__((vector_size(kLanes * sizeof(double))));
  const std::size_t groups = (count + kLanes - 1) / kLanes;
  block_.assign(groups * t * kLanes, 0.0);  // per group, its Xᵀ: t×kLanes
  for_each_item(team, groups, [&](std::size_t group) {
    const std::size_t first = group * kLanes, lanes = std::min(kLanes, count - first);
    double* solved = block_.data() + group * t * kLanes;
    auto load = [solved, kLanes](std::size_t row) {
      Lanes values;
      std::memcpy(&values, solved + row * kLanes, sizeof values);
      return values;
    };
    for (std::size_t i0 = 0; i0 < t; i0 += kRows) {
      const std::size_t rows = std::min(kRows, t - i0);
      const double* l[kRows];
      for (std::size_t r = 0; r < kRows; ++r) l[r] = factor_.data() + std::min(i0 + r, t - 1) * capacity_;
      // Σ_{j < i0} L_ij x_j for the four rows, each in one accumulator, in
      // the order j = 0, 1, … (a missing fourth row repeats the last: unused).
      Lanes sum[kRows] = {};
      for (std::size_t j = 0; j < i0; ++j) {
        const Lanes x = load(j);
        for (std::size_t r = 0; r < kRows; ++r) sum[r] += l[r][j] * x;
      }
      // The triangle inside the four rows, then each row's solution.
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t i = i0 + r;
        for (std::size_t j = i0; j < i; ++j) sum[r] += l[r][j] * load(j);
        double* x = solved + i * kLanes;
        for (std::size_t s = 0; s < lanes; ++s) x[s] = (k_sb[(first + s) * t + i] - sum[r][s]) / l[r][i];
      }
    }
    for (std::size_t s = 0; s < lanes; ++s) {
      double* row = factor_.data() + (t + first + s) * capacity_;
      for (std::size_t i = 0; i < t; ++i) row[i] = solved[i * kLanes + s];
    }
  });
  // The block's own lower triangle, row by row: the Cholesky factor of the
  // Schur complement K̄_SS − X Xᵀ (count is small; dot products suffice).
  for (std::size_t j = 0; j < count; ++j) {
    double* row = factor_.data() + (t + j) * capacity_;
    for (std::size_t i = 0; i < j; ++i) {
      const double* above = factor_.data() + (t + i) * capacity_;
      const double value = k_ss[j * count + i] - cblas_ddot(static_cast<int>(t + i), row, 1, above, 1);
      row[t + i] = value / above[t + i];
    }
    const double diagonal = k_ss[j * count + j];
    const double squared_pivot = diagonal - cblas_ddot(static_cast<int>(t + j), row, 1, row, 1);
    if (!(squared_pivot > relative_floor * diagonal)) return j;
    row[t + j] = std::sqrt(squared_pivot);
    ++size_;
  }
  return count;
}

void IncrementalCholesky::solve_columns(double* b, std::size_t r, bool transpose) const {
  if (size_ == 0 || r == 0) return;
  if (r == 1) {  // trsm packs its operands first, which costs more than the solve for one column
    cblas_dtrsv(CblasRowMajor, CblasLower, transpose ? CblasTrans : CblasNoTrans, CblasNonUnit, static_cast<int>(size_),
                factor_.data(), static_cast<int>(capacity_), b, 1);
    return;
  }
  cblas_dtrsm(CblasRowMajor, CblasLeft, CblasLower, transpose ? CblasTrans : CblasNoTrans, CblasNonUnit,
              static_cast<int>(size_), static_cast<int>(r), 1.0, factor_.data(), static_cast<int>(capacity_), b,
              static_cast<int>(r));
}

void IncrementalCholesky::back_substitute(const double* b, double* x, std::size_t rows) const {
  GPSTREAM_CHECK(rows <= size_, "back substitution on {} rows of a {}-row factor", rows, size_);
  std::copy(b, b + rows, x);
  if (rows == 0) return;
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, static_cast<int>(rows), factor_.data(),
              static_cast<int>(capacity_), x, 1);
}

void IncrementalCholesky::multiply_transposed(double* x) const {
  if (size_ == 0) return;
  cblas_dtrmv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, static_cast<int>(size_), factor_.data(),
              static_cast<int>(capacity_), x, 1);
}

void IncrementalCholesky::copy_factor(std::vector<double>& dense) const {
  dense.resize(size_ * size_);
  for (std::size_t i = 0; i < size_; ++i) {
    std::copy_n(factor_.data() + i * capacity_, i + 1, dense.data() + i * size_);
  }
}

void IncrementalCholesky::assign_factor(const std::vector<double>& dense, std::size_t size) {
  GPSTREAM_CHECK(size <= capacity_ && dense.size() == size * size, "a {}-row factor does not fit a capacity of {} rows",
                 size, capacity_);
  for (std::size_t i = 0; i < size; ++i) std::copy_n(dense.data() + i * size, i + 1, factor_.data() + i * capacity_);
  size_ = size;
}

int cholesky_factor_with_jitter(std::vector<double>& a, std::size_t n, double jitter, int escalations,
                                const char* what) {
  const std::vector<double> original = a;
  for (int escalation = 0;; ++escalation) {
    try {
      cholesky_factor(a.data(), n, what);
      return escalation;
    } catch (const Error&) {
      if (escalation == escalations) throw;
      a = original;
      const double added = jitter * std::pow(100.0, escalation);
      for (std::size_t i = 0; i < n; ++i) a[i * n + i] += added;
    }
  }
}

}  // namespace gpstream

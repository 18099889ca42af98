// Cholesky factorisations of symmetric positive definite matrices: the way
// gpstream solves every linear system it can hold in memory. No explicit
// inverse is ever formed.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpstream {

class WorkerTeam;

// Factorises a (n×n, row-major; the lower triangle is read) in place into L
// with a = L Lᵀ (LAPACK dpotrf); the strict upper triangle is left as it was. Throws an Error naming `what` and the
// column where positive definiteness failed, with advice.
void cholesky_factor(double* a, std::size_t n, const char* what);

// cholesky_factor done one panel of columns at a time (right-looking: the
// panel's diagonal block by dpotrf, the block beside it by dtrsm, the
// trailing matrix by dsyrk), so that a factorisation of minutes can report
// progress and stop between panels. Same storage as cholesky_factor.
class PanelCholesky {
 public:
  PanelCholesky(double* a, std::size_t n, std::size_t panel_columns, const char* what);
  bool done() const { return factored_ == n_; }
  std::size_t factored() const { return factored_; }  // leading columns of L final
  // Factors the next panel and updates the matrix after it; returns its flops.
  double factor_next_panel();
  // The flops of a whole factorisation of order n (n³/3).
  static double flops(std::size_t n);

 private:
  double* a_;
  std::size_t n_, panel_columns_;
  const char* what_;
  std::size_t factored_ = 0;
};

// The Error cholesky_factor throws: `what` is not numerically positive
// definite, `evidence` says how that showed ("Cholesky failed at column 3 of
// 40"), with advice. Every solver reports a singular K̄ through it, so that
// they all say it the way the Cholesky solver does.
[[noreturn]] void throw_not_positive_definite(const std::string& what, const std::string& evidence);

// Below this fraction of the largest diagonal entry, a Rayleigh quotient or
// Schur complement of K̄ = K + σ²I is rounding noise: λ_min(K̄) ≥ σ², so only
// a noise variance lost in rounding gets there, and then K̄ is singular to
// working precision (a condition number above 1e12).
inline constexpr double kSingularRelativeFloor = 1e-12;

// cholesky_factor on `a` (n×n) as it is, and when that fails, again with
// jitter · 100^(k−1) added to the original diagonal for k = 1 … escalations;
// throws like cholesky_factor when even the last fails. Returns k, the number
// of escalations needed (0: none), for callers to report.
int cholesky_factor_with_jitter(std::vector<double>& a, std::size_t n, double jitter, int escalations,
                                const char* what);

// Solves L Lᵀ X = B in place for B (n×r, row-major), given the factor above
// (only its lower triangle is read).
void cholesky_solve(const double* factor, std::size_t n, double* b, std::size_t r);

// A Cholesky factor L of K̄_BB grown one row and column at a time, as the
// greedy selection of GBCD adds active variables (Bo & Sminchisescu 2008,
// §2.1: "one can improve the numerical stability further, by using Cholesky
// decomposition" — used here instead of the inverse update (12)).
class IncrementalCholesky {
 public:
  explicit IncrementalCholesky(std::size_t capacity);

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  void clear() { size_ = 0; }

  // Adds row/column s given k = K̄[B, s] (size() values) and K̄_ss. Returns
  // false, leaving the factor unchanged, when the new squared pivot is not
  // above `relative_floor` × K̄_ss (s is (nearly) in the span of B).
  bool append(const double* k, double diagonal, double relative_floor = kSingularRelativeFloor);

  // Adds `count` rows and columns at once, given K̄[S, B] (count×size(),
  // row-major) and K̄_SS (count×count, row-major, lower triangle read): the
  // new rows' part beside L is one forward substitution on all `count`
  // right-hand sides, at the core's FMA rate and on up to
  // count / kVectorDoubles cores, instead of `count` memory-bound trsv. Returns how many were added —
  // fewer than `count` when the next squared pivot is not above
  // `relative_floor` × its K̄_ss, as append() refuses it; the factor then
  // holds the ones before. The groups of right-hand sides run on `team`
  // when one is given (a caller inside WorkerTeam::run), else as TBB tasks.
  std::size_t append_block(const double* k_sb, const double* k_ss, std::size_t count, WorkerTeam* team = nullptr,
                           double relative_floor = kSingularRelativeFloor);

  // B = L⁻¹ B (or L⁻ᵀ B with `transpose`) in place for B size()×r, row-major:
  // many right-hand sides in one BLAS-3 call.
  void solve_columns(double* b, std::size_t r, bool transpose) const;

  // x = L⁻ᵀ b with the leading `rows`×`rows` block of L (the factor as it
  // was before the last `size() − rows` appends); x may alias b.
  void back_substitute(const double* b, double* x, std::size_t rows) const;

  // x = Lᵀx in place (size() values).
  void multiply_transposed(double* x) const;

  // The factor into `dense` as a size()×size() row-major lower triangle (the
  // strict upper triangle is not written).
  void copy_factor(std::vector<double>& dense) const;
  // Replaces the factor by `dense` (size×size row-major lower triangle, as
  // copy_factor writes it): restores a factor saved in a checkpoint.
  void assign_factor(const std::vector<double>& dense, std::size_t size);

 private:
  std::size_t capacity_;
  std::size_t size_ = 0;
  std::vector<double> factor_;           // capacity×capacity row-major, lower triangle (rows < size() valid)
  std::vector<double> forward_, block_;  // scratch: l = L⁻¹k of append(), Xᵀ of append_block()
};

}  // namespace gpstream

// The factored representation of CholQR (Cao et al. 2015 §3.1–3.2,
// Appendices A–B): for the inducing rows I (in pivot order) of n training
// rows,
//   L       n×k partial Cholesky factor, K̂ = K_NI K_I⁻¹ K_IN = L Lᵀ (eq. 6),
//           lower trapezoidal in pivot order (L[I, :] lower triangular);
//   L̃ = QR  the thin QR factorisation of the augmented factor L̃ = [L; σI_k]
//           (Q (n+k)×k with orthonormal columns, R k×k upper triangular);
//   d       the residual diagonal diag(K − L Lᵀ), zero on I;
//   c = Qᵀỹ with ỹ = [y; 0_k].
// From them the objective terms cost O(k) (eqs. 9, 12, 13):
//   E_D = σ⁻²(‖y‖² − ‖c‖²),  E_C = (n − k) log σ² + 2 log |det R|,  E_V = σ⁻² Σ d.
// Appending a row is one step of Cholesky and of Gram–Schmidt (Algorithm 3,
// eqs. 14–15, re-orthogonalised once); removing the pivot at any position
// first moves it to the last position by Givens rotations that keep L lower
// trapezoidal and R triangular (Algorithm 4) and then drops the last column
// (Algorithm 5). Each is O(n k) time; the factors take O(n m) memory for
// capacity m. Rows are never permuted: L keeps the data's row order and
// `pivots()` says which row each column belongs to. The augmented block of
// L̃ is kept implicit — it is σI after every operation (Algorithm 4 rotates
// Q's augmented rows instead).
#pragma once

#include "engine/kernels/kernel.h"
#include "engine/sparse/inducing_objective.h"

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace gpstream {

// The exact decrease of each objective term when a row is appended (eqs. 16–18).
struct ObjectiveDecrease {
  double data = 0.0;        // ΔE_D = σ⁻² (ỹᵀr)² / ‖r‖²
  double complexity = 0.0;  // ΔE_C = log σ² − log ‖r‖²
  double trace = 0.0;       // ΔE_V = σ⁻² ‖ℓ‖²
  // ΔF for `objective` (halved, as F is).
  double of(InducingObjective objective) const {
    return 0.5 * (data + complexity + (objective == InducingObjective::variational ? trace : 0.0));
  }
};

class CholQrFactorization {
 public:
  // x: n×d standardised rows and y their targets, both kept by reference;
  // room for `capacity` pivots.
  CholQrFactorization(const double* x, std::size_t n, std::size_t d, std::span<const double> y, std::size_t capacity);

  // Takes the kernel (whose rows it prepares; `kernel` must outlive this)
  // and builds the factors of the pivots `inducing` in one batch: L = K_NI L_I⁻ᵀ
  // with L_I = chol(K_I), Householder QR of L̃ (O(n m²), paper §3.4).
  void rebuild(const Kernel& kernel, std::span<const std::size_t> inducing);

  // Appends `row` as the last pivot (Algorithm 3). Returns false, changing
  // nothing, when its residual d_row is not above relative_floor × k(row, row).
  bool append(std::size_t row, double relative_floor);
  // Removes the pivot at `position` (Algorithms 4 and 5).
  void remove(std::size_t position);
  // The exact decrease if `row` were appended (O(n k)), or nothing when its
  // residual is not above relative_floor × k(row, row).
  std::optional<ObjectiveDecrease> decrease_if_appended(std::size_t row, double relative_floor) const;

  double data_term() const;        // E_D
  double complexity_term() const;  // E_C
  double trace_term() const;       // E_V
  // F = (E_D + E_C [+ E_V])/2 + (n/2) log 2π, as evaluate_inducing_objective() defines it.
  double objective(InducingObjective objective) const;

  // (K − L Lᵀ)[:, columns] into out (n × columns.size(), row-major): the
  // residual columns the information pivots are built from.
  void residual_columns(std::span<const std::size_t> columns, double* out) const;

  std::size_t size() const { return pivots_.size(); }
  std::size_t rows() const { return n_; }
  std::span<const std::size_t> pivots() const { return pivots_; }
  std::span<const double> residual_diagonal() const { return residual_; }
  bool is_pivot(std::size_t row) const { return is_pivot_[row] != 0; }
  double self_covariance(std::size_t row) const { return self_covariance_[row]; }  // k(x_row, x_row)
  // Element access (column-major storage), for tests and the candidate scores.
  double l(std::size_t row, std::size_t column) const { return l_[column * n_ + row]; }
  double q(std::size_t row, std::size_t column) const { return q_[column * q_rows_ + row]; }  // row < n + size()
  double r(std::size_t row, std::size_t column) const { return r_[column * capacity_ + row]; }
  const double* l_column(std::size_t column) const { return &l_[column * n_]; }
  const double* q_column(std::size_t column) const { return &q_[column * q_rows_]; }
  std::size_t q_stride() const { return q_rows_; }
  std::span<const double> q_times_y() const { return std::span(c_).first(size()); }  // c = Qᵀỹ
  double noise_variance() const { return noise_; }

 private:
  // K[:, row] over all n rows.
  void kernel_column(std::size_t row, double* out) const;
  // ℓ = (K − L Lᵀ)[:, row] / √d_row into out (n values), exact zeros on the pivots.
  void new_column(std::size_t row, double* out) const;
  // r = ℓ̃ − Q Qᵀℓ̃ for ℓ̃ = [ℓ; σ e_k] (two Gram–Schmidt passes) into `r`
  // (n + k + 1 values); the coefficients Qᵀℓ̃ into `coefficients` (k values).
  void orthogonalise(const double* l, double* r, double* coefficients) const;
  // Swaps the pivots at positions s and s + 1 (one step of Algorithm 4).
  void swap_adjacent(std::size_t s);

  const double* x_;
  std::size_t n_, d_;
  std::span<const double> y_;
  std::size_t capacity_;
  std::size_t q_rows_;  // n + capacity
  const Kernel* kernel_ = nullptr;
  PreparedRows prepared_;
  double noise_ = 0.0;
  double squared_norm_y_ = 0.0;
  std::vector<double> self_covariance_;  // k(x_i, x_i)
  std::vector<std::size_t> pivots_;
  std::vector<char> is_pivot_;
  std::vector<double> l_;         // n × capacity, column-major
  std::vector<double> q_;         // (n + capacity) × capacity, column-major
  std::vector<double> r_;         // capacity × capacity, column-major
  std::vector<double> c_;         // Qᵀỹ, capacity
  std::vector<double> residual_;  // d, n
};

}  // namespace gpstream

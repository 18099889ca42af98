// A certificate for the gbcd variance route tighter than ‖g‖²/σ² where the
// residual is smooth.
//
// The route's error for a test row is gᵀK̄⁻¹g, g = K̄u − k* (dense_variance.h),
// and λ_min(K̄) ≥ σ² bounds it by ‖g‖²/σ². What is left of g after a solve
// that is exact near the test row lies mostly far from it, where it is a
// difference of slowly varying kernel values: smooth, in the directions
// where K̄ is large and the bound is loosest. A Nyström approximation
// [WilliamsSeeger01] on r training rows Z is below K in the Loewner order:
//   N = K(X, Z) (K_ZZ + εI)⁻¹ K(Z, X) ⪯ K   (ε ≥ 0; the Schur complement of
//   the joint covariance of f(X) and f(Z)),
// so P = σ²I + N ⪯ K̄ and gᵀK̄⁻¹g ≤ gᵀP⁻¹g, which Woodbury's identity gives
// in O(n·r) per column:
//   gᵀP⁻¹g = (‖g‖² − hᵀC⁻¹h) / σ²,   h = K(Z, X) g,   C = σ²(K_ZZ + εI) + K(Z, X) K(X, Z).
// For any w, hᵀC⁻¹h ≥ 2wᵀh − wᵀCw, so the bound stays an upper bound with the
// w a rounded solve gives; ε covers the rounding of C's product (its Gershgorin
// bound), and a guard the rounding of h, of q = 2wᵀh − wᵀCw and of ‖g‖².
// On heaton_sim's default model, a batch of 256 test rows solved exactly on
// the 3,000 training rows of highest covariance with them: the plain bound
// certified 27 % of them at 1e-3, this one (r = 1,000) all.
#pragma once

#include "engine/core/context.h"
#include "engine/kernels/kernel_matrix.h"

#include <cstddef>
#include <span>
#include <vector>

namespace gpstream {

class LowRankErrorBound {
 public:
  // On up to `points` training rows spread over the set (every (n/r)-th), as
  // many as a quarter of the free memory budget holds (n·r doubles); none
  // (empty()) when fewer than 64 fit, when the rows are partitioned among
  // ranks, or when σ² = 0.
  LowRankErrorBound(KernelMatrix& training, std::size_t points);
  bool empty() const { return points_ == 0; }
  std::size_t points() const { return points_; }

  // Upper bounds on g_jᵀK̄⁻¹g_j for the r columns of G (n×r, row-major),
  // given their squared norms; never above ‖g_j‖²/σ².
  std::vector<double> bound(const double* gradient, std::size_t r, std::span<const double> squared_norms) const;

 private:
  KernelMatrix& training_;
  std::size_t points_ = 0;
  MemoryReservation memory_;
  std::vector<double> cross_;     // K(X, Z), n×r
  std::vector<double> system_;    // C, r×r
  std::vector<double> absolute_;  // |C|
  std::vector<double> factor_;    // C = LLᵀ
  double cross_norm_ = 0.0;       // ≥ ‖|K(X, Z)|‖₂
};

}  // namespace gpstream

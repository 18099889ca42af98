// Subspace acceleration of block coordinate descent [NarkissZibulevsky05]:
// each iteration minimises f(α) = ½ αᵀK̄α − yᵀα exactly over the block step
// p (Δα_B on B, zero elsewhere) and the last k combined steps D_1 … D_k,
// instead of taking p alone:
//   S = [p D_1 … D_k],  (SᵀK̄S) c = −Sᵀg,  α += S c,  g += K̄S c,
// and S c becomes the newest past step. K̄p is the block product that plain
// BCD makes anyway and K̄D_j is kept beside D_j, so the step costs O(nk)
// more arithmetic and no kernel entries. On a quadratic this is what makes
// CG out of steepest descent: the past steps carry the curvature the blocks
// have seen. p alone is in the span, so every iteration lowers f at least as
// much as plain BCD's; past steps (nearly) in the span of p and the newer
// ones are left out (a pivot of SᵀK̄S's Cholesky factor below the floor).
//
// D_j and K̄D_j are held for all n rows on every rank, as CG holds its
// direction, so that the dot products run over the same n values in one
// fixed order on any number of ranks and threads (deterministic_dot): α is
// the same bits for any P. They live in SolverState::auxiliary, so a
// checkpoint holds them and a resumed run repeats the uninterrupted one.
// Their 2k vectors, with the gathered g and K̄p, are reserved up front by
// whoever opens the training rows, with α and g (training/training_method.h,
// vectors_held): k is what was asked, never shortened to fit, so α does not
// depend on --memory.
//
// The step also keeps a bound on how far the maintained g can be from
// K̂α − y (K̂: the kernel values as the products compute them, the same bits
// wherever an entry is computed or cached), accumulated from each update's
// rounding by the standard model |fl(a ∘ b) − a ∘ b| ≤ u|a ∘ b| and
// γ_k = ku/(1 − ku) for sums of k terms [Higham02 §3.1]: the block
// product's, the combination S c and K̄S c, and the additions to α and g.
// It lets a convergence claim stand without an exact product over all n²
// entries (DenseSolver::gradient_error_bound); only kernels with a constant
// diagonal s² have one, since every |K̂_ij| ≤ s² + σ² is what it rests on.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/linalg/cholesky.h"
#include "engine/solvers/solver_state.h"

#include <optional>
#include <span>
#include <vector>

namespace gpstream {

class SubspaceAcceleration {
 public:
  // Keeps the last `steps` = k ≥ 1 steps.
  SubspaceAcceleration(KernelMatrix& kernel, std::size_t steps);

  std::size_t steps() const { return steps_; }

  // The empty history of a fresh run, in state.auxiliary; with
  // `exact_gradient` (α = 0 and g = −y exactly) the error bound starts at 0.
  void start(SolverState& state, bool exact_gradient) const;

  // The bound on max_i |g_i − (K̂α − y)_i|, when the run keeps one.
  std::optional<double> gradient_error_bound(const SolverState& state) const;
  // After g was recomputed by another product (other bits than K̂'s): no bound.
  void forget_error_bound(SolverState& state) const;

  // Replaces the plain update α_B += Δα_B, g += K̄[:, B] Δα_B by the
  // subspace step, given B, Δα_B (|B| values, on every rank) and this
  // rank's rows of K̄[:, B] Δα_B. A state without a history (made for plain
  // BCD) starts an empty one; a checkpoint's must hold k steps.
  void step(SolverState& state, std::span<const std::size_t> b, std::span<const double> delta,
            std::span<const double> block_product);

 private:
  // The error bound after the step with weights `weights_` over p and `held` past steps, the history having
  // held `count` steps before it; `gradient_bound` ≥ |g_i| + |(K̄S c)_i| for every i.
  void bound_step(SolverState& state, std::span<const double> delta, std::uint64_t count, std::size_t held,
                  double gradient_bound) const;

  KernelMatrix& kernel_;
  std::size_t steps_;
  std::optional<double> entry_bound_;  // ≥ every |K̂_ij| (s² + σ², with a margin for the rounding of k)
  IncrementalCholesky factor_;
  std::vector<double> every_gradient_, every_product_;  // all n rows, when the rows are shared among ranks
  std::vector<double> right_side_, column_, weights_;
  std::vector<std::size_t> kept_, offsets_;
};

}  // namespace gpstream

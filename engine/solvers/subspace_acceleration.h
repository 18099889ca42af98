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
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/linalg/cholesky.h"
#include "engine/solvers/solver_state.h"

#include <span>
#include <vector>

namespace gpstream {

class SubspaceAcceleration {
 public:
  // Keeps the last `steps` = k ≥ 1 steps.
  SubspaceAcceleration(KernelMatrix& kernel, std::size_t steps);

  std::size_t steps() const { return steps_; }

  // The empty history of a fresh run, in state.auxiliary.
  void start(SolverState& state) const;

  // Replaces the plain update α_B += Δα_B, g += K̄[:, B] Δα_B by the
  // subspace step, given B, Δα_B (|B| values, on every rank) and this
  // rank's rows of K̄[:, B] Δα_B. A state without a history (made for plain
  // BCD) starts an empty one; a checkpoint's must hold k steps.
  void step(SolverState& state, std::span<const std::size_t> b, std::span<const double> delta,
            std::span<const double> block_product);

 private:
  KernelMatrix& kernel_;
  std::size_t steps_;
  IncrementalCholesky factor_;
  std::vector<double> every_gradient_, every_product_;  // all n rows, when the rows are shared among ranks
  std::vector<double> right_side_, column_, weights_;
  std::vector<std::size_t> kept_, offsets_;
};

}  // namespace gpstream

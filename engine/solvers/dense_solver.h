// DenseSolver: one outer iteration at a time on a SolverState, for the exact
// GP system K̄α = y. Every solver — block coordinate descent with its
// selection policies, conjugate gradient, SMO, Cholesky — implements this,
// and one driver loop (solver_driver.h) runs them all.
#pragma once

#include "engine/solvers/solver_state.h"

#include <span>
#include <string>

namespace gpstream {

class DenseSolver {
 public:
  virtual ~DenseSolver() = default;

  virtual std::string name() const = 0;
  // Sets up solver-specific state for a fresh run (α = 0, g = −y); not
  // called when a run resumes from a checkpoint.
  virtual void start(SolverState& /*state*/, std::span<const double> /*y*/) {}
  // Called after the gradient was recomputed exactly from α, so that state
  // derived from it (CG's residual norm) can follow.
  virtual void gradient_refreshed(SolverState& /*state*/) {}
  // One outer iteration: updates α, g and the solver's own state.
  virtual void iterate(SolverState& state, std::span<const double> y) = 0;
  // True for direct methods, whose one iteration is the exact solution.
  virtual bool is_direct() const { return false; }
};

}  // namespace gpstream

// DenseSolver: one outer iteration at a time on a SolverState, for the exact
// GP system K̄α = y. Every solver — block coordinate descent with its
// selection policies, conjugate gradient, SMO, Cholesky — implements this,
// and one driver loop (solver_driver.h) runs them all.
#pragma once

#include "engine/solvers/solver_state.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace gpstream {

// κ, the random candidates GBCD scores per step of its greedy selection
// [BoSminchisescu08 §3]: the default wherever gbcd's selection runs (training,
// the variance route, the all-rows gradient's probes).
inline constexpr std::size_t kGreedyCandidates = 60;

// The Vecchia factor that preconditions pcg (kernels/vecchia_factor.h): m, each row's nearest earlier rows, and
// the seed of its random order. m = 30 is the Vecchia likelihood's default too; on a 12,000-row window of the
// multiscale field, PCG took 13, 6 and 5 iterations at m = 10, 30, 60 (plain CG 409).
inline constexpr std::size_t kPreconditionerNeighbours = 30;
inline constexpr std::uint64_t kPreconditionerSeed = 1;

// The settings of a dense solver, as checkpoints keep them; the solvers
// themselves are made by name from the method registry
// (engine/training/training_method.h).
struct SolverOptions {
  std::string name = "gbcd";                   // gbcd, bcd-cyclic, bcd-gradient, cg, smo, cholesky
  std::size_t active_set_size = 500;           // m, for the BCD family [BoSminchisescu08 §3]
  std::size_t candidates = kGreedyCandidates;  // κ, for gbcd
  // Past steps each BCD iteration re-optimises along (solvers/subspace_acceleration.h); 0: plain BCD.
  std::size_t subspace_steps = 4;
  // The products of the BCD family, cg and pcg: "auto" (single precision
  // where solvers/mixed_precision.h's plan takes it, certified in double) or "double".
  std::string precision = "auto";
};

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
  // Once the kernel matrix is set up (its column cache decided), before
  // the run: fixes the precision of a fresh run's products, and returns a
  // line saying which and why for the user ("" for a solver with one
  // precision); a resumed `state` keeps its own (PrecisionRecord).
  virtual std::string plan_precision(const SolverState& /*state*/) { return ""; }
  // Whether its updates of g run on single-precision kernel entries now
  // (the state's PrecisionRecord), and the switch to double for the rest of
  // the run, when single precision's drift kept a claim from certifying.
  virtual bool single_precision(const SolverState& /*state*/) const { return false; }
  virtual void use_double_precision(SolverState& /*state*/) {}
  // A bound on max_i |g_i − (K̂α − y)_i| over all n rows — how far the
  // maintained gradient can be from the residual of the stored α, K̂ being
  // the kernel values the updates compute — accumulated from every update's
  // rounding since a fresh start; the same on every rank. nullopt when the
  // solver keeps none (or lost it at a refresh): then a convergence claim
  // costs an exact product (DenseSolverRun::certify).
  virtual std::optional<double> gradient_error_bound(const SolverState& /*state*/) const { return std::nullopt; }
};

}  // namespace gpstream

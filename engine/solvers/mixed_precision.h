// The single-precision products of the dense solvers that take them (the
// BCD family, cg and pcg: `precision` auto), decided once per fresh run:
// mixed-precision iterative refinement [CarsonHigham18] — the inner
// iteration's products on float kernel entries (Kernel::evaluate_single),
// its convergence claims proved by an exact residual in double
// (solver_driver.h, DenseSolverRun::certify), the run in double from a
// failed claim on. docs/solvers.md, "Single precision", says why each
// threshold is where it is.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/solver_state.h"

#include <string>

namespace gpstream {

struct PrecisionPlan {
  bool single = false;
  std::string line;  // which, and why, for the user (DenseSolver::plan_precision)
};

// A resumed `state` keeps its run's precision. A fresh one takes single where
// `asked` (auto), unless the column cache is on (its columns are exact and
// cost nothing to compute) or σ²/s² < 64·√n·2⁻²⁴ (the entries' rounding, of
// norm ~√n·2⁻²⁴·s² for rounding of random sign, not small against σ², K̄'s
// smallest eigenvalue: a 400-row set with σ²/s² = 5e-7 diverged). `signal`:
// the largest K_ii over all ranks; `products`: what runs in single precision.
PrecisionPlan plan_precision(const SolverState& state, bool asked, const KernelMatrix& kernel, double signal,
                             const std::string& products);

// The precision of a fresh run's start (α = 0, g = −y): `planned`, unless
// the state fell back to double before (a restart after diverging).
void start_precision(SolverState& state, bool planned);

// From here on in double (the state's PrecisionRecord), at the state's iteration.
void fall_back_to_double(SolverState& state);

// The precision the state's run takes its products in now.
inline Precision products_precision(const SolverState& state) {
  return precision_record(state).single ? Precision::single_precision : Precision::double_precision;
}

}  // namespace gpstream

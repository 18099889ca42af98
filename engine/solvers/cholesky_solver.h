// The in-memory reference: K̄ formed in full, factorised by LAPACK (dpotrf)
// and solved (dpotrs). Exact to rounding, O(n³) time and O(n²) memory, so it
// refuses problems whose K̄ does not fit the memory budget.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/dense_solver.h"

namespace gpstream {

class CholeskySolver final : public DenseSolver {
 public:
  // Holds n² doubles of the Context's memory budget while it lives; throws
  // MemoryBudgetExceeded when they do not fit.
  explicit CholeskySolver(KernelMatrix& kernel);
  std::string name() const override { return "cholesky"; }
  bool is_direct() const override { return true; }
  void iterate(SolverState& state, std::span<const double> y) override;

 private:
  KernelMatrix& kernel_;
  MemoryReservation factor_memory_;
};

// K̄ for all rows, n×n row-major (both triangles).
std::vector<double> dense_kernel_matrix(KernelMatrix& kernel);

}  // namespace gpstream

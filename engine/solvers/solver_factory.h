// The dense solvers by name, as the command line and checkpoints know them.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/dense_solver.h"

#include <memory>
#include <string>
#include <vector>

namespace gpstream {

struct SolverOptions {
  std::string name = "gbcd";          // gbcd, bcd-cyclic, bcd-gradient, cg, smo, cholesky
  std::size_t active_set_size = 500;  // m, for the BCD family (GBCD paper §3)
  std::size_t candidates = 60;        // κ, for gbcd (GBCD paper §3)
};

const std::vector<std::string>& solver_names();
// Throws naming the valid solvers for an unknown name.
std::unique_ptr<DenseSolver> make_solver(const SolverOptions& options, KernelMatrix& kernel);

// Turns the kernel-column cache of `kernel` on for a solver that reuses
// columns (the BCD family: K̄[:, B] of re-selected variables) when `mode`
// allows, with up to half of the free memory budget; results are bitwise
// the same either way. Returns what was chosen, for the user: "kernel-column
// cache off (cg does not reuse columns)", "kernel-column cache in RAM:
// 1.2 GiB, 5,100 of 30,000 columns".
std::string configure_column_cache(KernelMatrix& kernel, const std::string& solver, ColumnCacheMode mode);

}  // namespace gpstream

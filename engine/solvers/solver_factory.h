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

}  // namespace gpstream

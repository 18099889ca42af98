// The dense solvers by name, as the command line and checkpoints know them.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/dense_solver.h"

#include <functional>
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

// A run's kernel-column cache: the mode and, for a disk tier, where to open
// one — the caller's storage (a file in a directory), since the engine knows
// nothing of files. `open_disk_tier(rows)` returns a tier for columns of
// `rows` values; left empty, a run has no disk tier.
struct ColumnCacheSettings {
  ColumnCacheMode mode = ColumnCacheMode::automatic;
  std::function<std::unique_ptr<ColumnDiskTier>(std::size_t rows)> open_disk_tier;
};

// Turns the kernel-column cache of `kernel` on for a solver that reuses
// columns (the BCD family: K̄[:, B] of re-selected variables) when the mode
// allows, with up to half of the free memory budget in RAM and a disk tier
// for `disk` (and for `automatic` where reading an entry back from disk is
// measured to cost less than half of computing it); results are bitwise the
// same either way. Returns what was chosen, for the user: "kernel-column
// cache off (cg does not reuse columns)", "kernel-column cache in RAM: up to
// 5,100 of 30,000 columns".
std::string configure_column_cache(KernelMatrix& kernel, const std::string& solver,
                                   const ColumnCacheSettings& settings);

}  // namespace gpstream

// Whether and how a run uses the kernel-column cache
// (kernels/kernel_column_cache.h): decided from how the method asks for
// columns again, the mode the user chose, the memory budget and, for `auto`,
// what a kernel entry is measured to cost to compute against reading it back.
#pragma once

#include "engine/kernels/kernel_matrix.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace gpstream {

// How a method asks for the same kernel columns K(X, x_j) again.
enum class ColumnReusePattern {
  none,        // never, or within one pass only (CG, SMO, the one-pass sparse models)
  reselected,  // the BCD family: K̄[:, B] for variables selected again, in no fixed order
  basis,       // a greedy basis (sgma, mpgp, sggp): each basis column in every later step
};

struct ColumnReuse {
  std::string method;  // its name, for the messages
  ColumnReusePattern pattern = ColumnReusePattern::none;
  std::size_t basis_size = 0;  // basis: the most columns it asks for (m)
};

// A run's kernel-column cache: the mode and, for a disk tier, where to open
// one — the caller's storage (a file in a directory), since the engine knows
// nothing of files. `open_disk_tier(rows)` returns a tier for columns of
// `rows` values; left empty, a run has no disk tier.
struct ColumnCacheSettings {
  ColumnCacheMode mode = ColumnCacheMode::automatic;
  std::function<std::unique_ptr<ColumnDiskTier>(std::size_t rows)> open_disk_tier;
};

// Turns the kernel-column cache of `kernel` on for a method that reuses
// columns, when the mode allows, with up to half of the free memory budget
// in RAM; results are bitwise the same either way.
//  - reselected: a disk tier for `disk` (and for `automatic` where reading
//    an entry back from disk is measured to cost less than half of computing
//    it); `automatic` keeps the cache off where an entry is about as cheap to
//    compute as to read from RAM.
//  - basis: RAM only (every basis column is used by every later step, so
//    the cache keeps the first ones it can hold and evicts none to a disk
//    tier); `automatic` turns it on, since each column then serves hundreds
//    of passes where it serves GBCD ~20 times.
// Returns what was chosen, for the user: "kernel-column cache off (cg does
// not reuse kernel columns)", "kernel-column cache in RAM: up to 5,100 of
// 30,000 columns".
std::string configure_column_cache(KernelMatrix& kernel, const ColumnReuse& reuse, const ColumnCacheSettings& settings);

}  // namespace gpstream

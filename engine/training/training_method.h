// Every way gpstream trains a model, by the name the command line and
// checkpoints use: the dense solvers (engine/solvers) and the sparse models
// (engine/sparse). Each declares what its convergence measure and tolerance
// mean, so that no caller decides it from the name; and the sparse ones are
// made here, as solvers/solver_factory.h makes the dense ones.
#pragma once

#include "engine/kernels/column_cache_setup.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/solver_driver.h"
#include "engine/solvers/solver_state.h"
#include "engine/sparse/cholqr_selection.h"
#include "engine/sparse/online_gp.h"
#include "engine/sparse/sparse_model.h"
#include "engine/sparse/sparse_training_method.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gpstream {

// What a method's tolerance is compared with (IterativeMethod::convergence_measure).
enum class ToleranceMeaning {
  gradient_norm,      // ‖g‖∞ of the standardised system (the dense solvers, GBCD paper §3)
  relative_decrease,  // the relative decrease of the objective over an epoch (CholQR §4)
  gap,                // the gap between the bounds of the SGGP selection (Seeger et al. 2003 §3)
  none,               // runs to its basis size or through its passes (SGMA, MPGP, the online GP)
  direct,             // one or two passes, no iterations (SD, SR, Nyström)
};

struct TrainingMethod {
  const char* name;
  bool dense;                  // a solver of K̄α = y, else a sparse model
  ToleranceMeaning tolerance;  // iterative (checkpointable) unless direct
  // Vectors of n values the method holds while it runs, y included (what
  // the memory budget reserves first): α, g, y and diag K̄ for the BCD
  // family and SMO, with the cyclic order or the gradient ranking; CG's
  // direction and product instead of the diagonal. An exact gradient
  // refresh (--refresh-every) needs one more.
  std::size_t vectors;
  ColumnReusePattern column_reuse;  // what the kernel-column cache can do for it
  // Whether it runs on rows partitioned among the ranks of a distributed run
  // (its products and sums formed per rank and combined), not only in one process.
  bool runs_on_ranks;
  bool iterative() const { return tolerance != ToleranceMeaning::direct; }
};

// In the order the help lists them.
std::span<const TrainingMethod> training_methods();
// nullptr for a name that is none of them.
const TrainingMethod* find_training_method(const std::string& name);
// "sd, sr, sgma, …" of the dense or of the sparse ones.
std::string training_method_names(bool dense);

// A job's stopping rule as the user reads it, in the terms of `method`'s
// tolerance: "tol 1e-06, no iteration limit, at most 3600 s of training in all".
std::string describe_stopping_rule(const StoppingRule& rule, const std::string& method);

// The typed settings of a sparse model's training, as a checkpoint keeps them.
struct SparseMethodOptions {
  std::string name = "sggp";
  std::size_t basis_size = 1000;  // m
  std::size_t candidates = 59;    // κ of the greedy selections (Smola & Bartlett's 59)
  std::uint64_t seed = 1;
  CholQrOptions cholqr;  // its basis size and seed are the ones above
  OnlineGpOptions online;
};

// The iterative sparse model `options.name` on `state` (fresh when its
// auxiliary map is empty, else resumed from it). Throws for a direct or an
// unknown method, and MemoryBudgetExceeded when the method's workspace does
// not fit the kernel's Context.
std::unique_ptr<SparseTrainingMethod> make_sparse_training_method(const SparseMethodOptions& options,
                                                                  KernelMatrix& kernel, std::span<const double> y,
                                                                  SolverState& state);

// A direct sparse model (sd, sr, nystrom) on `basis_size` random training rows.
SparseModel fit_direct_sparse_model(const SparseMethodOptions& options, KernelMatrix& kernel,
                                    std::span<const double> y);

}  // namespace gpstream

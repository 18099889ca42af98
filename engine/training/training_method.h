// The method registry: every way gpstream trains a model — the dense
// solvers (engine/solvers) and the sparse models (engine/sparse) — declared
// once, in one entry each (training_method.cpp): its name as the command
// line, checkpoints and Python know it, its family, what its tolerance
// means, the vectors it holds, whether it reuses kernel columns and runs on
// ranks, its factory and its help line. Callers decide nothing from a
// method's name: they read its entry. Adding a method is its own files and
// one entry.
#pragma once

#include "engine/kernels/column_cache_setup.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/dense_solver.h"
#include "engine/solvers/solver_driver.h"
#include "engine/solvers/solver_state.h"
#include "engine/sparse/cholqr_selection.h"
#include "engine/sparse/greedy_basis_selection.h"
#include "engine/sparse/online_gp.h"
#include "engine/sparse/sparse_model.h"
#include "engine/sparse/sparse_training_method.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpstream {

// What a method's tolerance is compared with (IterativeMethod::convergence_measure).
enum class ToleranceMeaning {
  relative_residual,  // ‖K̄α − y‖₂/‖y‖₂ (the dense solvers; solvers/conditioning.h says what it bounds)
  relative_decrease,  // the relative decrease of the objective over an epoch (CholQR §4)
  gap,                // the gap between the bounds of the SGGP selection (Seeger et al. 2003 §3)
  none,               // runs to its basis size or through its passes (SGMA, MPGP, the online GP)
  direct,             // one or two passes, no iterations (SD, SR, Nyström)
};

// The typed settings of a sparse model's training, as a checkpoint keeps them.
struct SparseMethodOptions {
  std::string name = "sggp";
  std::size_t basis_size = 1000;              // m
  std::size_t candidates = kBasisCandidates;  // κ of the greedy selections
  std::uint64_t seed = 1;
  CholQrOptions cholqr;  // its basis size and seed are the ones above
  OnlineGpOptions online;
};

enum class MethodFamily {
  dense_solver,      // solves K̄α = y: the exact GP
  sparse_iterative,  // a sparse model fitted iteration by iteration (checkpointable)
  sparse_direct,     // a sparse model fitted in one or two passes
};

struct TrainingMethod {
  const char* name;
  const char* help;  // one line for --help and the docs: what it is, whose method
  MethodFamily family;
  ToleranceMeaning tolerance;
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
  // The factory of its family; the other two are null. A dense entry without one (auto) chooses its solver
  // when the kernel is known (choose_dense_solver).
  std::unique_ptr<DenseSolver> (*make_dense)(const SolverOptions&, KernelMatrix&) = nullptr;
  std::unique_ptr<SparseTrainingMethod> (*make_sparse)(const SparseMethodOptions&, KernelMatrix&,
                                                       std::span<const double> y, SolverState&) = nullptr;
  SparseModel (*fit_direct)(const SparseMethodOptions&, KernelMatrix&, std::span<const double> y) = nullptr;
  // The parameters of this method alone (API names, as messages write them:
  // `info_pivots`), which every other method refuses.
  std::span<const char* const> parameters = {};
  // Whether a basis that ends short of its size means the rows ran out of
  // rank — every remaining row numerically in the span of the basis (the
  // greedy and swapping selections) — rather than a rule of the method's own
  // (the online GP admits only rows novel enough).
  bool basis_ends_at_rank = false;
  // What a user should know of a finished model beyond its basis and time,
  // one line each (parameters in backticks); null: nothing more.
  std::vector<std::string> (*summarise)(const SparseModel& model, const SparseMethodOptions& options) = nullptr;

  bool dense() const { return family == MethodFamily::dense_solver; }
  bool iterative() const { return family != MethodFamily::sparse_direct; }
  // Whether reaching the tolerance ends a run (else it runs to its basis size, its passes or a limit):
  // what every front end, the training summary and `info` decide from, nothing else.
  bool stops_at_tolerance() const {
    return tolerance == ToleranceMeaning::relative_residual || tolerance == ToleranceMeaning::relative_decrease ||
           tolerance == ToleranceMeaning::gap;
  }
  // Whether the tolerance is the gap of SGGP's bounds (train --gap), not a
  // residual or a decrease (train --tol, Python's tol).
  bool stops_at_gap() const { return tolerance == ToleranceMeaning::gap; }
  // Whether its tolerance is the parameter `tol` (a residual or a decrease);
  // else it is `gap` — sggp's, and the one the methods that run to their
  // basis carry unused: what train's options and a checkpoint store it as.
  bool stops_at_tol() const { return stops_at_tolerance() && !stops_at_gap(); }
};

// The methods that take `parameter` (an API name of some entry's
// `parameters`), as "cholqr" or "sgma, mpgp"; "" for none.
std::string methods_taking(std::string_view parameter);

// The O(n) vectors `method` holds with `options`: its own (TrainingMethod::vectors,
// of this rank's rows) and those of all n rows every rank holds whole — for
// the BCD family with k past steps, D_j and K̄D_j, and g and the block
// product K̄p gathered from the ranks (in one process, K̄p and no copy of g)
// (solvers/subspace_acceleration.h).
struct HeldVectors {
  std::size_t of_own_rows = 0, of_every_row = 0;
};
HeldVectors vectors_held(const TrainingMethod& method, const SolverOptions& options);

// The tolerance a method stops at unless told otherwise (train --tol and
// --gap, Python's tol=None).
double default_tolerance(ToleranceMeaning meaning);

// In the order the help lists them.
std::span<const TrainingMethod> training_methods();
// nullptr for a name that is none of them.
const TrainingMethod* find_training_method(const std::string& name);
// The names of the dense or of the sparse ones: the schema's choices of `solver` and `model`.
std::vector<std::string> training_method_list(bool dense);
// "sd, sr, sgma, …" of the dense or of the sparse ones.
std::string training_method_names(bool dense);
// The `model` that is the exact GP, trained by the dense `solver` (the sparse models are the others).
inline constexpr std::string_view kDenseModel = "dense";
// Their help lines, one per method: "gbcd: greedy block coordinate descent …".
std::string training_method_help(bool dense);

// What `auto` trains with (its entry has no factory): pcg where the kernel is
// a sum of stationary terms — a field of several scales — on at most 3 inputs
// of more than 2,000 rows, in one process; gbcd otherwise: on a sum pcg needs
// a handful of passes over K̄ where gbcd's local blocks need many, and on
// single kernels gbcd is as fast or faster (the figures: docs/solvers.md,
// "pcg and auto"). `reason` says so, in a line for the user.
struct SolverChoice {
  const TrainingMethod& method;
  std::string reason;
};
SolverChoice choose_dense_solver(const KernelHyperparameters& kernel, std::size_t rows, std::size_t inputs,
                                 bool distributed);

// SolverOptions::precision: true for "auto" (the BCD family's products in
// single precision, certified in double), false for "double"; throws for
// any other value, naming the choices.
bool single_precision_wanted(const std::string& precision);

// The dense solver `options.name`. Throws naming the valid solvers for an
// unknown name, and for a solver that does not run on ranks when `kernel` is distributed.
std::unique_ptr<DenseSolver> make_solver(const SolverOptions& options, KernelMatrix& kernel);

// A job's stopping rule as the user reads it, in the terms of `method`'s
// tolerance: "tol 1e-06, no iteration limit, at most 3600 s of training in all".
std::string describe_stopping_rule(const StoppingRule& rule, const std::string& method);

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

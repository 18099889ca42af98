// SolverState: everything a dense solver run is, and exactly what a
// checkpoint holds, so that a resumed run repeats the uninterrupted one.
//
// The problem is K̄α = y, i.e. the minimiser of f(α) = ½ αᵀK̄α − yᵀα (GBCD
// paper eq. 3), whose gradient g = K̄α − y is kept up to date by every solver.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace gpstream {

struct SolverState {
  // α, n values (empty for a sparse basis selection, whose state is all in `auxiliary`)
  std::vector<double> alpha;
  std::vector<double> gradient;  // g = K̄α − y, n values
  std::uint64_t iteration = 0;   // outer iterations completed
  std::uint64_t kernel_evaluations = 0;
  double elapsed_seconds = 0.0;  // solver time over all runs of this problem
  std::mt19937_64 random;        // every random choice of a solver comes from here
  // Solver-specific state that must survive a restart (CG's search
  // direction, the cyclic cursor), by name.
  std::map<std::string, std::vector<double>> auxiliary;
};

// α = 0, g = −y (Algorithm 1, step 1).
SolverState initial_solver_state(std::span<const double> y, std::uint64_t seed);

// f(α) = ½ αᵀK̄α − yᵀα = ½ αᵀ(g − y), from the maintained gradient in O(n).
double objective(const SolverState& state, std::span<const double> y);
// ‖g‖∞.
double gradient_max_norm(const SolverState& state);

// How a run's products went (Precision, kernels/kernel.h), kept in
// state.auxiliary so that a resumed run continues as the interrupted one
// would and the model records it: single precision or double, the exact
// residuals in double that checked single precision's claims (the
// refinements of mixed-precision iterative refinement), and the iteration
// at which the run fell back to double (0: it did not).
struct PrecisionRecord {
  bool single = false;
  std::uint64_t exact_residuals = 0;
  std::uint64_t fell_back_at = 0;
};
PrecisionRecord precision_record(const SolverState& state);  // {} (double) where the state has none
bool has_precision_record(const SolverState& state);
void set_precision_record(SolverState& state, const PrecisionRecord& record);
// "double", "single", or "single, then double from iteration N".
std::string precision_name(const PrecisionRecord& record);
// That name with the exact residuals: "single, 1 exact residual in double".
std::string describe_precision(const std::string& precision_name, std::uint64_t exact_residuals);

// A checkpointed entry of state.auxiliary, or an Error naming `owner` (the
// method whose state it is) when the checkpoint lacks it.
const std::vector<double>& saved_entry(const SolverState& state, const std::string& name, const char* owner);
// A checkpointed list of row indices below n (stored as doubles), checked.
std::vector<std::size_t> saved_row_indices(const SolverState& state, const std::string& name, std::size_t n,
                                           const char* owner);

// The RNG as text (its standard stream form) for checkpoints, and back.
std::string serialise_random(const std::mt19937_64& random);
std::mt19937_64 deserialise_random(const std::string& text);

// Σ a_i b_i summed in a fixed order whatever the thread count, so that a
// solver's arithmetic is reproducible.
double deterministic_dot(std::span<const double> a, std::span<const double> b);

}  // namespace gpstream

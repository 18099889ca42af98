// Greedy selection of a sparse basis B for the subset-of-regressors model
// f(x) = Σ_{i∈B} β_i k(x, x_i), one basis row per iteration, with the basis
// criterion as a policy of one selection loop (in the way ensmallen's
// coordinate descent takes its descent policies):
//
//  - sgma: the candidate that most reduces tr(K − K_NB K_B⁻¹ K_BN), the trace
//    of the Nyström residual (Smola & Schölkopf 2000; NOTES.md "SGMA").
//  - mpgp: the candidate whose own coefficient, optimised with β fixed,
//    most decreases the SR objective (Keerthi & Chu 2006, matching pursuit).
//  - sggp: the candidate that most decreases Q(α) with all of β re-fitted
//    (Smola & Bartlett 2001 §4, eq. 12), and a second greedy basis B* for
//    the dual Q*(α*) (eq. 6), whose sum bounds the gap (eq. 7–8).
//
// Every criterion draws κ = 59 random candidates among the rows not yet
// selected (Smola & Schölkopf's "59 for 95 % confidence of the best 5 %").
// Each iteration is one streamed pass over the n training rows that forms
// K_NBᵀ C for the candidates C (m×κ, one GEMM per tile) — memory O(m² + m·κ
// + tile·m), never the n×m matrix K_NB. The SR system A = σ²K_B + K_NBᵀK_NB
// is kept whitened, as sparse_fit.h fits it: with L_K = chol(K_B + jitter·I)
// and Φ = K_NB L_K⁻ᵀ, A = L_K S L_Kᵀ with S = σ²I + ΦᵀΦ = L_S L_Sᵀ (eigenvalues
// ≥ σ², where A's condition number is κ(K_B)²); z = L_S⁻¹Φᵀy, β = L_K⁻ᵀL_S⁻ᵀz
// and the SR objective is Q = ½βᵀAβ − yᵀK_NBβ = −½‖z‖². The pass forms each
// candidate's residual feature R_j = K_Nj − Φu_j (u_j = L_K⁻¹k_Bj) row by row,
// so its whitened feature φ_j = R_j/√r_j (r_j its Nyström residual variance)
// keeps its digits; adding j appends l = L_S⁻¹Φᵀφ_j, p² = S_jj − ‖l‖² and
// z_j = (φ_jᵀy − lᵀz)/p, which decreases Q by ½ z_j² — sggp's score. The basis
// stops only where candidates' r_j are lost (basis_resolution's floor), not
// where A's pivots are, which stopped it short of the kernel's rank.
//
// Distributed (rows partitioned among ranks): every rank draws the same
// candidates, collects their rows (and y) from their owners, and the pass's
// sums are all-reduced (kernels/cross_products.h), so every rank takes
// the same step; y is this rank's rows.
//
// The run is an IterativeMethod: the solver driver stops it (basis size
// reached, gap below the tolerance, time, Ctrl-C) and checkpoints its
// SolverState, whose `auxiliary` map holds the basis, the factors and z.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/linalg/cholesky.h"
#include "engine/sparse/sparse_training_method.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpstream {

enum class BasisCriterion { sgma, mpgp, sggp };
std::string basis_criterion_name(BasisCriterion criterion);

// κ of the sparse greedy selections: Smola & Bartlett's 59 random
// candidates per step [SmolaBartlett01] (the best of 59 is in the top 5 %
// with probability 0.95).
inline constexpr std::size_t kBasisCandidates = 59;

struct GreedyBasisOptions {
  BasisCriterion criterion = BasisCriterion::sggp;
  std::size_t basis_size = 500;               // m, the most rows selected
  std::size_t candidates = kBasisCandidates;  // κ, random candidates per step
};

class GreedyBasisSelection final : public SparseTrainingMethod {
 public:
  // `kernel` streams the (standardised) training rows; y are their targets.
  // A state with an empty `auxiliary` starts a fresh selection; otherwise
  // the selection resumes from it.
  GreedyBasisSelection(KernelMatrix& kernel, std::span<const double> y, const GreedyBasisOptions& options,
                       SolverState& state);

  void iterate() override;
  RunCounters counters() const override;
  void set_counters(const RunCounters& counters) override;
  // The SR objective Q = −½‖z‖² (Smola & Bartlett eq. 4 restricted to B).
  double objective() const override { return objective_; }
  // sggp: the gap (NOTES.md); the others: tr(K − K̃)/tr(K), for display (they stop at the basis size).
  double convergence_measure() const override;
  // Only sggp stops at a tolerance (its gap); sgma and mpgp run to the basis size.
  bool converges() const override { return options_.criterion == BasisCriterion::sggp; }
  std::uint64_t planned_iterations() const override { return options_.basis_size; }
  bool complete() const override;

  std::size_t basis_size() const { return basis_.size(); }
  // β = L_K⁻ᵀ L_S⁻ᵀ z, as maintained by the incremental factors.
  const std::vector<double>& weights() const { return beta_; }
  double gap() const;                                        // sggp only
  double dual_objective() const { return dual_objective_; }  // Q*(α*) = −½‖z*‖²
  double trace_residual() const { return trace_residual_; }  // tr(K − K_NB K_B⁻¹ K_BN)

  // Writes the selection into state.auxiliary (for a checkpoint).
  void store_state() override;
  // The fitted model: the basis, β re-fitted in the whitened form of
  // sparse_fit.h (one more streamed pass), and the variance — projected
  // process for sgma and mpgp, the exact GP on the basis for sggp (eq. 10 with α* on B).
  SparseModel model() override;
  std::string measure_name() const override;

 private:
  // `count` distinct random rows not marked in `taken` (which marks `taken_count`), or all the rest.
  void draw(std::vector<std::size_t>& chosen, const std::vector<char>& taken, std::size_t taken_count,
            std::size_t count);
  void primal_step();
  // What a candidate brings to the basis: its row, its columns of S (whitened: Φᵀφ_j, and S_jj = σ² + ‖φ_j‖²)
  // and of K_B (and K_jj + jitter), its z component and how much it lowers tr(K − K̃).
  struct BasisCandidate {
    std::size_t row;
    const double* x;
    std::vector<double> whitened_column, kernel_column;
    double s_jj, kernel_diagonal, z, trace_reduction;
  };
  void add_to_basis(const BasisCandidate& candidate);
  // β and the objective from z and the two factors.
  void update_weights();
  void dual_step();

  KernelMatrix& kernel_;
  std::span<const double> y_;
  GreedyBasisOptions options_;
  SolverState& state_;
  std::size_t d_;
  double noise_;
  double half_squared_norm_y_ = 0.0;

  std::vector<std::size_t> basis_;
  std::vector<char> in_basis_;
  std::vector<double> basis_rows_;  // m×d
  IncrementalCholesky whitened_;  // L_S with L_S L_Sᵀ = S = σ²I + ΦᵀΦ, Φ = K_NB L_K⁻ᵀ (the SR system, whitened)
  IncrementalCholesky kernel_factor_;  // L_K = chol(K_B + jitter·I)
  std::vector<double> z_;              // L_S⁻¹ Φᵀy
  std::vector<double> beta_;           // L_K⁻ᵀ L_S⁻ᵀ z
  double objective_ = 0.0;
  double trace_kernel_ = 0.0;
  double trace_residual_ = 0.0;
  bool exhausted_ = false;           // no candidate can be added
  std::size_t fruitless_steps_ = 0;  // consecutive steps without an acceptable candidate

  // sggp's dual: α* on B*, with chol(K̄_{B*B*}) and z* = L*⁻¹ y_{B*}.
  std::vector<std::size_t> dual_basis_;
  std::vector<char> in_dual_basis_;
  std::vector<double> dual_rows_;
  IncrementalCholesky dual_factor_;
  std::vector<double> dual_z_;
  double dual_objective_ = 0.0;
};

}  // namespace gpstream

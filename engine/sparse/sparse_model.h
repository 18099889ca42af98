// SparseModel: the product of training a sparse GP approximation — a mean
// that is a weighted sum of kernels on a small basis, and a predictive
// variance in one of the closed forms below. Every sparse model of gpstream
// (subset of data, subset of regressors with any basis selection, sparse
// greedy GP, transductive SR) is one of these; the reduced-rank (Nyström)
// model additionally keeps weights over all n training rows.
#pragma once

#include "engine/prediction/model_description.h"

#include <map>
#include <string>
#include <vector>

namespace gpstream {

// How the latent (noise-free) variance of f(x*) is computed, with k_V =
// k(V, x*) for the variance rows V and F = L Lᵀ the stored factor:
enum class SparseVarianceForm {
  // K** − k_Bᵀ F⁻¹ k_B with F = K_BB + σ²I: the exact GP on the basis rows
  // (subset of data; the sparse greedy GP's error bars, Smola & Bartlett 2001
  // eq. 10 with α* restricted to the basis — an upper bound on the exact variance).
  exact_on_subset,
  // K** − k_Bᵀ K_B⁻¹ k_B + σ² k_Bᵀ A⁻¹ k_B with A = σ² K_B + K_NBᵀ K_NB: the
  // projected-process (DTC) variance of the SR model (NOTES.md "SR"). The SR
  // term alone falls to 0 away from the basis; the Nyström residual
  // K** − k_Bᵀ K_B⁻¹ k_B restores the prior there, and with B = all rows the
  // sum is the exact GP variance. Stored whitened: L_K = chol(K_B) is
  // basis_factor, F = σ²I + L_K⁻¹K_NBᵀK_NB L_K⁻ᵀ (A = L_K F L_Kᵀ), so with
  // u = L_K⁻¹k_B the variance is K** − ‖u‖² + σ²‖L⁻¹u‖².
  projected_process,
  // K** − σ⁻² (‖k_N‖² − (K_BN k_N)ᵀ A⁻¹ K_BN k_N), with k_N = k(X, x*) over all
  // n training rows: k*ᵀ(K̃ + σ²I)⁻¹k* by Woodbury (Schwaighofer & Tresp
  // 2003 §2.1, reduced-rank approximation); factors as projected_process.
  reduced_rank,
  // K** + k_Bᵀ C k_B with C the online GP's posterior correction (Csató &
  // Opper 2002, NOTES.md "Online GP"; negative semi-definite): the one form
  // whose variance_factor holds a matrix itself, C (m×m, full, symmetric),
  // not a Cholesky factor — C has no factor of its own to keep.
  online_posterior,
};

std::string sparse_variance_form_name(SparseVarianceForm form);
SparseVarianceForm parse_sparse_variance_form(const std::string& name);

struct SparseModel : ModelDescription {
  std::string method;  // sd, sr, sgma, mpgp, sggp, nystrom, cholqr, online, srm-trans

  // mean(x*) = k_B(x*)ᵀ β (all models but reduced_rank, whose mean is k_N(x*)ᵀ w).
  std::vector<std::size_t> basis_indices;  // training rows of the basis (empty for srm-trans)
  std::vector<double> basis_rows;          // m×d, standardised inputs
  std::vector<double> weights;             // β, m values (standardised targets)

  SparseVarianceForm variance_form = SparseVarianceForm::projected_process;
  std::vector<double> variance_factor;  // L, lower triangle, row-major, of the form's F (m×m)
  std::vector<double> basis_factor;     // projected_process, reduced_rank: chol(K_B + jitter·I) (m×m)

  // reduced_rank only: weights w over all n training rows, which prediction streams.
  std::vector<double> training_weights;

  // What the method reports about itself (final gap, max |w|, trace residual, …), by name.
  std::map<std::string, double> diagnostics;

  std::size_t basis_size() const { return weights.size(); }
};

// What a basis resolves:
// - a basis row is kept only if its Nyström residual K_jj − k_BjᵀK_B⁻¹k_Bj
//   exceeds independence_floor·K_jj (a fraction): rows (nearly) in the span
//   of the others add nothing to the model and would make the SR system
//   singular to working precision (smooth kernels with long lengthscales
//   have a low numerical rank); it keeps cond(K_B) ≲ m / floor;
// - K_B's diagonal carries `jitter` (a variance) before it is factorised:
//   enough to factor a basis through rounding, far below any variance
//   reported.
// Both follow the noise: a row whose residual is far below σ² cannot move a
// prediction by more than the noise does, so the floor is 1e-3·σ²/s² —
// capped at 1e-6 (the reference sets, σ²/s² ≥ 4e-3, are all at the cap) and
// never below 1e-9, where rounding in ‖L_K⁻¹k_Bj‖² (≈ eps·√(m/floor)·s²
// with cond(L_K) ≤ √(m/floor)) would reach the floor itself. The jitter is
// 1e-2 of the floor, times s². With s² = 1000 and σ² = 1e-6 the old fixed fractions
// (1e-6, 1e-8) put the floor at 1000σ² and the jitter at 10σ²; now they are
// σ² and 0.01σ².
struct BasisResolution {
  double independence_floor = 1e-6;  // a fraction of K_jj
  double jitter = 1e-8;              // a variance: 1e-2·floor·s²
};
BasisResolution basis_resolution(const KernelHyperparameters& hyperparameters);

// Rejects a model whose arrays do not fit each other (from a file, say),
// naming `context`.
void validate_sparse_model(const SparseModel& model, const std::string& context);

}  // namespace gpstream

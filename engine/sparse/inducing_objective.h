// The objectives CholQR minimises over the inducing set I and the
// hyperparameters θ (Cao et al. 2015 §2, eqs. 4–5), for the projected-process
// model with the Nyström approximation Q̂ = K_NI K_I⁻¹ K_IN:
//   E_D = yᵀ(Q̂ + σ²I)⁻¹y,  E_C = log |Q̂ + σ²I|,  E_V = σ⁻² tr(K − Q̂),
//   mle: F = (E_D + E_C)/2 + (n/2) log 2π   (projected-process likelihood),
//   var: F = (E_D + E_C + E_V)/2 + (n/2) log 2π   (Titsias's variational free energy).
// The (n/2) log 2π makes F comparable with the exact negative log marginal
// likelihood, which both equal when I is every training row.
#pragma once

#include "engine/kernels/kernel.h"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace gpstream {

enum class InducingObjective { variational, likelihood };
std::string inducing_objective_name(InducingObjective objective);  // "var", "mle"
InducingObjective parse_inducing_objective(const std::string& name);

struct InducingObjectiveValue {
  double value = 0.0;
  std::vector<double> gradient;  // ∂F/∂θ in the order of log_parameters() (noise last); empty unless asked for
};

// F and ∂F/∂θ for the inducing rows `inducing` of x (n×d, standardised) with
// targets y, in O(nm² + nmd) time and two n×m matrices. Computed in the
// whitened form Φ = K_NI L_I⁻ᵀ (L_I = chol(K_I)), S = σ²I + ΦᵀΦ, which the
// CholQR factors equal up to rotation (L = Φ, R = chol(S)ᵀ):
//   E_D = σ⁻²(‖y‖² − ‖L_S⁻¹Φᵀy‖²), E_C = (n − m) log σ² + log |S|,
//   E_V = σ⁻²(Σ k_ii − ‖Φ‖²).
// The gradient contracts ∂K_NI/∂θ, ∂K_I/∂θ and ∂k_ii/∂θ with
//   W_NI = [Φ(S⁻¹ − vσ⁻²I) − α aᵀ] L_I⁻¹,  W_I = −½ L_I⁻ᵀ [I − σ²S⁻¹ − aaᵀ − vσ⁻²ΦᵀΦ] L_I⁻¹,
//   w_ii = ½vσ⁻²  (v = 1 for var, 0 for mle),
// with α = (Q̂ + σ²I)⁻¹y = σ⁻²(y − ΦS⁻¹Φᵀy) and a = Φᵀα; and
//   ∂F/∂σ² = ½[σ⁻²(n − m) + tr S⁻¹ − ‖α‖² − vσ⁻⁴ tr(K − Q̂)].
// (From dF = ½ tr((Σ⁻¹ − ααᵀ − vσ⁻²I) dQ̂) + …, Σ = Q̂ + σ²I.)
InducingObjectiveValue evaluate_inducing_objective(const KernelHyperparameters& hyperparameters, const double* x,
                                                   std::size_t n, std::size_t d, std::span<const double> y,
                                                   std::span<const std::size_t> inducing, InducingObjective objective,
                                                   bool with_gradient);

// chol(K_I) (m×m row-major lower triangle) of the rows `rows` (m×d prepared
// by `kernel`): exact when K_I is numerically positive definite, otherwise
// with basis_resolution(h).jitter on the diagonal; throws naming `what` when even that fails.
std::vector<double> inducing_kernel_factor(const Kernel& kernel, const PreparedRows& rows, const char* what);

}  // namespace gpstream

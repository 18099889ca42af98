// The negative log marginal likelihood of the exact GP and its gradient
// (Rasmussen & Williams 2006, eqs. 2.30 and 5.9), the objective of
// hyperparameter learning on a subset of rows (GBCD paper §3: 2,000 rows):
//   −log p(y | X, θ) = ½ yᵀK̄⁻¹y + ½ log |K̄| + (n/2) log 2π
//   ∂/∂θ_j          = −½ tr((ααᵀ − K̄⁻¹) ∂K̄/∂θ_j),   α = K̄⁻¹y
// with θ the logarithms of the lengthscales, the signal variance s² and the
// noise variance σ², so that every value stays positive.
#pragma once

#include "engine/kernels/kernel.h"

#include <cstddef>
#include <span>
#include <vector>

namespace gpstream {

// θ = [log ℓ_1 … log ℓ_L, log s², log σ²] and back.
std::vector<double> log_parameters(const KernelHyperparameters& hyperparameters);
// [ℓ_1 … ℓ_L, s², σ²] as they are.
std::vector<double> hyperparameter_values(const KernelHyperparameters& hyperparameters);
KernelHyperparameters from_log_parameters(KernelType type, std::span<const double> theta);

struct MarginalLikelihood {
  double value = 0.0;            // −log p(y | X, θ)
  std::vector<double> gradient;  // ∂/∂θ, in the order of log_parameters()
};

// Over n rows x (n×d, row-major, standardised) with targets y. O(n³) time and
// O(n²) memory: meant for subsets of a few thousand rows. Throws when K̄ is
// not numerically positive definite, with advice.
MarginalLikelihood negative_log_marginal_likelihood(const KernelHyperparameters& hyperparameters, const double* x,
                                                    std::span<const double> y, std::size_t d);

}  // namespace gpstream

// The negative log marginal likelihood of the exact GP and its gradient
// (Rasmussen & Williams 2006, eqs. 2.30 and 5.9), the objective of
// hyperparameter learning on a subset of rows (GBCD paper §3: 2,000 rows):
//   −log p(y | X, θ) = ½ yᵀK̄⁻¹y + ½ log |K̄| + (n/2) log 2π
//   ∂/∂θ_j          = −½ tr((ααᵀ − K̄⁻¹) ∂K̄/∂θ_j),   α = K̄⁻¹y
// with θ the logarithms of the lengthscales, the signal variance s² and the
// noise variance σ², so that every value stays positive.
#pragma once

#include "engine/data/mean_function.h"
#include "engine/kernels/kernel.h"
#include "engine/kernels/kernel_parameters.h"

#include <cstddef>
#include <span>
#include <vector>

namespace gpstream {

// θ = log_parameters(h) (kernels/kernel_parameters.h): the logarithms of
// the kernel's values in its layout's order.

struct MarginalLikelihood {
  double value = 0.0;            // −log p(y | X, θ, β)
  std::vector<double> gradient;  // ∂/∂θ in the order of log_parameters(), then ∂/∂β (one per mean basis function)
  // The expected Fisher information in the same coordinates (P×P, row-major; P = gradient.size()) where the
  // likelihood computes it (Likelihood::evaluate_with_information), else empty.
  std::vector<double> information;
};

// −log p(y | X, θ, β) in some form — exact on a subset, or a Vecchia
// approximation over all rows (vecchia_likelihood.h) — with a prior mean
// m(x) = h(x)ᵀβ whose residual r = y − Hβ the GP models: what a
// hyperparameter search minimises, over θ and β jointly (at the optimum β
// is the generalised least-squares estimate).
class Likelihood {
 public:
  virtual ~Likelihood() = default;
  // Throws when K̄ (or a conditioning block of it) is not numerically positive definite.
  virtual MarginalLikelihood evaluate(const KernelHyperparameters& kernel, std::span<const double> beta) = 0;
  // The mean's basis (its coefficients unused): how many β there are.
  virtual const MeanFunction& mean() const = 0;
  // Whether evaluate_with_information() gives the Fisher information (the Vecchia likelihood's: Fisher scoring,
  // hyperparameter_search.h's fisher_scoring_from).
  virtual bool has_information() const { return false; }
  // evaluate(), and its expected Fisher information.
  virtual MarginalLikelihood evaluate_with_information(const KernelHyperparameters& kernel, std::span<const double> beta);
};

// The exact likelihood of n rows x (n×d, row-major, standardised) with
// targets y. O(n³) time and O(n²) memory: meant for subsets of a few
// thousand rows. Keeps pointers to x and y.
class ExactLikelihood final : public Likelihood {
 public:
  ExactLikelihood(const double* x, std::span<const double> y, std::size_t d, MeanFunction mean = {});
  MarginalLikelihood evaluate(const KernelHyperparameters& kernel, std::span<const double> beta) override;
  const MeanFunction& mean() const override { return mean_; }

 private:
  const double* x_;
  std::span<const double> y_;
  std::size_t d_;
  MeanFunction mean_;
  std::vector<double> basis_;  // H, n×p
};

// The exact likelihood with a zero mean.
MarginalLikelihood negative_log_marginal_likelihood(const KernelHyperparameters& hyperparameters, const double* x,
                                                    std::span<const double> y, std::size_t d);

}  // namespace gpstream

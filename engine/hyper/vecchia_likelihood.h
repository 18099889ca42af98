// The Vecchia approximation of the marginal likelihood over all n rows
// [Vecchia88; Datta16 NNGP; Guinness18; Katzfuss21], the objective of
// hyperparameter learning on every row (HYPERPARAMETERS-AT-SCALE.md,
// "Vecchia / nearest-neighbour likelihoods"):
//
//   p(y) ≈ Πᵢ p(yᵢ | y_N(i)),   N(i) = the m rows nearest to row i among
//   those before it in a random order, in ARD-scaled inputs x_l/ℓ_l,
//
// each factor a Gaussian conditional of a (|N(i)| + 1)-row block of K̄:
// O(n m³) per evaluation, no n×n matrix, exact at m = n − 1. A random order
// is nearly as good as the maximin order and far better than the file's
// (Guinness 2018, §4). With J = N(i) ∪ {i} (i last), A = K̄_JJ = L Lᵀ,
// r = y − Hβ, z = L⁻¹ r_J, u = the last row of L⁻¹ and a = A⁻¹ r_J:
//
//   −log p(yᵢ | y_N(i)) = log L_JJ + ½ z_J² + ½ log 2π
//   ∂/∂θ = Σ_jk W_jk ∂A_jk/∂θ,  W = ½[(1 − z_J²) uuᵀ − z_J (buᵀ + ubᵀ)],  b = a − z_J u
//   ∂/∂β = −z_J H_Jᵀ u
//
// (A⁻¹ − A_NN⁻¹ padded = uuᵀ, and a − a_N padded = z_J u: every factor's
// gradient from two triangular solves, no inverse.)
//
// The expected Fisher information [Guinness21 §3] is the joint's less the
// neighbours': I_jk = Σᵢ ½ tr(A⁻¹∂_jA A⁻¹∂_kA) − ½ tr(A_NN⁻¹∂_jA_NN A_NN⁻¹∂_kA_NN).
// With B_p = L⁻¹ ∂_pA L⁻ᵀ, whose leading block is the neighbours' own (L's
// leading block is A_NN's factor), only B_p's last row c_p = L⁻¹(∂_pA u)
// survives the difference: I_jk = Σᵢ c_jᵀc_k − ½ c_j,J c_k,J; for β,
// I_ββ = Σᵢ (H_Jᵀu)(H_Jᵀu)ᵀ and the cross terms vanish. ∂_pA u comes from
// the kernel's gradient contraction one row of A at a time, so the
// information costs about a gradient's work again, for every kernel. The rows' terms are
// summed in fixed chunks, in chunk order, whatever the thread count or the
// number of ranks, so that an evaluation gives the same bits everywhere.
//
// Rows and targets are held in memory (n(d + 2 + p) doubles, and n·m
// neighbour indices), reserved in the Context's budget; a distributed run
// gives each rank its chunks of the rows' terms and adds them over the ranks.
#pragma once

#include "engine/core/context.h"
#include "engine/data/conditioning_sets.h"
#include "engine/hyper/marginal_likelihood.h"

#include <cstdint>
#include <span>
#include <vector>

namespace gpstream {

struct VecchiaOptions {
  std::size_t neighbours = 30;  // m
  std::uint64_t seed = 1;       // of the random order
};

class VecchiaLikelihood final : public Likelihood {
 public:
  // x: n×d standardised rows (all n, on every rank), y their targets; copied in a random order.
  VecchiaLikelihood(Context& context, const double* x, std::span<const double> y, std::size_t d, MeanFunction mean,
                    const VecchiaOptions& options);

  // Recomputes every row's conditioning set for these lengthscales (ARD
  // scaling); `evaluate` uses the sets of the last call. Returns the share
  // of rows whose set changed.
  double condition_on(const KernelHyperparameters& kernel);
  MarginalLikelihood evaluate(const KernelHyperparameters& kernel, std::span<const double> beta) override;
  const MeanFunction& mean() const override { return mean_; }
  bool has_information() const override { return true; }
  MarginalLikelihood evaluate_with_information(const KernelHyperparameters& kernel,
                                               std::span<const double> beta) override;

  std::size_t rows() const { return n_; }
  std::size_t neighbours() const { return sets_.neighbours(); }

 private:
  MarginalLikelihood evaluate(const KernelHyperparameters& kernel, std::span<const double> beta, bool information);

  Context& context_;
  std::size_t n_, d_;
  MeanFunction mean_;
  MemoryReservation memory_;
  ConditioningSets sets_;
  std::vector<double> x_, y_, basis_;  // in the sets' random order: n×d, n, n×p
};

}  // namespace gpstream

// Prior samples of a stationary GP by random Fourier features [RahimiRecht07]:
//
//   f(x) = Σ_terms s √(2/F) Σ_f w_f cos(ω_fᵀx + b_f)
//
// with ω_f drawn from the kernel's spectral density — ω = g ⊘ ℓ for the
// squared exponential, and for Matérn ν a multivariate t of 2ν degrees of
// freedom, ω = (g ⊘ ℓ)·√(2ν/u) with u ~ χ²_{2ν} — b_f uniform on [0, 2π),
// w_f and g standard normal, s² the term's signal variance. Over the
// draws, f has covariance k exactly (Bochner's theorem): an estimator that
// is linear in f fᵀ is unbiased with any number F of features. The base
// draws (g, u, b, w) are made once from the seed and the hyperparameters
// only scale them, so that f is a smooth function of θ — what a search
// that compares estimates at nearby θ needs (hyper/stochastic_gradient.h).
#pragma once

#include "engine/kernels/kernel.h"

#include <cstdint>
#include <vector>

namespace gpstream {

class RandomFeatureSample {
 public:
  // A sample for kernels of the shape of `shape` (its types and lengthscale
  // counts; sums too) on d inputs; throws for a kernel that is not stationary.
  RandomFeatureSample(const KernelHyperparameters& shape, std::size_t d, std::size_t features, std::uint64_t seed);

  // out[i] = f(x_i) for `count` rows x (count×d, row-major), under the
  // values of `kernel` (of the shape given; its noise unused).
  void evaluate(const KernelHyperparameters& kernel, const double* x, std::size_t count, double* out) const;

 private:
  struct Term {
    std::vector<double> directions;  // F×d: g·√(2ν/u), or g for the squared exponential
    std::vector<double> phases;      // F: b
    std::vector<double> weights;     // F: w
  };
  std::vector<Term> terms_;
  std::size_t d_, features_;
};

}  // namespace gpstream

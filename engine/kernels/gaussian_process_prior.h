// GaussianProcessPrior: what a model assumes before it sees the targets —
//   y = f(x) + ε,  f ~ GP(m, k),  ε ~ N(0, σ²)   [RW06 §2.2, §2.7] —
// the covariance k and the noise σ² (KernelHyperparameters) and the mean m
// (MeanFunction), all in the standardised units of the Standardisation a
// model keeps beside it (engine/data/standardisation.h). A model file, a
// hyperparameter file and a training run each hold one prior and one
// standardisation; the prior is what learning chooses, the standardisation
// what the dataset's statistics fix.
#pragma once

#include "engine/data/mean_function.h"
#include "engine/kernels/kernel.h"

namespace gpstream {

struct GaussianProcessPrior {
  KernelHyperparameters kernel;  // k (its terms and s²) and σ²
  MeanFunction mean;             // m(x) = h(x)ᵀβ of the standardised inputs; empty: m = 0
};

}  // namespace gpstream

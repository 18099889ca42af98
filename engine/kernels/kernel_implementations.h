// The kernel families behind make_kernel() (kernel.cpp), which validates
// the hyperparameters before calling these.
#pragma once

#include "engine/kernels/kernel.h"

#include <memory>

namespace gpstream::detail {

// rbf, se and the Matérn kernels.
std::unique_ptr<Kernel> make_stationary_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension);
// hik.
std::unique_ptr<Kernel> make_histogram_intersection_kernel(const KernelHyperparameters& hyperparameters,
                                                           std::size_t dimension);

// k₁ + k₂ + … of stationary kernels (KernelHyperparameters::added).
std::unique_ptr<Kernel> make_sum_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension);

}  // namespace gpstream::detail

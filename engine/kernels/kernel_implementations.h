// The kernel registry: one KernelFamily per line of
// families/kernel_families.def, each defined in its own file in families/
// — its names, its lengthscales and how it is made. make_kernel() validates
// the hyperparameters against the entry before making the kernel. A
// stationary family is a StationaryProfile (its vectorised row pass and
// slope: families/stationary_family.h); any other brings its own Kernel.
#pragma once

#include "engine/kernels/kernel.h"

#include <array>
#include <cstddef>
#include <memory>
#include <span>

namespace gpstream::detail {

// A stationary family: its vectorised row pass (the values k from cross
// terms), its slope h(D) = −2 dk/dD from k and D (what the gradient of every
// stationary family needs), how a lengthscale scales the inputs, and the
// smoothness ν of its spectral density (random features).
// Each function takes the family's own parameters (KernelTerm::family_parameters; unread by most).
struct StationaryProfile {
  using Parameters = const double*;
  void (*row)(double*, std::size_t, double, const double*, double, Parameters);
  void (*rounded_row)(double*, std::size_t, double, const double*, double, Parameters);  // the same in single precision
  void (*single_row)(float* distances, std::size_t count, double signal_variance, Parameters);  // k(D) in place
  void (*slope)(const double* value, const double* distance, double* slope, std::size_t count, Parameters);
  // ∂k/∂log θ_f for each own parameter f: out[f·count + j] (null for a family without any).
  void (*parameter_slopes)(const double* value, const double* distance, double* out, std::size_t count, Parameters);
  bool gamma_scaling;  // D = Σ γ_l (x_l − z_l)², γ = 1/(2ℓ²) (the squared exponential), else D = r²
  double smoothness;   // Matérn ν; infinity for the squared exponential; NaN: no random-feature sampler
};

// How many lengthscales a kernel takes on d inputs.
enum class Lengthscales {
  per_input,  // ARD: d, or one for all
  one,        // isotropic: exactly one
  none,
};

struct KernelFamily {
  std::array<const char*, 2> names;  // the canonical one, then an alias (nullptr: none)
  Lengthscales lengthscales;
  const StationaryProfile* stationary;  // made by make_stationary_kernel; null: by `make`
  std::unique_ptr<Kernel> (*make)(const KernelHyperparameters& hyperparameters, std::size_t dimension);
  std::span<const FamilyParameterSpec> parameters = {};  // its own parameters beyond ℓ and s² (kernel.h)
};

// The entries, in KernelType's order.
std::span<const KernelFamily* const> kernel_families();
const KernelFamily& kernel_family(KernelType type);

// A stationary kernel of `profile` (stationary_kernel.cpp).
std::unique_ptr<Kernel> make_stationary_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension,
                                               const StationaryProfile& profile);

// k₁ + k₂ + … of stationary kernels (KernelHyperparameters::added; sum_kernel.cpp).
std::unique_ptr<Kernel> make_sum_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension);

}  // namespace gpstream::detail

// The squared exponential k = s² exp(−r²/2) [RW06 eq. 4.9]: "rbf" (alias
// "se-ard") with one lengthscale per input (ARD) or one for all, and "se"
// with exactly one. The GBCD paper writes it with γ_l = 1/(2ℓ_l²) [BoSminchisescu08 §3],
// and so does its profile: D = Σ_l γ_l (x_l − z_l)² = r²/2 and k = s² e^{−D}.
// Infinitely smooth: the limit of the Matérn class as ν → ∞.
#include "engine/kernels/families/stationary_family.h"

#include <limits>

namespace gpstream::detail {
namespace {

struct SquaredExponential {
  static constexpr bool kRootOfDistance = false;
  template <typename Real>
  static Real shape(Real distance) {
    return stationary::decay(distance);
  }
  // k = s² e^{−D}: h = 2k.
  static void slope(const double* value, const double*, double* slope, std::size_t count) {
#pragma omp simd
    for (std::size_t j = 0; j < count; ++j) slope[j] = 2.0 * value[j];
  }
};

constexpr StationaryProfile kProfile =
    stationary::profile<SquaredExponential>(/*gamma_scaling=*/true, std::numeric_limits<double>::infinity());

}  // namespace

extern const KernelFamily squared_exponential_ard_family{
    {"rbf", "se-ard"}, Lengthscales::per_input, &kProfile, nullptr};
extern const KernelFamily squared_exponential_family{{"se", nullptr}, Lengthscales::one, &kProfile, nullptr};

}  // namespace gpstream::detail

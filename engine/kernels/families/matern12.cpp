// Matérn ν = 1/2, the exponential kernel: k = s² exp(−r) [RW06 eq. 4.15].
// Continuous, not differentiable at x = z: the roughest of the class.
#include "engine/kernels/families/stationary_family.h"

namespace gpstream::detail {
namespace {

struct Matern12 {
  static constexpr bool kRootOfDistance = true;
  template <typename Real>
  static Real shape(Real distance) {
    return stationary::decay(std::sqrt(distance));
  }
  // k = s² e^{−r}, r = √D: h = k / r, and 0 at r = 0 (D_l / r → 0 there).
  static void slope(const double* value, const double* distance, double* slope, std::size_t count) {
#pragma omp simd
    for (std::size_t j = 0; j < count; ++j) {
      const double r = std::sqrt(distance[j]);
      slope[j] = r > 0.0 ? value[j] / r : 0.0;
    }
  }
};

constexpr StationaryProfile kProfile = stationary::profile<Matern12>(/*gamma_scaling=*/false, 0.5);

}  // namespace

extern const KernelFamily matern12_family{{"matern12", "exponential"}, Lengthscales::per_input, &kProfile, nullptr};

}  // namespace gpstream::detail

// Matérn ν = 3/2: k = s² (1 + √3 r) exp(−√3 r) [RW06 eq. 4.17]; sample paths once differentiable.
#include "engine/kernels/families/stationary_family.h"

namespace gpstream::detail {
namespace {

struct Matern32 {
  static constexpr bool kRootOfDistance = true;
  template <typename Real>
  static Real shape(Real distance) {
    const Real scaled = std::sqrt(Real{3}) * std::sqrt(distance);
    return (Real{1} + scaled) * stationary::decay(scaled);
  }
  // k = s² (1 + a) e^{−a}, a = √(3D): h = 3 s² e^{−a} = 3k / (1 + a).
  static void slope(const double* value, const double* distance, double* slope, std::size_t count) {
    const double sqrt3 = std::sqrt(3.0);
#pragma omp simd
    for (std::size_t j = 0; j < count; ++j) slope[j] = 3.0 * value[j] / (1.0 + sqrt3 * std::sqrt(distance[j]));
  }
};

constexpr StationaryProfile kProfile = stationary::profile<Matern32>(/*gamma_scaling=*/false, 1.5);

}  // namespace

extern const KernelFamily matern32_family{{"matern32", nullptr}, Lengthscales::per_input, &kProfile, nullptr};

}  // namespace gpstream::detail

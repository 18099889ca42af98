// Matérn ν = 5/2: k = s² (1 + √5 r + 5r²/3) exp(−√5 r) [RW06 eq. 4.17]; sample paths twice differentiable.
#include "engine/kernels/families/stationary_family.h"

namespace gpstream::detail {
namespace {

struct Matern52 {
  static constexpr bool kRootOfDistance = false;
  template <typename Real>
  static Real shape(Real distance) {
    const Real scaled = std::sqrt(Real{5}) * std::sqrt(distance);
    return (Real{1} + scaled + (Real{5} / Real{3}) * distance) * stationary::decay(scaled);
  }
  // k = s² (1 + a + a²/3) e^{−a}, a = √(5D): h = (5/3) s² (1 + a) e^{−a} = (5/3) k (1 + a) / (1 + a + a²/3).
  static void slope(const double* value, const double* distance, double* slope, std::size_t count) {
    const double sqrt5 = std::sqrt(5.0);
#pragma omp simd
    for (std::size_t j = 0; j < count; ++j) {
      const double scaled = sqrt5 * std::sqrt(distance[j]);
      slope[j] = (5.0 / 3.0) * value[j] * (1.0 + scaled) / (1.0 + scaled + (5.0 / 3.0) * distance[j]);
    }
  }
};

constexpr StationaryProfile kProfile = stationary::profile<Matern52>(/*gamma_scaling=*/false, 2.5);

}  // namespace

extern const KernelFamily matern52_family{{"matern52", nullptr}, Lengthscales::per_input, &kProfile, nullptr};

}  // namespace gpstream::detail

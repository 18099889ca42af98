// Matérn ν = 7/2: k = s² (1 + a + 2a²/5 + a³/15) e^{−a}, a = √7 r — the
// half-integer form of RW06 eq. 4.16 with p = 3; sample paths three times
// differentiable, between Matérn 5/2 and the squared exponential.
#include "engine/kernels/families/stationary_family.h"

namespace gpstream::detail {
namespace {

struct Matern72 {
  static constexpr bool kRootOfDistance = false;
  template <typename Real>
  static Real shape(Real distance) {
    const Real scaled = std::sqrt(Real{7}) * std::sqrt(distance);
    const Real polynomial = Real{1} + scaled * (Real{1} + scaled * (Real{2} / Real{5} + scaled / Real{15}));
    return polynomial * stationary::decay(scaled);
  }
  // dk/dr = −(7/5) s² r (1 + a + a²/3) e^{−a}, so h = −2 dk/dD = −(dk/dr)/r = (7/5) s² (1 + a + a²/3) e^{−a}
  // = (7/5) k (1 + a + a²/3) / (1 + a + 2a²/5 + a³/15).
  static void slope(const double* value, const double* distance, double* slope, std::size_t count) {
    const double sqrt7 = std::sqrt(7.0);
#pragma omp simd
    for (std::size_t j = 0; j < count; ++j) {
      const double a = sqrt7 * std::sqrt(distance[j]);
      slope[j] = 1.4 * value[j] * (1.0 + a * (1.0 + a / 3.0)) / (1.0 + a * (1.0 + a * (0.4 + a / 15.0)));
    }
  }
};

constexpr StationaryProfile kProfile = stationary::profile<Matern72>(/*gamma_scaling=*/false, 3.5);

}  // namespace

extern const KernelFamily matern72_family{{"matern72", nullptr}, Lengthscales::per_input, &kProfile, nullptr};

}  // namespace gpstream::detail

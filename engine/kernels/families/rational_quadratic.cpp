// The rational quadratic k = s² (1 + r²/(2α))^{−α} [RW06 eq. 4.19]: a
// mixture of squared exponentials over their lengthscales (a Gamma mixture
// of their inverse squares), so one kernel covers several scales at once;
// α → ∞ is the squared exponential. α is its own parameter, learned with
// the others: the registry's declaration below is all that storage,
// learning, `info` and Python need of it (kernels/kernel_parameters.h).
#include "engine/kernels/families/stationary_family.h"

#include <array>
#include <limits>

namespace gpstream::detail {
namespace {

struct RationalQuadratic {
  static constexpr bool kRootOfDistance = false;
  // With q = D/(2α): k/s² = e^{−α log(1 + q)}.
  template <typename Real>
  static Real shape(Real distance, const double* parameters) {
    const Real alpha = static_cast<Real>(parameters[0]);
    if constexpr (std::is_same_v<Real, float>) {
      return stationary::decay(alpha * std::log(1.0f + distance / (2.0f * alpha)));
    } else {
      return stationary::decay(alpha * std::log1p(distance / (2.0 * alpha)));
    }
  }
  // dk/dD = −½ k/(1 + q): h = k/(1 + q).
  static void slope(const double* value, const double* distance, double* slope, std::size_t count,
                    const double* parameters) {
    const double alpha = parameters[0];
    for (std::size_t j = 0; j < count; ++j) slope[j] = value[j] / (1.0 + distance[j] / (2.0 * alpha));
  }
  // ∂k/∂log α = α ∂k/∂α = k α (q/(1 + q) − log(1 + q)).
  static void parameter_slopes(const double* value, const double* distance, double* out, std::size_t count,
                               const double* parameters) {
    const double alpha = parameters[0];
    for (std::size_t j = 0; j < count; ++j) {
      const double q = distance[j] / (2.0 * alpha);
      out[j] = value[j] * alpha * (q / (1.0 + q) - std::log1p(q));
    }
  }
};

// NaN smoothness: not of the Matérn class, and no random-feature sampler here.
constexpr StationaryProfile kProfile =
    stationary::profile<RationalQuadratic>(/*gamma_scaling=*/false, std::numeric_limits<double>::quiet_NaN());
constexpr std::array<FamilyParameterSpec, 1> kParameters = {
    {{"alpha", 1.0, 1e-3, 1e4, "the rational quadratic's mixture shape: small, many scales; large, one"}}};

}  // namespace

extern const KernelFamily rational_quadratic_family{
    {"rq", "rational-quadratic"}, Lengthscales::per_input, &kProfile, nullptr, kParameters};

}  // namespace gpstream::detail

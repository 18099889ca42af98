// What a stationary family's file needs: its row pass and slope are written
// with these helpers, and its registry entry points to a StationaryProfile.
// The files of this folder are compiled with -ffast-math -fopenmp-simd
// (engine/CMakeLists.txt), so that GCC turns their exp() calls into glibc's
// libmvec vector calls (8 doubles per call with AVX-512); their loops see
// only finite, non-negative squared distances, which fast-math's
// assumptions hold for. Nothing else belongs in them.
//
// A row pass turns one row of −2·a·bᵀ cross terms into squared distances
//   D_j = max(0, cross_j + row_norm + column_norms_j)
// and then into kernel values k(D_j), with the function of D evaluated in
// `Real`: double for the kernel's values, float for values rounded to a
// relative error of about 1e-6 (Kernel::evaluate_rounded), at about 0.6× the
// cost. The slope is h(D) = −2 dk/dD from the values k at D: what the
// likelihood gradient multiplies each squared scaled difference by
// (∂k/∂log ℓ_l = h D_l).
#pragma once

#include "engine/kernels/kernel_implementations.h"

#include <cmath>
#include <cstddef>
#include <type_traits>

namespace gpstream::detail::stationary {

// e^{−x} for x ≥ 0. In single precision x is capped at 80 (e^{−80} ≈ 2e-35,
// zero next to s² for any use of rounded values): beyond ~87 expf
// underflows, and libmvec then takes a scalar path for the lane — it made
// Matérn 1/2's rounded blocks on bcef (lengthscales 0.035) several times slower.
template <typename Real>
inline Real decay(Real x) {
  if constexpr (std::is_same_v<Real, float>) x = std::fmin(x, 80.0f);
  return std::exp(-x);
}

// The expansion ‖a‖² + ‖b‖² − 2a·b leaves a rounding residue of a few ulps
// of the norms where a = b, which √ would amplify to ~1e-8: a family whose
// slope at r = 0 is not zero (Matérn 1/2) reads distances below that level
// as zero; the smoother ones are flat there and may too.
constexpr double kRoundingLevel = 8.0 * 2.220446049250313e-16;

// D from a cross term and the two norms, as the row pass of every family forms it.
inline double squared_distance(double cross, double row_norm, double column_norm) {
  return std::fmax(cross + row_norm + column_norm, 0.0);
}
// The same, with the expansion's rounding residue at a = b read as zero: for the families evaluated at r = √D.
inline double squared_distance_of_root(double cross, double row_norm, double column_norm) {
  const double distance = squared_distance(cross, row_norm, column_norm);
  return distance <= kRoundingLevel * (row_norm + column_norm) ? 0.0 : distance;
}

// The row pass of a family from its value at one squared distance:
// `Family::value<Real>(D, s²)`, with D from squared_distance, or from
// squared_distance_of_root where `Family::kRootOfDistance` (the families
// evaluated at r = √D, whose residue at a = b the root would amplify).
template <class Family, typename Real>
void row_pass(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance) {
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    const double distance = Family::kRootOfDistance ? squared_distance_of_root(row[j], row_norm, column_norms[j])
                                                    : squared_distance(row[j], row_norm, column_norms[j]);
    row[j] = Family::template value<Real>(distance, signal_variance);
  }
}

// A family's profile: its row passes in double and single precision, and its slope `Family::slope`.
template <class Family>
constexpr StationaryProfile profile(bool gamma_scaling, double smoothness) {
  return {&row_pass<Family, double>, &row_pass<Family, float>, &Family::slope, gamma_scaling, smoothness};
}

}  // namespace gpstream::detail::stationary

// What a stationary family's file needs: its row pass and slope are written
// with these helpers, and its registry entry points to a StationaryProfile.
// The files of this folder are compiled with -ffast-math -fopenmp-simd
// (engine/CMakeLists.txt), so that GCC vectorises their loops — e^{−x}
// (decay.h) and √ inline, and glibc's libmvec for what else they call
// (log1p); their loops see only finite, non-negative squared distances,
// which fast-math's assumptions hold for. Nothing else belongs in them.
//
// A row pass turns one row of −2·a·bᵀ cross terms into squared distances
//   D_j = max(0, cross_j + row_norm + column_norms_j)
// and then into kernel values k(D_j), with the function of D evaluated in
// `Real`: double for the kernel's values, float for values rounded to a
// relative error of about 1e-6 (Kernel::evaluate_rounded), at about 0.6× the
// cost; single_row_pass takes D in float too (Kernel::evaluate_single). The
// slope is h(D) = −2 dk/dD from the values k at D: what the likelihood
// gradient multiplies each squared scaled difference by (∂k/∂log ℓ_l = h D_l).
#pragma once

#include "engine/kernels/families/decay.h"
#include "engine/kernels/kernel_implementations.h"

#include <cmath>
#include <cstddef>
#include <type_traits>

namespace gpstream::detail::stationary {

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

// A family's shape k/s² at one squared distance: `Family::shape<Real>(D)`,
// or `Family::shape<Real>(D, parameters)` for a family with parameters of
// its own (rational quadratic's α).
template <class Family, typename Real>
inline Real shape_at(Real distance, const double* parameters) {
  if constexpr (requires { Family::template shape<Real>(distance, parameters); }) {
    return Family::template shape<Real>(distance, parameters);
  } else {
    return Family::template shape<Real>(distance);
  }
}

// The row pass of a family from its shape, with D from squared_distance, or
// from squared_distance_of_root where `Family::kRootOfDistance` (the
// families evaluated at r = √D, whose residue at a = b the root would amplify).
template <class Family, typename Real>
void row_pass(double* row, std::size_t count, double row_norm, const double* column_norms, double signal_variance,
              const double* parameters) {
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) {
    const double distance = Family::kRootOfDistance ? squared_distance_of_root(row[j], row_norm, column_norms[j])
                                                    : squared_distance(row[j], row_norm, column_norms[j]);
    row[j] = signal_variance * static_cast<double>(shape_at<Family, Real>(static_cast<Real>(distance), parameters));
  }
}

// The pass of single-precision blocks (Kernel::evaluate_single): D, formed
// from the differences and so exact at a = b, to k(D), all in float.
template <class Family>
void single_row_pass(float* row, std::size_t count, double signal_variance, const double* parameters) {
  const float signal = static_cast<float>(signal_variance);
#pragma omp simd
  for (std::size_t j = 0; j < count; ++j) row[j] = signal * shape_at<Family, float>(row[j], parameters);
}

// `Family::slope(value, distance, slope, count)`, with the family's parameters where it takes them.
template <class Family>
void slope_of(const double* value, const double* distance, double* slope, std::size_t count, const double* parameters) {
  if constexpr (requires { Family::slope(value, distance, slope, count, parameters); }) {
    Family::slope(value, distance, slope, count, parameters);
  } else {
    Family::slope(value, distance, slope, count);
  }
}

// A family's profile: its row passes in double and single precision, its
// slope `Family::slope`, and `Family::parameter_slopes` where it has
// parameters of its own.
template <class Family>
constexpr StationaryProfile profile(bool gamma_scaling, double smoothness) {
  decltype(StationaryProfile::parameter_slopes) parameter_slopes = nullptr;
  if constexpr (requires { &Family::parameter_slopes; }) parameter_slopes = &Family::parameter_slopes;
  return {&row_pass<Family, double>,
          &row_pass<Family, float>,
          &single_row_pass<Family>,
          &slope_of<Family>,
          parameter_slopes,
          gamma_scaling,
          smoothness};
}

}  // namespace gpstream::detail::stationary

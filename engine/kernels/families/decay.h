// e^{−x} as the stationary families evaluate it (stationary_family.h); apart,
// so that the tests can hold it against the exact value.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace gpstream::detail::stationary {

// e^{−x} for x ≥ 0 in the families' row passes, by our own reduction, which
// vectorises where glibc's exp and expf (scalar, or libmvec's vector calls,
// which check every special case) cost more: e^{−x} = 2^{−n} e^{r},
// n = round(x/ln 2), r = n ln 2 − x in [−ln 2/2, ln 2/2], with ln 2 in two
// parts (the first's trailing zeros make n·ln2₁ exact, so r is exact to
// rounding; in double one fma, which -ffast-math may not reassociate as it
// did n·ln2₁ − x + n·ln2₂, at 200 ulps); e^{r} by its Taylor polynomial,
// 2^{−n} from exponent bits.
// - float: degree 6 (|remainder| ≤ 0.35⁷/7! < 1.2e-7); x capped at 80
//   (e^{−80} ≈ 2e-35, zero next to s² for any use of rounded values; 2^{−n}
//   normal for n ≤ 116): within 3e-7 relative. libmvec's expf was most of a
//   single-precision pass (docs/benchmarks.md).
// - double: degree 12 (|remainder| ≤ 0.35¹³/13! < 2e-16); 2^{−n} as two
//   normal factors, so that the product underflows gradually as e^{−x} does,
//   to 0 from x = 746 (where x is capped): within 4 ulps of e^{−x} (tested),
//   and faster than libmvec's exp (figures: docs/variance.md, "Kernel entries
//   in double"). The same instructions for every lane, vectorised or not,
//   where libmvec's vector and scalar exp differ. std::fma is one instruction
//   where the target has FMA (native and x86-64-v3 builds), a library call in
//   a plain x86-64 build.
template <typename Real>
inline Real decay(Real x) {
  if constexpr (std::is_same_v<Real, float>) {
    x = std::fmin(x, 80.0f);
    const float n = static_cast<float>(static_cast<int>(x * 1.44269504f + 0.5f));
    const float r = (n * 0.693145751953125f - x) + n * 1.428606765330187e-06f;
    const float p =
        1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
    return p * std::bit_cast<float>((127 - static_cast<int>(n)) << 23);
  } else {
    const double capped = std::fmin(x, 746.0);
    const int k = static_cast<int>(capped * 1.4426950408889634 + 0.5);
    const double n = static_cast<double>(k);
    const double r = std::fma(n, 0.6931471803691238, -capped) + n * 1.9082149292705877e-10;
    double p = 1.0 / 479001600;
    p = p * r + 1.0 / 39916800;
    p = p * r + 1.0 / 3628800;
    p = p * r + 1.0 / 362880;
    p = p * r + 1.0 / 40320;
    p = p * r + 1.0 / 5040;
    p = p * r + 1.0 / 720;
    p = p * r + 1.0 / 120;
    p = p * r + 1.0 / 24;
    p = p * r + 1.0 / 6;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    const int half = k >> 1;
    return p * std::bit_cast<double>(static_cast<std::int64_t>(1023 - half) << 52) *
           std::bit_cast<double>(static_cast<std::int64_t>(1023 - (k - half)) << 52);
  }
}

}  // namespace gpstream::detail::stationary

// How many doubles one vector register of the build's target holds: the
// width of the hand-vectorised loops (GCC's vector extension). A vector
// type wider than the target's registers is lowered piece by piece, often
// through memory: with 8-double vectors a build for x86-64-v3 (AVX2, 4
// doubles) ran kernel blocks several times slower than the native AVX-512
// build (docs/benchmarks.md, "Tuning constants and their figures").
#pragma once

#include <cstddef>

namespace gpstream {

#if defined(__AVX512F__)
inline constexpr std::size_t kVectorDoubles = 8;
#elif defined(__AVX__)
inline constexpr std::size_t kVectorDoubles = 4;
#else
inline constexpr std::size_t kVectorDoubles = 2;
#endif

// Independent accumulators a register-blocked loop keeps, counted in
// doubles: 32 (4 rows × 8 lanes with AVX-512, 8 × 4 with AVX2), enough to
// cover the FMA latency on two ports.
inline constexpr std::size_t kAccumulatedDoubles = 32;

}  // namespace gpstream

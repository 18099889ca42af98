#include "engine/linalg/reproducible_norm.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace gpstream {

namespace {

__extension__ typedef unsigned __int128 Wide;  // GCC and Clang on every 64-bit target

// A finite non-negative double is m·2^(e − 1075), m < 2⁵³ and 1 ≤ e ≤ 2046.
// Exponents fall into 64 bins of 32; a bin adds m·2^(e mod 32) < 2⁸⁴ per
// term, so 2⁴⁴ terms fit its 128 bits.
constexpr int kBinWidth = 32;
constexpr int kBins = 2048 / kBinWidth;
constexpr int kExponentBias = 1075;  // 1023 + 52 mantissa bits

struct SquareBins {
  std::array<Wide, kBins> bins{};
  std::uint64_t not_a_number = 0;
  std::uint64_t infinite = 0;

  void add_square_of(double value) {
    const double square = value * value;
    const auto bits = std::bit_cast<std::uint64_t>(square);
    const auto biased = static_cast<int>(bits >> 52);
    if (biased == 2047) {
      ++(std::isnan(square) ? not_a_number : infinite);
      return;
    }
    std::uint64_t mantissa = bits & ((std::uint64_t{1} << 52) - 1);
    if (biased > 0) mantissa |= std::uint64_t{1} << 52;
    const int exponent = biased > 0 ? biased : 1;  // subnormals share the smallest normal exponent
    bins[exponent / kBinWidth] += Wide{mantissa} << (exponent % kBinWidth);
  }

  void merge(const SquareBins& other) {
    for (int b = 0; b < kBins; ++b) bins[b] += other.bins[b];
    not_a_number += other.not_a_number;
    infinite += other.infinite;
  }
};

// Each bin as four 32-bit limbs, so that adding them over up to 2³² ranks
// cannot overflow 64 bits; then the two counts.
constexpr int kLimbs = 4;

std::vector<std::uint64_t> as_limbs(const SquareBins& local) {
  std::vector<std::uint64_t> limbs(kBins * kLimbs + 2);
  for (int b = 0; b < kBins; ++b) {
    for (int k = 0; k < kLimbs; ++k)
      limbs[b * kLimbs + k] = static_cast<std::uint64_t>(local.bins[b] >> (32 * k)) & 0xffffffffu;
  }
  limbs[kBins * kLimbs] = local.not_a_number;
  limbs[kBins * kLimbs + 1] = local.infinite;
  return limbs;
}

}  // namespace

double reproducible_norm(std::span<const double> local, Communicator& ranks) {
  const SquareBins bins = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, local.size(), 1u << 14), SquareBins{},
      [&](const tbb::blocked_range<std::size_t>& range, SquareBins partial) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) partial.add_square_of(local[i]);
        return partial;
      },
      [](SquareBins a, const SquareBins& b) {
        a.merge(b);
        return a;
      });
  std::vector<std::uint64_t> limbs = as_limbs(bins);
  ranks.sum(limbs);
  if (limbs[kBins * kLimbs] > 0) return std::numeric_limits<double>::quiet_NaN();
  if (limbs[kBins * kLimbs + 1] > 0) return std::numeric_limits<double>::infinity();
  // The exact total, bin by bin from the smallest: every rank converts the same integers alike.
  double total = 0.0;
  for (int b = 0; b < kBins; ++b) {
    Wide bin = 0;
    for (int k = kLimbs - 1; k >= 0; --k) bin = (bin << 32) + limbs[b * kLimbs + k];
    if (bin != 0) total += std::ldexp(static_cast<double>(bin), b * kBinWidth - kExponentBias);
  }
  return std::sqrt(total);
}

}  // namespace gpstream

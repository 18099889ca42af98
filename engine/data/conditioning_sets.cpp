#include "engine/data/conditioning_sets.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/nearest_neighbours.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <random>

namespace gpstream {
namespace {

constexpr std::size_t kChunkRows = 64;  // positions a task

}  // namespace

ConditioningSets::ConditioningSets(std::size_t n, std::size_t neighbours, std::uint64_t seed)
    : m_(std::min(neighbours, n > 0 ? n - 1 : 0)), order_(n), neighbours_(checked_multiply(n, m_), 0), counts_(n, 0) {
  for (std::size_t i = 0; i < n; ++i) order_[i] = i;
  std::mt19937_64 random(seed);
  for (std::size_t i = n; i-- > 1;) {
    std::swap(order_[i], order_[std::uniform_int_distribution<std::size_t>(0, i)(random)]);
  }
}

std::size_t ConditioningSets::bytes(std::size_t n, std::size_t neighbours) {
  return checked_multiply(n, checked_add(neighbours, 1), sizeof(std::uint32_t)) + checked_multiply(n, sizeof(std::size_t));
}

double ConditioningSets::find(Context& context, const double* points_in_order, std::size_t d,
                              std::span<const double> scale) {
  const std::size_t n = size();
  const NeighbourIndex index(points_in_order, n, d, scale);
  std::vector<std::uint8_t> changed(n, 0);
  context.execute([&] {
    tbb::parallel_for(std::size_t{0}, (n + kChunkRows - 1) / kChunkRows, [&](std::size_t chunk) {
      std::vector<std::uint32_t> found;
      for (std::size_t i = chunk * kChunkRows; i < std::min(n, (chunk + 1) * kChunkRows); ++i) {
        index.nearest_before(i, m_, i, found);
        std::uint32_t* set = neighbours_.data() + i * m_;
        changed[i] = counts_[i] != found.size() || !std::equal(found.begin(), found.end(), set);
        std::copy(found.begin(), found.end(), set);
        counts_[i] = static_cast<std::uint32_t>(found.size());
      }
    });
  });
  std::size_t count = 0;
  for (const std::uint8_t flag : changed) count += flag;
  return n == 0 ? 0.0 : static_cast<double>(count) / static_cast<double>(n);
}

}  // namespace gpstream

// The ordering and conditioning sets of a Vecchia approximation [Vecchia88;
// Guinness18 §4; Katzfuss21]: a random order of the n rows (nearly as good
// as the maximin order, far better than a file's), and for each position the
// m positions before it nearest in scaled inputs x̃_l = x_l · scale_l (1/ℓ_l:
// the distance a stationary ARD kernel sees). The Vecchia likelihood
// (hyper/vecchia_likelihood.h) and the Vecchia factor of K̄
// (kernels/vecchia_factor.h) are made of them.
#pragma once

#include "engine/core/context.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gpstream {

class ConditioningSets {
 public:
  // n rows in a random order drawn from `seed`, m = min(neighbours, n − 1) neighbours each.
  ConditioningSets(std::size_t n, std::size_t neighbours, std::uint64_t seed);

  std::size_t size() const { return order_.size(); }
  std::size_t neighbours() const { return m_; }
  // Position k holds the caller's row order()[k].
  std::span<const std::size_t> order() const { return order_; }
  // Finds every position's set among the positions before it, for the points in position order
  // (n×d: row order()[k] of the caller's at k), on the context's threads; deterministic. Returns the share
  // of positions whose set changed since the last call.
  double find(Context& context, const double* points_in_order, std::size_t d, std::span<const double> scale);
  // Position k's set: min(m, k) earlier positions, nearest first.
  std::span<const std::uint32_t> set(std::size_t position) const {
    return {neighbours_.data() + position * m_, counts_[position]};
  }
  // The bytes find() keeps: the n·m positions and the counts.
  static std::size_t bytes(std::size_t n, std::size_t neighbours);

 private:
  std::size_t m_;
  std::vector<std::size_t> order_;
  std::vector<std::uint32_t> neighbours_;  // n×m positions, nearest first
  std::vector<std::uint32_t> counts_;      // how many each position has: min(m, position)
};

}  // namespace gpstream

// Nearest neighbours in scaled inputs, x̃_l = x_l · scale_l (1/ℓ_l: the
// distance a stationary ARD kernel sees), by nanoflann's k-d tree: the
// conditioning sets of a Vecchia likelihood (hyper/vecchia_likelihood.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace gpstream {

class NeighbourIndex {
 public:
  // Indexes `n` points (n×d, row-major), copied scaled. Deterministic: the same points give the same answers.
  NeighbourIndex(const double* points, std::size_t n, std::size_t d, std::span<const double> scale);
  ~NeighbourIndex();
  NeighbourIndex(const NeighbourIndex&) = delete;
  NeighbourIndex& operator=(const NeighbourIndex&) = delete;

  std::size_t size() const { return n_; }
  // The min(k, limit) points nearest to point `i` among points 0 … limit − 1
  // (all of them when limit = size()), nearest first, into `out`; ties go to
  // the smaller index. Safe to call from many threads at once.
  void nearest_before(std::size_t i, std::size_t k, std::size_t limit, std::vector<std::uint32_t>& out) const;

 private:
  struct Tree;
  std::size_t n_, d_;
  std::vector<double> scaled_;  // n×d
  std::unique_ptr<Tree> tree_;
};

}  // namespace gpstream

#include "engine/data/nearest_neighbours.h"

#include "engine/core/error.h"

#include <nanoflann.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace gpstream {
namespace {

// Below this many candidates a scan is as fast as the tree, and exact whatever the limit.
constexpr std::size_t kScanBelow = 2048;

}  // namespace

// nanoflann's dataset adaptor over the scaled copy.
struct NeighbourIndex::Tree {
  struct Points {
    const std::vector<double>* scaled;
    std::size_t n, d;
    std::size_t kdtree_get_point_count() const { return n; }
    double kdtree_get_pt(std::uint32_t i, std::size_t l) const { return (*scaled)[i * d + l]; }
    template <class Box>
    bool kdtree_get_bbox(Box&) const {
      return false;
    }
  };
  using Index = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Points, double, std::uint32_t>,
                                                    Points, -1, std::uint32_t>;
  Points points;
  Index index;
  Tree(const std::vector<double>& scaled, std::size_t n, std::size_t d)
      : points{&scaled, n, d}, index(static_cast<int>(d), points, nanoflann::KDTreeSingleIndexAdaptorParams(16)) {}
};

NeighbourIndex::NeighbourIndex(const double* points, std::size_t n, std::size_t d, std::span<const double> scale)
    : n_(n), d_(d), scaled_(n * d) {
  GPSTREAM_CHECK(scale.size() == d, "{} scales for {} inputs", scale.size(), d);
  GPSTREAM_CHECK(n < std::numeric_limits<std::uint32_t>::max(), "{} points are more than a neighbour index holds", n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t l = 0; l < d; ++l) scaled_[i * d + l] = points[i * d + l] * scale[l];
  tree_ = std::make_unique<Tree>(scaled_, n, d);
}

NeighbourIndex::~NeighbourIndex() = default;

void NeighbourIndex::nearest_before(std::size_t i, std::size_t k, std::size_t limit,
                                    std::vector<std::uint32_t>& out) const {
  out.clear();
  k = std::min(k, limit);
  if (k == 0) return;
  const double* query = scaled_.data() + i * d_;
  const auto squared_distance = [&](std::size_t j) {
    double sum = 0.0;
    for (std::size_t l = 0; l < d_; ++l) {
      const double difference = query[l] - scaled_[j * d_ + l];
      sum += difference * difference;
    }
    return sum;
  };
  std::vector<std::pair<double, std::uint32_t>> found;
  if (limit <= kScanBelow) {
    found.reserve(limit);
    for (std::size_t j = 0; j < limit; ++j) found.emplace_back(squared_distance(j), static_cast<std::uint32_t>(j));
  } else {
    // The q nearest of all n hold about q·limit/n points before `limit`: ask for enough, more if they fall short.
    std::size_t q =
        std::min(n_, std::max(2 * k, static_cast<std::size_t>(1.5 * static_cast<double>(k) * static_cast<double>(n_) /
                                                              static_cast<double>(limit))));
    std::vector<std::uint32_t> indices;
    std::vector<double> distances;
    for (;;) {
      indices.resize(q);
      distances.resize(q);
      const std::size_t got = tree_->index.knnSearch(query, q, indices.data(), distances.data());
      found.clear();
      for (std::size_t t = 0; t < got; ++t) {
        if (indices[t] < limit) found.emplace_back(distances[t], indices[t]);
      }
      if (found.size() >= k || q >= n_) break;
      q = std::min(n_, 2 * q);
    }
  }
  // Nearest first, ties to the smaller index: the same set whichever way it was found.
  std::partial_sort(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(k), found.end());
  for (std::size_t t = 0; t < k; ++t) out.push_back(found[t].second);
}

}  // namespace gpstream

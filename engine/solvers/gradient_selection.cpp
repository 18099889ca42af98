// Gradient selection: the m variables of largest |g_i| (‖G_i‖ for r
// columns), over every rank (the BCD baseline of BoSminchisescu08 §4).
#include "engine/solvers/block_coordinate_descent.h"

#include <algorithm>
#include <numeric>

namespace gpstream {

void GradientSelection::select(SelectionContext& context, ActiveSet& out) {
  const std::size_t n = context.kernel.size();  // this rank's rows
  const std::size_t r = context.columns;
  const RowPartition& partition = context.kernel.partition();
  // |g_i| for one column; ‖G_i‖² ranks the same way and serves r columns.
  scores_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double* row = context.gradient + i * r;
    scores_[i] = std::inner_product(row, row + r, row, 0.0);
  }
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  const auto larger = [&](std::size_t a, std::size_t b) {
    return scores_[a] > scores_[b] || (scores_[a] == scores_[b] && a < b);
  };
  // This rank's m largest, then the m largest of every rank's: (score, row) pairs over all n.
  const std::size_t m = context.active_set_size;
  const auto middle = order_.begin() + static_cast<std::ptrdiff_t>(std::min(m, n));
  std::nth_element(order_.begin(), middle, order_.end(), larger);
  std::vector<double> local;
  for (auto it = order_.begin(); it != middle; ++it) {
    local.push_back(scores_[*it]);
    local.push_back(static_cast<double>(partition.first + *it));
  }
  const std::vector<double> all = context.kernel.context().communicator().all_gather(local);
  std::vector<std::pair<double, std::size_t>> ranked;
  for (std::size_t k = 0; k + 1 < all.size(); k += 2) ranked.emplace_back(all[k], static_cast<std::size_t>(all[k + 1]));
  const auto better = [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  const auto cut = ranked.begin() + static_cast<std::ptrdiff_t>(std::min(m, ranked.size()));
  std::nth_element(ranked.begin(), cut, ranked.end(), better);
  out.indices.clear();
  for (auto it = ranked.begin(); it != cut; ++it) out.indices.push_back(it->second);
  std::sort(out.indices.begin(), out.indices.end());
  context.kernel.exchange().collect_rows(out.indices, out.rows);
}

}  // namespace gpstream

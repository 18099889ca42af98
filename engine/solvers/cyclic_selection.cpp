// Cyclic selection: the variables in a random order fixed per job, m at a
// time (the BCD baseline of BoSminchisescu08 §4).
#include "engine/solvers/block_coordinate_descent.h"

#include "engine/data/partitioned_rows.h"

#include <algorithm>
#include <numeric>

namespace gpstream {

void CyclicSelection::select(SelectionContext& context, ActiveSet& out) {
  const std::size_t n = context.kernel.partition().global_rows;
  auto& saved = context.auxiliary["cyclic"];  // [seed of the order, cursor]
  if (saved.size() != 2) saved = {static_cast<double>(context.random() >> 32), 0.0};
  if (saved[0] != order_seed_ || order_.size() != n) {
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::mt19937_64 shuffler(static_cast<std::uint64_t>(saved[0]));
    std::shuffle(order_.begin(), order_.end(), shuffler);
    order_seed_ = saved[0];
  }
  // The m variables of the order from `cursor` on, in file order (which makes a gather cheaper).
  const auto block_at = [&](std::size_t cursor, std::vector<std::size_t>& indices) {
    indices.resize(context.active_set_size);
    for (std::size_t& index : indices) {
      index = order_[cursor];
      cursor = (cursor + 1) % n;
    }
    std::sort(indices.begin(), indices.end());
    return cursor;
  };
  const std::size_t next = block_at(static_cast<std::size_t>(saved[1]), out.indices);
  saved[1] = static_cast<double>(next);
  context.kernel.exchange().collect_rows(out.indices, out.rows, &next_rows_);
  if (context.kernel.streams_rows()) {  // the next block is known: this iteration's pass brings its rows
    block_at(next, next_indices_);
    next_rows_.request(owned_local_rows(context.kernel.partition(), next_indices_), context.kernel.rows().columns());
    context.kernel.capture_during_next_pass(next_rows_);
  }
}

}  // namespace gpstream

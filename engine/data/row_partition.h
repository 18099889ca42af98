// RowPartition: the training rows one rank of a distributed run owns — the
// contiguous range [first, first + count) of the n rows, the ranks' ranges in
// rank order. The single process owns all n (RowPartition::whole).
#pragma once

#include <cstddef>

namespace gpstream {

struct RowPartition {
  std::size_t global_rows = 0;  // n, over all ranks
  std::size_t first = 0;        // the first row this rank owns
  std::size_t count = 0;        // how many it owns

  static RowPartition whole(std::size_t n) { return {n, 0, n}; }
  bool owns(std::size_t row) const { return row >= first && row - first < count; }
  std::size_t local(std::size_t row) const { return row - first; }
};

// Rank `rank`'s share of n rows among `ranks`: ranges as equal as whole
// units of `alignment` rows (an HDF5 chunk) allow, so that every rank reads
// whole chunks — unless there are fewer whole chunks than ranks, when the
// cuts fall on single rows; a rank owns none only when n < ranks.
RowPartition partition_rows(std::size_t n, std::size_t alignment, std::size_t rank, std::size_t ranks);

}  // namespace gpstream

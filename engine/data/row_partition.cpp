#include "engine/data/row_partition.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <algorithm>

namespace gpstream {

RowPartition partition_rows(std::size_t n, std::size_t alignment, std::size_t rank, std::size_t ranks) {
  GPSTREAM_CHECK(ranks > 0 && rank < ranks, "rank {} of {} ranks", rank, ranks);
  alignment = std::max<std::size_t>(alignment, 1);
  // Chunks coarser than a rank's share would leave ranks idle: cut at single rows then.
  if (n / alignment < ranks) alignment = 1;
  const std::size_t units = n / alignment + (n % alignment != 0 ? 1 : 0);
  const auto start = [&](std::size_t r) {
    return std::min(n, checked_multiply(checked_multiply(units, r) / ranks, alignment));
  };
  const std::size_t first = start(rank), end = start(rank + 1);
  return {n, first, end - first};
}

}  // namespace gpstream

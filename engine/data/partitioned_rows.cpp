#include "engine/data/partitioned_rows.h"

#include "engine/core/error.h"

#include <vector>

namespace gpstream {

PartitionedRows::PartitionedRows(RowSource& all, const RowPartition& partition) : all_(all), partition_(partition) {
  GPSTREAM_CHECK(partition.global_rows == all.rows() && partition.first + partition.count <= all.rows(),
                 "rows [{}, {}) of a partition of {} rows do not lie in a source of {}", partition.first,
                 partition.first + partition.count, partition.global_rows, all.rows());
}

const double* PartitionedRows::resident_rows() const {
  const double* x = all_.resident_rows();
  return x != nullptr ? x + partition_.first * all_.columns() : nullptr;
}

const double* PartitionedRows::resident_targets() const {
  const double* y = all_.resident_targets();
  return y != nullptr ? y + partition_.first : nullptr;
}

void PartitionedRows::do_read_rows(std::size_t first, std::size_t count, double* x, double* y) {
  all_.read_rows(partition_.first + first, count, x, y);
}

void PartitionedRows::do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) {
  std::vector<std::size_t> shifted(indices.begin(), indices.end());
  for (std::size_t& index : shifted) index += partition_.first;
  all_.gather_rows(shifted, x, y);
}

}  // namespace gpstream

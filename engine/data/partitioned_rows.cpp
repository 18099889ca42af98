#include "engine/data/partitioned_rows.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <algorithm>

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

std::vector<std::size_t> owned_local_rows(const RowPartition& partition, std::span<const std::size_t> indices) {
  std::vector<std::size_t> local;
  for (const std::size_t index : indices) {
    if (partition.owns(index)) local.push_back(partition.local(index));
  }
  return local;
}

void collect_partitioned_rows(Communicator& ranks, RowSource& rows, const RowPartition& partition,
                              std::span<const std::size_t> indices, std::vector<double>& out,
                              std::vector<double>* owned, std::vector<double>* targets) {
  GPSTREAM_CHECK(owned == nullptr || targets == nullptr, "collect_partitioned_rows: rows given, targets asked");
  const std::size_t d = rows.columns();
  std::vector<double> read, read_targets;
  if (owned == nullptr) {
    const std::vector<std::size_t> local = owned_local_rows(partition, indices);
    read.resize(checked_multiply(local.size(), d));
    if (targets != nullptr) read_targets.resize(local.size());
    rows.gather_rows(local, read.data(), targets != nullptr ? read_targets.data() : nullptr);
    owned = &read;
  }
  if (partition.count == partition.global_rows) {
    out = std::move(*owned);  // every row is owned, in order
    if (targets != nullptr) *targets = std::move(read_targets);
    return;
  }
  out.assign(checked_multiply(indices.size(), d), 0.0);
  if (targets != nullptr) targets->assign(indices.size(), 0.0);
  std::size_t next = 0;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (!partition.owns(indices[k])) continue;
    std::copy_n(owned->data() + next * d, d, out.data() + k * d);
    if (targets != nullptr) (*targets)[k] = read_targets[next];
    ++next;
  }
  ranks.sum(out);
  if (targets != nullptr) ranks.sum(*targets);
}

}  // namespace gpstream

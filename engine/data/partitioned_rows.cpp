#include "engine/data/partitioned_rows.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/row_capture.h"

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

void RankExchange::collect_rows(std::span<const std::size_t> indices, std::vector<double>& out, RowCapture* capture) {
  std::vector<double> owned;
  const bool captured = capture != nullptr && capture->take(owned_local_rows(partition_, indices), owned);
  collect_partitioned_rows(ranks_, rows_, partition_, indices, out, captured ? &owned : nullptr);
}

std::vector<double> RankExchange::collect_values(std::span<const std::size_t> indices, std::span<const double> local,
                                                 std::size_t width) {
  GPSTREAM_CHECK(local.size() == checked_multiply(rows_.rows(), width), "{} values for {} rows of {}", local.size(),
                 rows_.rows(), width);
  std::vector<double> out(checked_multiply(indices.size(), width), 0.0);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (partition_.owns(indices[k]))
      std::copy_n(local.data() + partition_.local(indices[k]) * width, width, out.data() + k * width);
  }
  ranks_.sum(out);
  return out;
}

void RankExchange::read_global_rows(std::size_t first, std::size_t count, double* out) {
  const std::size_t d = rows_.columns();
  if (partition_.count == partition_.global_rows) {
    rows_.read_rows(first, count, out, nullptr);
    return;
  }
  std::span<double> rows(out, checked_multiply(count, d));
  std::fill(rows.begin(), rows.end(), 0.0);
  const std::size_t own_first = std::max(first, partition_.first);
  const std::size_t own_end = std::min(first + count, partition_.first + partition_.count);
  if (own_first < own_end) {
    rows_.read_rows(partition_.local(own_first), own_end - own_first, out + (own_first - first) * d, nullptr);
  }
  ranks_.sum(rows);
}

}  // namespace gpstream

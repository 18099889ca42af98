// PartitionedRows: the rows a RowPartition gives one rank, as a RowSource of
// their own — its row i is row partition.first + i of the whole source.
#pragma once

#include "engine/core/communicator.h"
#include "engine/data/row_partition.h"
#include "engine/data/row_source.h"

#include <span>
#include <vector>

namespace gpstream {

class PartitionedRows final : public RowSource {
 public:
  // `all` (the n rows of every rank) must outlive this view.
  PartitionedRows(RowSource& all, const RowPartition& partition);

  const RowPartition& partition() const { return partition_; }
  std::size_t rows() const override { return partition_.count; }
  std::size_t columns() const override { return all_.columns(); }
  bool has_targets() const override { return all_.has_targets(); }
  std::size_t preferred_block_alignment() const override { return all_.preferred_block_alignment(); }
  const double* resident_rows() const override;
  const double* resident_targets() const override;

 private:
  void do_read_rows(std::size_t first, std::size_t count, double* x, double* y) override;
  void do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) override;

  RowSource& all_;
  RowPartition partition_;
};

// Rows `indices` (numbered over all n) into `out` (|indices|×d) on every
// rank, and their targets into `targets` when given: each rank reads those
// of `rows` (its partition's) it owns, one all-reduce shares them (exact:
// one owner per value). `owned`, when given, holds the owned rows already,
// in order (not with `targets`). In a single process, a gather.
void collect_partitioned_rows(Communicator& ranks, RowSource& rows, const RowPartition& partition,
                              std::span<const std::size_t> indices, std::vector<double>& out,
                              std::vector<double>* owned = nullptr, std::vector<double>* targets = nullptr);

// The local row numbers of the rows of `indices` this rank owns, in their order.
std::vector<std::size_t> owned_local_rows(const RowPartition& partition, std::span<const std::size_t> indices);

class RowCapture;

// What the ranks of a distributed run exchange about the rows they own: rows
// and per-row values by their global numbers, each from its owner, shared by
// one all-reduce (exact: one owner per value, zeros elsewhere). Every rank
// calls each method (they are collective); in one process they only copy.
// KernelMatrix holds one for the rows it was made on (KernelMatrix::exchange).
class RankExchange {
 public:
  // `rows` (this rank's) and `ranks` must outlive it.
  RankExchange(Communicator& ranks, RowSource& rows, const RowPartition& partition)
      : ranks_(ranks), rows_(rows), partition_(partition) {}

  // Rows `indices` (numbered over all n) of X into `out` (|indices|×d); the
  // owned ones come from `capture` when it holds them (a pass brought them).
  void collect_rows(std::span<const std::size_t> indices, std::vector<double>& out, RowCapture* capture = nullptr);
  // Rows `indices` of a per-row vector of `width` values a row, of which
  // `local` holds this rank's rows; |indices|×width.
  std::vector<double> collect_values(std::span<const std::size_t> indices, std::span<const double> local,
                                     std::size_t width = 1);
  // Rows [first, first + count) of all n into `out` (count×d).
  void read_global_rows(std::size_t first, std::size_t count, double* out);

 private:
  Communicator& ranks_;
  RowSource& rows_;
  RowPartition partition_;
};

}  // namespace gpstream

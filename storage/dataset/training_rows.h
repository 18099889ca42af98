// The training rows as the engine sees them: a dataset file, standardised on
// the fly, and held in memory when it fits the Context's budget — the one
// place that decides between resident and streamed. train, hyper and
// predict open their training data through it, so all read it alike.
#pragma once

#include "engine/core/context.h"
#include "engine/data/partitioned_rows.h"
#include "engine/data/row_partition.h"
#include "engine/data/row_source.h"
#include "engine/data/standardisation.h"
#include "storage/dataset/hdf5_row_source.h"

#include <memory>
#include <optional>
#include <string>

namespace gpstream {

struct TrainingRowsOptions {
  // O(n) vectors the caller will hold (α, g, y, diag K̄, …): reserved first,
  // refused up front with the figure needed when they alone do not fit.
  std::size_t vectors_per_row = 1;
  // When given, a dataset whose fingerprint or contents differ is refused;
  // `expected_by` names who expects it ("model 'm.h5'"), for the message.
  std::optional<std::string> expected_fingerprint;
  std::string expected_by;
  // A distributed run's rank among `ranks`: it opens only the rows its
  // partition gives it (data/row_partition.h, whole HDF5 chunks), and the
  // O(n) vectors and resident X are those rows'.
  std::size_t rank = 0, ranks = 1;
};

class TrainingRows {
 public:
  TrainingRows(const std::string& path, const Standardisation& standardisation, Context& context,
               const TrainingRowsOptions& options);

  const DatasetDescription& description() const { return file_->description(); }
  // This rank's rows (all n in a single process), standardised.
  RowSource& rows() { return *rows_; }
  const RowPartition& partition() const { return partition_; }
  bool in_memory() const { return in_memory_ != nullptr; }

 private:
  std::unique_ptr<Hdf5RowSource> file_;
  std::unique_ptr<StandardisedRowSource> standardised_;
  RowPartition partition_;
  std::unique_ptr<PartitionedRows> partitioned_;  // when the run is distributed
  std::unique_ptr<RowSource> in_memory_;
  RowSource* rows_ = nullptr;
  MemoryReservation vectors_, resident_;
};

// Opens `path`: reserves the caller's O(n) vectors in the Context's budget,
// then holds X in memory when it fits in half of what remains (every pass is
// then a read of memory), else streams it from the file in blocks.
std::unique_ptr<TrainingRows> open_training_rows(const std::string& path, const Standardisation& standardisation,
                                                 Context& context, const TrainingRowsOptions& options = {});

// The dataset's own statistics as a standardisation.
Standardisation dataset_standardisation(const DatasetDescription& description);

}  // namespace gpstream

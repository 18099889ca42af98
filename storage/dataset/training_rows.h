// The training rows as the engine sees them: a dataset file or the caller's
// arrays, standardised on the fly, and held in memory when they fit the
// Context's budget — the one place that decides between resident and
// streamed. train, hyper and predict open their training data through it,
// from the command line or from Python, so all read it alike.
#pragma once

#include "engine/core/context.h"
#include "engine/data/partitioned_rows.h"
#include "engine/data/row_partition.h"
#include "engine/data/row_source.h"
#include "engine/data/standardisation.h"
#include "engine/kernels/kernel.h"
#include "storage/dataset/hdf5_row_source.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpstream {

// The caller's rows in memory, read in place (they must outlive what reads them).
struct DatasetArrays {
  const double* x = nullptr;  // rows×columns, row-major
  const double* y = nullptr;  // one target per row
  std::size_t rows = 0, columns = 0;
  std::vector<std::string> feature_names;  // empty: x1, x2, …
  std::string target_name = "y";
};

// Where training rows come from: a gpstream dataset file (`path`), or arrays.
struct TrainingData {
  std::string path;
  DatasetArrays arrays;

  static TrainingData file(std::string path) { return {.path = std::move(path), .arrays = {}}; }
  static TrainingData in_memory(DatasetArrays arrays) { return {.path = {}, .arrays = std::move(arrays)}; }
  bool from_arrays() const { return path.empty(); }
  // For messages: "'train.h5'" or "the arrays (1,000 rows)".
  std::string name() const;
};

// What a dataset file's header says, computed from arrays in one pass as
// DatasetWriter computes it (the same statistics and fingerprint, bit for
// bit, as the file `gpstream convert` would write): an error names the row
// and column of a value that is not finite.
DatasetDescription describe_arrays(const DatasetArrays& arrays);

struct TrainingRowsOptions {
  // O(n) vectors the caller will hold (α, g, y, diag K̄, …): reserved first,
  // refused up front with the figure needed when they alone do not fit.
  std::size_t vectors_per_row = 1;
  // O(n) vectors of all n rows that every rank holds whole (BCD's past
  // steps), reserved with them.
  std::size_t vectors_of_every_row = 0;
  // Said when the vectors do not fit, after "use fewer training rows".
  std::string vectors_advice;
  // When given, a dataset whose fingerprint or contents differ is refused;
  // `expected_by` names who expects it ("model 'm.h5'"), for the message.
  std::optional<std::string> expected_fingerprint;
  std::string expected_by;
  // A dataset file's contents are hashed again against its fingerprint (one
  // sequential read) unless the caller has done so already: a file edited in
  // place keeps its stored statistics and fingerprint, which then describe
  // other data.
  bool verify_contents = true;
  // A distributed run's rank among `ranks`: it opens only the rows its
  // partition gives it (data/row_partition.h, whole HDF5 chunks), and the
  // O(n) vectors and resident X are those rows'.
  std::size_t rank = 0, ranks = 1;
};

class TrainingRows {
 public:
  TrainingRows(const TrainingData& data, const Standardisation& standardisation, const MeanFunction& prior_mean,
               Context& context, const TrainingRowsOptions& options);

  const DatasetDescription& description() const { return description_; }
  // This rank's rows (all n in a single process), standardised.
  RowSource& rows() { return *rows_; }
  const RowPartition& partition() const { return partition_; }
  bool in_memory() const { return in_memory_ != nullptr; }

 private:
  DatasetDescription description_;
  std::unique_ptr<RowSource> source_;  // the file's rows, or the arrays
  std::unique_ptr<StandardisedRowSource> standardised_;
  RowPartition partition_;
  std::unique_ptr<PartitionedRows> partitioned_;  // when the run is distributed
  std::unique_ptr<RowSource> in_memory_;
  RowSource* rows_ = nullptr;
  MemoryReservation vectors_, resident_;
};

// Opens the data: reserves the caller's O(n) vectors in the Context's
// budget, then holds the standardised X in memory when it fits in half of
// what remains (every pass is then a read of memory), else streams it in
// blocks from the file (or from the arrays, standardising each block).
// `prior_mean` (with its coefficients; empty: none) is taken off the
// standardised targets: the rows hold the residual the GP models,
// y' = (y − y_mean)/y_std − m(x').
std::unique_ptr<TrainingRows> open_training_rows(const TrainingData& data, const Standardisation& standardisation,
                                                 const MeanFunction& prior_mean, Context& context,
                                                 const TrainingRowsOptions& options = {});
inline std::unique_ptr<TrainingRows> open_training_rows(const std::string& path, const Standardisation& standardisation,
                                                        const MeanFunction& prior_mean, Context& context,
                                                        const TrainingRowsOptions& options = {}) {
  return open_training_rows(TrainingData::file(path), standardisation, prior_mean, context, options);
}

// The dataset's own statistics as a standardisation.
Standardisation dataset_standardisation(const DatasetDescription& description);
// Inputs and targets in their own units (--no-standardise): for a
// stationary kernel the inputs are still centred on their means, which
// changes no distance x − z but keeps the kernel's expansion of D from
// cancelling where raw inputs lie far from the origin against the
// lengthscale (coordinates in metres, time stamps: stationary_kernel.cpp).
Standardisation unstandardised(const DatasetDescription& description, const KernelHyperparameters& kernel);

}  // namespace gpstream

// The training rows as the engine sees them: a dataset file, standardised on
// the fly, and held in memory when it fits the Context's budget — the one
// place that decides between resident and streamed. train, hyper and
// predict open their training data through it, so all read it alike.
#pragma once

#include "engine/core/context.h"
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
};

class TrainingRows {
 public:
  TrainingRows(const std::string& path, const Standardisation& standardisation, Context& context,
               const TrainingRowsOptions& options);

  const DatasetDescription& description() const { return file_->description(); }
  RowSource& rows() { return *rows_; }
  bool in_memory() const { return in_memory_ != nullptr; }

 private:
  std::unique_ptr<Hdf5RowSource> file_;
  std::unique_ptr<StandardisedRowSource> standardised_;
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

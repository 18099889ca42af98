// The training rows as the engine sees them: the dataset file, standardised
// on the fly, and held in memory when it fits the budget. Shared by train
// and predict so both read the data identically.
#pragma once

#include "engine/data/standardisation.h"
#include "storage/dataset/hdf5_row_source.h"

#include <memory>
#include <optional>
#include <string>

namespace gpstream::cli {

class TrainingData {
 public:
  // Opens `path`; when `expected_fingerprint` is given, refuses a dataset
  // whose contents differ (`what` names who expects it, for the message).
  //
  // The memory budget is the whole process's: first the caller's
  // `vectors_per_row` O(n) vectors (α, g, y, …) — refused up front with the
  // figure needed when they alone do not fit —, then X when it fits in half
  // of what remains (resident rows make every pass a read of memory), and the
  // rest, working_budget(), for blocks, tiles and the method's workspaces.
  TrainingData(const std::string& path, const Standardisation& standardisation, std::size_t memory_budget_bytes,
               const std::optional<std::string>& expected_fingerprint = std::nullopt, const std::string& what = "",
               std::size_t vectors_per_row = 1);

  const DatasetDescription& description() const { return file_->description(); }
  RowSource& rows() { return *rows_; }
  bool in_memory() const { return in_memory_ != nullptr; }
  std::size_t working_budget() const { return working_budget_; }
  // "budget 2.0 GiB: 1.4 MiB for 6 vectors of 30,000 rows, X held in memory (2.1 MiB), 2.0 GiB for blocks and tiles"
  std::string memory_summary() const { return memory_summary_; }

 private:
  std::unique_ptr<Hdf5RowSource> file_;
  std::unique_ptr<StandardisedRowSource> standardised_;
  std::unique_ptr<RowSource> in_memory_;
  RowSource* rows_ = nullptr;
  std::size_t working_budget_ = 0;
  std::string memory_summary_;
};

// The dataset's own statistics as a standardisation.
Standardisation dataset_standardisation(const DatasetDescription& description);

}  // namespace gpstream::cli

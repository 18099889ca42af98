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
  TrainingData(const std::string& path, const Standardisation& standardisation, std::size_t memory_budget_bytes,
               const std::optional<std::string>& expected_fingerprint = std::nullopt, const std::string& what = "");

  const DatasetDescription& description() const { return file_->description(); }
  RowSource& rows() { return *rows_; }
  bool in_memory() const { return in_memory_ != nullptr; }

 private:
  std::unique_ptr<Hdf5RowSource> file_;
  std::unique_ptr<StandardisedRowSource> standardised_;
  std::unique_ptr<RowSource> in_memory_;
  RowSource* rows_ = nullptr;
};

// The dataset's own statistics as a standardisation.
Standardisation dataset_standardisation(const DatasetDescription& description);

}  // namespace gpstream::cli

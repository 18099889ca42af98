#include "tools/training_data.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/row_source_utilities.h"
#include "storage/dataset/dataset_fingerprint.h"
#include "tools/command_line.h"

#include <fmt/format.h>

namespace gpstream::cli {

Standardisation dataset_standardisation(const DatasetDescription& description) {
  Standardisation standardisation;
  standardisation.x_mean = description.x_mean;
  standardisation.x_std = description.x_std;
  standardisation.y_mean = description.y_mean;
  standardisation.y_std = description.y_std;
  return standardisation;
}

TrainingData::TrainingData(const std::string& path, const Standardisation& standardisation,
                           std::size_t memory_budget_bytes, const std::optional<std::string>& expected_fingerprint,
                           const std::string& what, std::size_t vectors_per_row)
    : file_(std::make_unique<Hdf5RowSource>(path)) {
  const DatasetDescription& dataset = file_->description();
  GPSTREAM_CHECK(!expected_fingerprint || *expected_fingerprint == dataset.fingerprint,
                 "'{}' is not the dataset {} was trained on (its fingerprint is {}, expected {})", path, what,
                 dataset.fingerprint, expected_fingerprint.value_or(""));
  // The attribute matching is not enough: a file edited in place keeps it. One
  // sequential read checks that the contents still hash to it.
  if (expected_fingerprint) verify_dataset_contents(*file_);
  standardised_ = std::make_unique<StandardisedRowSource>(*file_, standardisation);
  rows_ = standardised_.get();
  const std::size_t vectors = checked_multiply(dataset.rows, vectors_per_row, sizeof(double));
  GPSTREAM_CHECK(vectors < memory_budget_bytes,
                 "'{}' has {} rows: the {} vectors of n values this needs take {} alone, more than the memory budget "
                 "of {}; raise --memory (at least {} more)",
                 path, format_count(dataset.rows), vectors_per_row, format_bytes(static_cast<double>(vectors)),
                 format_bytes(static_cast<double>(memory_budget_bytes)),
                 format_bytes(static_cast<double>(vectors - memory_budget_bytes / 2 + 1)));
  const std::size_t remaining = memory_budget_bytes - vectors;
  const std::size_t x_bytes = checked_multiply(dataset.rows, dataset.columns + 1, sizeof(double));
  working_budget_ = remaining;
  std::string x_text = "X streamed from the file in blocks";
  if (x_bytes <= remaining / 2) {
    in_memory_ = load_in_memory(*standardised_);
    rows_ = in_memory_.get();
    working_budget_ = remaining - x_bytes;
    x_text = fmt::format("X held in memory ({})", format_bytes(static_cast<double>(x_bytes)));
  }
  memory_summary_ = fmt::format("memory budget {}: {} for {} vectors of {} rows, {}, {} for blocks and tiles",
                                format_bytes(static_cast<double>(memory_budget_bytes)),
                                format_bytes(static_cast<double>(vectors)), vectors_per_row, format_count(dataset.rows),
                                x_text, format_bytes(static_cast<double>(working_budget_)));
}

}  // namespace gpstream::cli

#include "tools/training_data.h"

#include "engine/core/error.h"
#include "engine/data/row_source_utilities.h"
#include "storage/dataset/dataset_fingerprint.h"

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
                           const std::string& what)
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
  // Resident rows make every solver pass a read of memory; half the budget
  // may go to them, the rest to blocks and tiles.
  const double bytes = static_cast<double>(dataset.rows) * static_cast<double>(dataset.columns + 1) * sizeof(double);
  if (bytes <= static_cast<double>(memory_budget_bytes) / 2) {
    in_memory_ = load_in_memory(*standardised_);
    rows_ = in_memory_.get();
  }
}

}  // namespace gpstream::cli

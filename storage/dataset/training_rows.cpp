#include "storage/dataset/training_rows.h"

#include "engine/core/error.h"
#include "engine/core/human_readable.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/row_source_utilities.h"
#include "storage/dataset/dataset_fingerprint.h"

#include <fmt/format.h>

namespace gpstream {

Standardisation dataset_standardisation(const DatasetDescription& description) {
  Standardisation standardisation;
  standardisation.x_mean = description.x_mean;
  standardisation.x_std = description.x_std;
  standardisation.y_mean = description.y_mean;
  standardisation.y_std = description.y_std;
  return standardisation;
}

TrainingRows::TrainingRows(const std::string& path, const Standardisation& standardisation, Context& context,
                           const TrainingRowsOptions& options)
    : file_(std::make_unique<Hdf5RowSource>(path)) {
  const DatasetDescription& dataset = file_->description();
  GPSTREAM_CHECK(dataset.rows > 0, "'{}' has no rows to train on", path);
  standardisation.validate(path, dataset.feature_names, dataset.target_name);
  GPSTREAM_CHECK(!options.expected_fingerprint || *options.expected_fingerprint == dataset.fingerprint,
                 "'{}' is not the dataset {} was trained on (its fingerprint is {}, expected {})", path,
                 options.expected_by, dataset.fingerprint, options.expected_fingerprint.value_or(""));
  // The attribute matching is not enough: a file edited in place keeps it. One
  // sequential read checks that the contents still hash to it.
  if (options.expected_fingerprint) verify_dataset_contents(*file_);
  standardised_ = std::make_unique<StandardisedRowSource>(*file_, standardisation);
  rows_ = standardised_.get();
  partition_ = partition_rows(dataset.rows, file_->preferred_block_alignment(), options.rank, options.ranks);
  if (options.ranks > 1) {
    partitioned_ = std::make_unique<PartitionedRows>(*standardised_, partition_);
    rows_ = partitioned_.get();
  }
  const std::size_t rows = partition_.count;
  vectors_ = context.memory().reserve(
      fmt::format("{} vectors of {} values", options.vectors_per_row, format_count(rows)),
      checked_multiply(rows, options.vectors_per_row, sizeof(double)), "use fewer training rows");
  const std::size_t x_bytes = checked_multiply(rows, dataset.columns + 1, sizeof(double));
  if (x_bytes <= context.memory().available() / 2) {
    resident_ = context.memory().reserve("X held in memory", x_bytes);
    in_memory_ = load_in_memory(*rows_);
    rows_ = in_memory_.get();
  }
}

std::unique_ptr<TrainingRows> open_training_rows(const std::string& path, const Standardisation& standardisation,
                                                 Context& context, const TrainingRowsOptions& options) {
  return std::make_unique<TrainingRows>(path, standardisation, context, options);
}

}  // namespace gpstream

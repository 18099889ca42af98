#include "storage/dataset/training_rows.h"

#include "engine/core/error.h"
#include "engine/core/human_readable.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/in_memory_row_source.h"
#include "engine/data/row_source_utilities.h"
#include "storage/dataset/dataset_fingerprint.h"

#include <fmt/format.h>

#include <filesystem>

#include <cmath>

namespace gpstream {

Standardisation dataset_standardisation(const DatasetDescription& description) {
  Standardisation standardisation;
  standardisation.x_mean = description.x_mean;
  standardisation.x_std = description.x_std;
  standardisation.y_mean = description.y_mean;
  standardisation.y_std = description.y_std;
  return standardisation;
}

Standardisation unstandardised(const DatasetDescription& description, const KernelHyperparameters& kernel) {
  Standardisation standardisation = Standardisation::identity();
  if (!is_stationary(kernel)) return standardisation;
  standardisation.x_mean = description.x_mean;
  standardisation.x_std.assign(description.x_mean.size(), 1.0);
  return standardisation;
}

std::string TrainingData::name() const {
  return from_arrays() ? fmt::format("the arrays ({} rows)", format_count(arrays.rows)) : "'" + path + "'";
}

DatasetDescription describe_arrays(const DatasetArrays& arrays) {
  GPSTREAM_CHECK(arrays.columns > 0, "the training arrays have no input columns");
  GPSTREAM_CHECK(arrays.rows == 0 || (arrays.x != nullptr && arrays.y != nullptr), "the training arrays need X and y");
  DatasetDescription description;
  description.path = "";
  description.rows = arrays.rows;
  description.columns = arrays.columns;
  description.feature_names = arrays.feature_names;
  if (description.feature_names.empty()) {
    for (std::size_t j = 1; j <= arrays.columns; ++j) description.feature_names.push_back(fmt::format("x{}", j));
  }
  GPSTREAM_CHECK(description.feature_names.size() == arrays.columns, "{} feature names for {} input columns",
                 description.feature_names.size(), arrays.columns);
  description.target_name = arrays.target_name;
  description.source = "arrays";
  for (std::size_t i = 0; i < arrays.rows; ++i) {
    const double* row = arrays.x + i * arrays.columns;
    for (std::size_t j = 0; j < arrays.columns; ++j) {
      GPSTREAM_CHECK_ARGUMENT(std::isfinite(row[j]), "X[{}, {}] is {}: every input must be a finite number", i, j, row[j]);
    }
    GPSTREAM_CHECK_ARGUMENT(std::isfinite(arrays.y[i]), "y[{}] is {}: every target must be a finite number", i, arrays.y[i]);
  }
  DatasetSummary summary(arrays.columns);
  if (arrays.rows > 0) summary.add_rows(arrays.rows, arrays.x, arrays.y);
  const Standardisation statistics = summary.statistics();
  description.x_mean = statistics.x_mean;
  description.x_std = statistics.x_std;
  description.y_mean = statistics.y_mean;
  description.y_std = statistics.y_std;
  description.fingerprint = summary.fingerprint();
  return description;
}

TrainingRows::TrainingRows(const TrainingData& data, const Standardisation& standardisation,
                           const MeanFunction& prior_mean, Context& context, const TrainingRowsOptions& options) {
  if (data.from_arrays()) {
    description_ = describe_arrays(data.arrays);
    source_ = std::make_unique<BorrowedRowSource>(data.arrays.x, data.arrays.y, data.arrays.rows, data.arrays.columns);
  } else {
    std::error_code error;
    if (!options.expected_by.empty() && !std::filesystem::exists(data.path, error)) {
      throw InvalidArgument(fmt::format(
          "the training dataset of {}, '{}', does not exist (moved or removed?): give where it is now with `data`",
          options.expected_by, data.path));
    }
    auto file = std::make_unique<Hdf5RowSource>(data.path);
    description_ = file->description();
    // The attributes are not enough: a file edited in place keeps them. One
    // sequential read checks that the contents still hash to the fingerprint.
    const bool expected = !options.expected_fingerprint || *options.expected_fingerprint == description_.fingerprint;
    if (options.verify_contents && expected && description_.rows > 0) verify_dataset_contents(*file);
    source_ = std::move(file);
  }
  const DatasetDescription& dataset = description_;
  const std::string name = data.name();
  GPSTREAM_CHECK(dataset.rows > 0, "{} has no rows to train on", name);
  standardisation.validate(data.from_arrays() ? "the arrays" : data.path, dataset.feature_names, dataset.target_name);
  GPSTREAM_CHECK(!options.expected_fingerprint || *options.expected_fingerprint == dataset.fingerprint,
                 "{} is not the dataset {} was trained on (its fingerprint is {}, expected {})", name,
                 options.expected_by, dataset.fingerprint, options.expected_fingerprint.value_or(""));
  standardised_ = std::make_unique<StandardisedRowSource>(*source_, standardisation, prior_mean);
  rows_ = standardised_.get();
  partition_ = partition_rows(dataset.rows, source_->preferred_block_alignment(), options.rank, options.ranks);
  if (options.ranks > 1) {
    partitioned_ = std::make_unique<PartitionedRows>(*standardised_, partition_);
    rows_ = partitioned_.get();
  }
  const std::size_t rows = partition_.count;
  const std::size_t own = options.vectors_per_row, every = options.vectors_of_every_row;
  const std::string vectors = every == 0 ? fmt::format("{} vectors of {} values", own, format_count(rows))
                              : rows == dataset.rows
                                  ? fmt::format("{} vectors of {} values", own + every, format_count(rows))
                                  : fmt::format("{} vectors of {} values and {} of {}", own, format_count(rows), every,
                                                format_count(dataset.rows));
  vectors_ = context.memory().reserve(
      vectors,
      checked_add(checked_multiply(rows, own, sizeof(double)), checked_multiply(dataset.rows, every, sizeof(double))),
      "use fewer training rows" + options.vectors_advice);
  const std::size_t x_bytes = checked_multiply(rows, dataset.columns + 1, sizeof(double));
  if (x_bytes <= context.memory().available() / 2) {
    resident_ = context.memory().reserve("X held in memory", x_bytes);
    in_memory_ = load_in_memory(*rows_);
    rows_ = in_memory_.get();
  }
}

std::unique_ptr<TrainingRows> open_training_rows(const TrainingData& data, const Standardisation& standardisation,
                                                 const MeanFunction& prior_mean, Context& context,
                                                 const TrainingRowsOptions& options) {
  return std::make_unique<TrainingRows>(data, standardisation, prior_mean, context, options);
}

}  // namespace gpstream

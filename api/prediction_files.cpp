#include "api/prediction_files.h"

#include "engine/core/error.h"
#include "storage/csv/csv_table.h"
#include "storage/csv/csv_writer.h"
#include "storage/dataset/hdf5_row_source.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/sparse_model_file.h"
#include "storage/output/atomic_output_file.h"
#include "storage/scratch/scratch_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace gpstream {

TestSet read_test_set(const std::string& path, const ModelDescription& model_description) {
  TestSet test;
  // A CSV is told by its contents, not its name (test.CSV, <(cat test.csv), a table without a suffix).
  std::error_code ignored;
  if (path == "-" || (std::filesystem::exists(path, ignored) && !hdf5::is_hdf5_file(path))) {
    CsvInputs inputs = read_csv_inputs(path, model_description.feature_names, model_description.target_name);
    test.rows = inputs.rows;
    test.x = std::move(inputs.x);
    test.y = std::move(inputs.y);
    return test;
  }
  Hdf5RowSource source(path);
  const std::vector<std::string>& names = source.description().feature_names;
  const std::size_t d = model_description.columns, columns = source.columns();
  std::vector<std::size_t> column_of(d);  // the dataset's column of each of the model's inputs
  std::vector<std::string> missing;
  for (std::size_t j = 0; j < d; ++j) {
    const auto found = std::find(names.begin(), names.end(), model_description.feature_names[j]);
    if (found == names.end()) missing.push_back(fmt::format("\"{}\"", model_description.feature_names[j]));
    column_of[j] = static_cast<std::size_t>(found - names.begin());
  }
  GPSTREAM_CHECK(missing.empty(),
                 "'{}' has no input{} named {}, which the model needs (its inputs: {}; the model's: {}); inputs are "
                 "matched by name: convert the test rows with the training data's column names",
                 path, missing.size() == 1 ? "" : "s", fmt::join(missing, ", "), fmt::join(names, ", "),
                 fmt::join(model_description.feature_names, ", "));
  test.rows = source.rows();
  std::vector<double> rows(test.rows * columns);
  test.y.emplace(test.rows);
  source.read_rows(0, test.rows, rows.data(), test.y->data());
  test.x.resize(test.rows * d);
  for (std::size_t i = 0; i < test.rows; ++i) {
    for (std::size_t j = 0; j < d; ++j) test.x[i * d + j] = rows[i * columns + column_of[j]];
  }
  return test;
}

void PredictionTableWriter::set_means(std::span<const double> mean) {
  distribution_.mean.assign(mean.begin(), mean.end());
  if (options_.with_variance) distribution_.variance.assign(mean.size(), 0.0);
  if (!resumed_) return;
  const PredictionTable& table = *resumed_;
  GPSTREAM_CHECK(table.mean.size() == rows(), "`resume`: '{}' has {} rows but '{}' has {}", options_.path,
                 table.mean.size(), options_.inputs, rows());
  const double scale = model_.standardisation.y_std;
  for (std::size_t i = 0; i < rows(); ++i) {
    // Means are deterministic up to the thread count's last bits.
    GPSTREAM_CHECK(std::abs(table.mean[i] - distribution_.mean[i]) <= 1e-9 * scale,
                   "`resume`: the mean of row {} in '{}' is {} but this model predicts {} there: the file is not "
                   "from this model and these inputs; predict to another file",
                   i + 1, options_.path, table.mean[i], distribution_.mean[i]);
    distribution_.mean[i] = table.mean[i];  // the file's, to the bit
  }
  std::copy(table.variance.begin(), table.variance.end(), distribution_.variance.begin());
  written_ = table.variance.size();
}

void PredictionTableWriter::publish_means() {
  if (options_.with_variance && !resumed_ && written_ == 0 && !is_standard_stream(options_.path)) {
    publish();
    published_early_ = true;
  }
}

void PredictionTableWriter::discard() {
  if (published_early_) std::filesystem::remove(options_.path);
}

void PredictionTableWriter::write_variances(std::size_t first, std::span<const double> variance) {
  GPSTREAM_CHECK(first == written_, "variances arrived for row {} after row {}", first + 1, written_);
  std::copy(variance.begin(), variance.end(), distribution_.variance.begin() + static_cast<long>(first));
  written_ += variance.size();
  const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_published_).count();
  if (!is_standard_stream(options_.path) && written_ < rows() && since >= options_.publish_every_seconds) publish();
}

void PredictionTableWriter::publish() {
  CsvWriter csv(options_.path, prediction_header(options_.with_variance, options_.latent), overwrite_);
  for (std::size_t i = 0; i < rows(); ++i) {
    if (i < written_ && options_.with_variance) {
      const double row[3] = {distribution_.mean[i], distribution_.variance[i], std::sqrt(distribution_.variance[i])};
      csv.write_row(row);
    } else {
      csv.write_row(std::span<const double>(&distribution_.mean[i], 1), options_.with_variance ? 2 : 0);
    }
  }
  csv.finish();
  overwrite_ = true;  // from here on the file is this run's own
  last_published_ = std::chrono::steady_clock::now();
}

PredictionTable table_to_resume(const std::string& path, bool latent) {
  PredictionTable table = read_prediction_table(path);
  GPSTREAM_CHECK(table.has_variance_columns, "`resume`: '{}' has no variance column to continue", path);
  GPSTREAM_CHECK(table.latent == latent,
                 "`resume`: '{}' holds variances of {} but this run asks for those of {}; resume with the options "
                 "of the run that wrote it",
                 path, table.latent ? "f* (`latent`)" : "y*", latent ? "f* (`latent`)" : "y*");
  return table;
}

std::string model_file_type(const std::string& path) { return model_type_of(path); }

void put_scratch_in(VarianceOptions& options, const std::string& directory) {
  options.open_factor_store = scratch_files_in(directory);
  options.factor_store_room = scratch_room_in(directory);
}

}  // namespace gpstream

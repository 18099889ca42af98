// Predictions and files, for a front end that reads its test rows from one
// and writes its predictions to another (`gpstream predict`): the test rows
// of a CSV or a dataset matched to the model's inputs by name, the table of
// predictions published as its variances arrive (and continued after a
// stop), the metrics against known targets, and where the variance route's
// scratch files go. Python predicts on arrays: predictor.h alone.
#pragma once

#include "api/predictor.h"
#include "engine/prediction/prediction_metrics.h"
#include "engine/prediction/predictive_distribution.h"
#include "storage/csv/prediction_table.h"

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gpstream {

struct TestSet {
  std::size_t rows = 0;
  std::vector<double> x;
  std::optional<std::vector<double>> y;
};

// The test rows at `path`, in the model's columns, matched by name in a CSV with a header and in a dataset
// alike: a dataset converted from a CSV whose columns are in another order predicts the same, and one
// without the model's columns is refused. A CSV is told by its contents, not its name.
TestSet read_test_set(const std::string& path, const ModelDescription& model_description);

// Where a table of predictions goes and what it holds.
struct PredictionTableSettings {
  std::string path;    // the table (CSV; "-": standard output, written once at the end)
  std::string inputs;  // the test rows' file, for messages
  bool with_variance = false, latent = false;
  double publish_every_seconds = 60;
};

// Holds the predictions in the target's units and publishes them as a
// whole table: a dense model's variances arrive a batch at a time after the
// means; the rows with their variances so far, the others with means only,
// are published every `publish_every_seconds` (a run killed at any
// instant, SIGKILL too, leaves the last such table, which a resumed run
// continues), when the run stops, and at its end. A resumed run starts from
// the rows of the file it continues (set_means checks that they are this
// model's on these inputs). Standard output ("-") gets the table once, at the end.
class PredictionTableWriter {
 public:
  PredictionTableWriter(const ModelDescription& model, PredictionTableSettings settings,
                        std::optional<PredictionTable> resumed, bool overwrite)
      : model_(model),
        options_(std::move(settings)),
        resumed_(std::move(resumed)),
        overwrite_(overwrite),
        last_published_(std::chrono::steady_clock::now()) {}

  std::size_t written() const { return written_; }  // rows with everything asked for
  std::size_t rows() const { return distribution_.mean.size(); }
  const PredictiveDistribution& distribution() const { return distribution_; }

  // The means of every row (in the target's units, as the Predictor gives them); the rows of the run resumed.
  void set_means(std::span<const double> mean);
  // A fresh variance run publishes its means as its variances begin: killed at any instant after that, it
  // leaves a table that a resumed run continues, however long its first window of variances takes.
  void publish_means();
  // A run that fails (not one stopped: its table is to be resumed) leaves no table of its own behind.
  void discard();
  // Rows first … first + variance.size() − 1 with their variances (in the target's units).
  void write_variances(std::size_t first, std::span<const double> variance);
  // The table as it stands: the rows done, the others with means only (empty variance and std when asked for).
  void publish();

 private:
  const ModelDescription& model_;
  PredictionTableSettings options_;
  std::optional<PredictionTable> resumed_;
  bool overwrite_;
  std::chrono::steady_clock::time_point last_published_;
  PredictiveDistribution distribution_;
  std::size_t written_ = 0;
  bool published_early_ = false;  // publish_means() wrote the table this run began
};

// A table a stopped run published, to continue (`resume`): its variances must be those asked for now.
PredictionTable table_to_resume(const std::string& path, bool latent);

// The kind of model a file holds ("dense" or "sparse"), from its header.
std::string model_file_type(const std::string& path);

// The variance route's factor, where it does not fit the memory budget, goes to scratch files in `directory`.
void put_scratch_in(VarianceOptions& options, const std::string& directory);

}  // namespace gpstream

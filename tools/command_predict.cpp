// gpstream predict MODEL.h5 INPUTS.h5|INPUTS.csv -o PREDICTIONS.csv
#include "engine/core/error.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/models/dense_prediction.h"
#include "storage/csv/csv_table.h"
#include "storage/csv/csv_writer.h"
#include "storage/dataset/hdf5_row_source.h"
#include "storage/model/dense_model_file.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/training_data.h"

#include <fmt/format.h>

#include <chrono>

namespace gpstream::cli {
namespace {

struct TestSet {
  std::size_t rows = 0;
  std::vector<double> x;
  std::optional<std::vector<double>> y;
};

TestSet read_test_set(const std::string& path, const DenseModel& model) {
  TestSet test;
  if (path.ends_with(".csv") || path == "-") {
    CsvInputs inputs = read_csv_inputs(path, model.feature_names, model.target_name);
    test.rows = inputs.rows;
    test.x = std::move(inputs.x);
    test.y = std::move(inputs.y);
    return test;
  }
  Hdf5RowSource source(path);
  GPSTREAM_CHECK(source.columns() == model.columns,
                 "'{}' has {} inputs but the model was trained on {} (columns {}); use inputs with the same columns", path,
                 source.columns(), model.columns, fmt::join(model.feature_names, ", "));
  test.rows = source.rows();
  test.x.resize(test.rows * source.columns());
  test.y.emplace(test.rows);
  source.read_rows(0, test.rows, test.x.data(), test.y->data());
  return test;
}

}  // namespace

int run_predict(const std::vector<std::string>& args) {
  CommandSpec spec;
  spec.name = "predict";
  spec.usage = "gpstream predict MODEL.h5 INPUTS.h5|INPUTS.csv -o PREDICTIONS.csv [options]";
  spec.description =
      "Predict the mean for each input row, in the target's original units. A dense model streams its\n"
      "training rows (the dataset it references) once per block of test rows. When the inputs carry\n"
      "targets (a dataset's /y, or a CSV column named like the model's target) or --truth gives them,\n"
      "the normalised RMSE of the GBCD paper, eq. (16), is reported.";
  std::string model_path, inputs_path, output, data_path, truth_path;
  ComputeOptions compute;
  spec.options.add_options()
      ("model", po::value(&model_path)->required(), "model file from gpstream train")
      ("inputs", po::value(&inputs_path)->required(), "test inputs: a dataset (.h5) or a CSV file")
      ("output,o", po::value(&output)->required(), "predictions (CSV), or - for standard output")
      ("data", po::value(&data_path), "the training dataset, if it moved since training")
      ("truth", po::value(&truth_path), "targets for the inputs (CSV or dataset), to report the RMSE")
      ("force", "overwrite the output if it exists")
      ("quiet,q", "no summary on stderr");
  compute.add(spec.options);
  spec.positional.add("model", 1).add("inputs", 1);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;
  const bool quiet = values.count("quiet") != 0;
  const std::size_t memory_budget = compute.memory_budget_bytes();
  const auto thread_limit = compute.apply();

  const DenseModel model = read_dense_model(model_path);
  TestSet test = read_test_set(inputs_path, model);
  if (!truth_path.empty()) {
    const TestSet truth = read_test_set(truth_path, model);
    GPSTREAM_CHECK(truth.y && truth.rows == test.rows, "--truth: '{}' does not hold {} targets named \"{}\"", truth_path,
                   test.rows, model.target_name);
    test.y = truth.y;
  }
  CsvWriter writer(output, {"mean"}, values.count("force") != 0);

  const auto start = std::chrono::steady_clock::now();
  TrainingData training(data_path.empty() ? model.dataset_path : data_path, model.standardisation, memory_budget,
                        model.dataset_fingerprint, "model '" + model_path + "'");
  GPSTREAM_CHECK(training.description().rows == model.rows, "the training dataset has {} rows but the model {} weights",
                 training.description().rows, model.rows);
  const std::unique_ptr<Kernel> kernel = make_kernel(model.hyperparameters, model.columns);
  KernelMatrix kernel_matrix(training.rows(), *kernel, {.memory_budget_bytes = memory_budget});
  model.standardisation.apply_to_rows(test.x.data(), test.rows, model.columns);
  std::vector<double> mean = predict_mean(kernel_matrix, model.alpha, test.x.data(), test.rows);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  for (double& value : mean) {
    value = model.standardisation.restore_target(value);
    writer.write_row(std::span<const double>(&value, 1));
  }
  writer.finish();
  if (!quiet) {
    fmt::print(stderr, "predict: {} rows in {:.2f} s ({:.3g} ms per row)\n", format_count(test.rows), seconds,
               1e3 * seconds / static_cast<double>(std::max<std::size_t>(test.rows, 1)));
    if (test.y) {
      // Eq. (16): errors relative to the training targets' variance.
      const double training_variance = model.standardisation.y_std * model.standardisation.y_std;
      fmt::print(stderr, "predict: RMSE (GBCD paper eq. 16, relative to the training variance) {:.6f}\n",
                 normalised_rmse(*test.y, mean, training_variance));
    }
  }
  return 0;
}

}  // namespace gpstream::cli

// gpstream predict MODEL.h5 INPUTS.h5|INPUTS.csv -o PREDICTIONS.csv
#include "engine/core/error.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/models/dense_prediction.h"
#include "engine/models/dense_variance.h"
#include "engine/models/prediction_metrics.h"
#include "storage/csv/csv_table.h"
#include "storage/csv/csv_writer.h"
#include "storage/dataset/hdf5_row_source.h"
#include "storage/model/dense_model_file.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/interrupt_handler.h"
#include "tools/progress_line.h"
#include "tools/training_data.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

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
      "training rows (the dataset it references) once per block of test rows. With --variance, also the\n"
      "predictive variance and standard deviation of a new observation y* (noise included; --latent for\n"
      "the noise-free f*): one solve (K + noise I) u = k* per row, by GBCD on batches of rows that share\n"
      "every kernel block. When the inputs carry targets (a dataset's /y, or a CSV column named like the\n"
      "model's target) or --truth gives them, prints the normalised RMSE (GBCD paper eq. 16), SMSE, MAE\n"
      "and, with --variance, SNLP (cholqr paper eq. 22) and the coverage of mean +- 2 std.";
  std::string model_path, inputs_path, output, data_path, truth_path;
  VarianceOptions variance_options;
  ComputeOptions compute;
  spec.options.add_options()
      ("model", po::value(&model_path)->required(), "model file from gpstream train")
      ("inputs", po::value(&inputs_path)->required(), "test inputs: a dataset (.h5) or a CSV file")
      ("output,o", po::value(&output)->required(), "predictions (CSV), or - for standard output")
      ("data", po::value(&data_path), "the training dataset, if it moved since training")
      ("truth", po::value(&truth_path), "targets for the inputs (CSV or dataset), to report the RMSE")
      ("force", "overwrite the output if it exists")
      ("quiet,q", "no summary on stderr")
      ("variance", "also write the predictive variance and standard deviation")
      ("latent", "with --variance: of the latent f* (without the noise variance) instead of y*")
      ("variance-tol", po::value(&variance_options.tolerance)->default_value(3e-5, "3e-5"), "stop each row's solve at |K u - k*|inf <= tol")
      ("batch-rows", po::value(&variance_options.batch_rows)->default_value(0), "test rows solved together (0: as many as --memory allows, up to 1024)")
      ("active-set", po::value(&variance_options.active_set_size)->default_value(500), "active set size m of the variance solves")
      ("candidates", po::value(&variance_options.candidates)->default_value(60), "random candidates kappa per greedy step")
      ("seed", po::value(&variance_options.seed)->default_value(1), "random seed of the variance solves");
  compute.add(spec.options);
  spec.positional.add("model", 1).add("inputs", 1);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;
  const bool quiet = values.count("quiet") != 0;
  const bool with_variance = values.count("variance") != 0;
  const bool latent = values.count("latent") != 0;
  if (latent && !with_variance) throw UsageError("--latent needs --variance");
  if (!(variance_options.tolerance > 0)) {
    throw UsageError(fmt::format("--variance-tol must be positive, not {}", variance_options.tolerance));
  }
  if (variance_options.active_set_size == 0) throw UsageError("--active-set must be at least 1");
  if (variance_options.candidates == 0) throw UsageError("--candidates must be at least 1");
  const std::size_t memory_budget = compute.memory_budget_bytes();
  variance_options.memory_budget_bytes = memory_budget;
  const auto thread_limit = compute.apply();

  const DenseModel model = read_dense_model(model_path);
  TestSet test = read_test_set(inputs_path, model);
  if (!truth_path.empty()) {
    const TestSet truth = read_test_set(truth_path, model);
    GPSTREAM_CHECK(truth.y && truth.rows == test.rows, "--truth: '{}' does not hold {} targets named \"{}\"", truth_path,
                   test.rows, model.target_name);
    test.y = truth.y;
  }
  CsvWriter writer(output, with_variance ? std::vector<std::string>{"mean", "variance", "std"} : std::vector<std::string>{"mean"},
                   values.count("force") != 0);

  const auto start = std::chrono::steady_clock::now();
  TrainingData training(data_path.empty() ? model.dataset_path : data_path, model.standardisation, memory_budget,
                        model.dataset_fingerprint, "model '" + model_path + "'");
  GPSTREAM_CHECK(training.description().rows == model.rows, "the training dataset has {} rows but the model {} weights",
                 training.description().rows, model.rows);
  const std::unique_ptr<Kernel> kernel = make_kernel(model.hyperparameters, model.columns);
  KernelMatrix kernel_matrix(training.rows(), *kernel, {.memory_budget_bytes = memory_budget});
  model.standardisation.apply_to_rows(test.x.data(), test.rows, model.columns);
  std::vector<double> mean = predict_mean(kernel_matrix, model.alpha, test.x.data(), test.rows);
  const double mean_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Variances of y* (or f*) in the target's units: standardised variances times y_std².
  std::vector<double> variance;
  double variance_seconds = 0.0;
  if (with_variance) {
    StopFlag stop;
    InterruptHandler interrupts(stop);
    ProgressLine progress(!quiet);
    const auto variance_start = std::chrono::steady_clock::now();
    const VariancePrediction prediction = predict_latent_variance(
        kernel_matrix, test.x.data(), test.rows, variance_options,
        [&](const VarianceProgress& p) {
          progress.update(fmt::format("variance: rows {}-{} of {}: iteration {}, {} rows open, max |g|inf {:.3e} (tol {:.0e})",
                                      p.rows_done + 1, p.rows_done + p.batch_rows, p.rows_total, p.iteration, p.open_rows,
                                      p.gradient_max_norm, variance_options.tolerance));
        },
        &stop);
    progress.finish();
    variance_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - variance_start).count();
    const double scale = model.standardisation.y_std * model.standardisation.y_std;
    const double noise = latent ? 0.0 : model.hyperparameters.noise_variance;
    variance.resize(test.rows);
    for (std::size_t i = 0; i < test.rows; ++i) variance[i] = scale * (prediction.latent[i] + noise);
    if (!quiet) {
      fmt::print(stderr, "predict: variances of {} in {:.2f} s ({:.3g} ms per row): {} batches of up to {} rows, {} "
                 "iterations, max |g|inf {:.2e}\n",
                 latent ? "f* (latent, noise excluded)" : "y* (noise included)", variance_seconds,
                 1e3 * variance_seconds / static_cast<double>(std::max<std::size_t>(test.rows, 1)), prediction.batches,
                 prediction.batch_rows, prediction.iterations, prediction.gradient_max_norm);
      if (prediction.unconverged_rows > 0) {
        fmt::print(stderr, "predict: warning: {} rows stopped above --variance-tol\n", prediction.unconverged_rows);
      }
    }
  }

  for (std::size_t i = 0; i < test.rows; ++i) {
    mean[i] = model.standardisation.restore_target(mean[i]);
    if (with_variance) {
      const double row[3] = {mean[i], variance[i], std::sqrt(variance[i])};
      writer.write_row(row);
    } else {
      writer.write_row(std::span<const double>(&mean[i], 1));
    }
  }
  writer.finish();
  if (!quiet) {
    fmt::print(stderr, "predict: means of {} rows in {:.2f} s ({:.3g} ms per row)\n", format_count(test.rows), mean_seconds,
               1e3 * mean_seconds / static_cast<double>(std::max<std::size_t>(test.rows, 1)));
    if (test.y) {
      // Against the training targets' mean and variance (eq. 16, the SNLP's trivial model). SNLP and coverage
      // use the variance written: of y* for noisy targets, of f* (--latent) for noise-free ones.
      const PredictionMetrics metrics =
          evaluate_predictions(*test.y, mean, variance, model.standardisation.y_mean,
                               model.standardisation.y_std * model.standardisation.y_std);
      fmt::print(stderr, "predict: RMSE (GBCD paper eq. 16, relative to the training variance) {:.6f}\n",
                 metrics.normalised_rmse);
      fmt::print(stderr, "predict: SMSE {:.6f}, MAE {:.6g}\n", metrics.smse, metrics.mae);
      if (metrics.snlp) {
        fmt::print(stderr, "predict: SNLP (cholqr paper eq. 22) {:.6f}, coverage of mean +- 2 std {:.4f} (variance of {})\n",
                   *metrics.snlp, *metrics.coverage, latent ? "f*" : "y*");
      }
    }
  }
  return 0;
}

}  // namespace gpstream::cli

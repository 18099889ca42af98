// The API (api/): training from arrays and from files, the Model, the
// predictor over either, and a stopped run resumed from its checkpoint.
#include "api/datasets.h"
#include "api/parameter_schema.h"
#include "api/predictor.h"
#include "api/training.h"
#include "engine/core/error.h"
#include "engine/core/stop_flag.h"
#include "engine/training/training_method.h"
#include "engine/dense_reference.h"
#include "api/problem_arrays.h"
#include "engine/problems.h"
#include "storage/checkpoint/checkpoint_file.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace gpstream {
namespace {

using testing::arrays_of;
using testing::make_problem;
using testing::ScratchDirectory;

// gbcd on the problem's kernel, `iterations` at most, with the data's own standardisation.
TrainingConfiguration configuration_for(const DatasetDescription& dataset, std::uint64_t iterations) {
  TrainingConfiguration configuration;
  configuration.solver = {"gbcd", 40, 30};
  configuration.prior.kernel = testing::se_ard(dataset.columns, 1.2, 0.05);
  configuration.standardisation = dataset_standardisation(dataset);
  configuration.job.stopping.tolerance = 1e-10;
  configuration.job.stopping.max_iterations = iterations;
  return configuration;
}

TrainingResult train(Context& context, const TrainingData& data, std::uint64_t iterations,
                     const std::string& checkpoint = "") {
  Training training(context, data, configuration_for(describe_training_data(data), iterations));
  training.prepare({});
  return training.run(checkpoint);
}

// Stops the run (the Context's stop request) once it reaches `iteration`.
class StopAt final : public RunObserver {
 public:
  StopAt(StopFlag& stop, std::uint64_t iteration) : stop_(stop), iteration_(iteration) {}
  void on_iteration(const IterationReport& report) override {
    if (report.iteration >= iteration_) stop_.request();
  }

 private:
  StopFlag& stop_;
  std::uint64_t iteration_;
};

TEST_CASE("api: training on arrays gives the model of training on their dataset file, bit for bit") {
  const testing::Problem problem = make_problem(600, 3, 11);
  const ScratchDirectory scratch;
  const std::string file = scratch.file("train.h5");
  write_dataset(file, arrays_of(problem), {});
  // The arrays' description is the file's: statistics and fingerprint as convert computes them.
  const DatasetDescription from_arrays = describe_arrays(arrays_of(problem));
  const DatasetDescription from_file = describe_training_data(TrainingData::file(file));
  CHECK(from_arrays.fingerprint == from_file.fingerprint);
  CHECK(from_arrays.x_mean == from_file.x_mean);
  CHECK(from_arrays.x_std == from_file.x_std);
  CHECK(from_arrays.y_std == from_file.y_std);

  Context context({.memory_budget_bytes = 64u << 20});
  const TrainingResult on_arrays = train(context, TrainingData::in_memory(arrays_of(problem)), 60);
  const TrainingResult on_file = train(context, TrainingData::file(file), 60);
  REQUIRE(on_arrays.model);
  REQUIRE(on_file.model);
  CHECK(on_arrays.run.last.iteration == 60);
  const std::span<const double> a = on_arrays.model->weights(), b = on_file.model->weights();
  CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  CHECK(on_arrays.model->description().dataset_path.empty());  // arrays have no path; the file's model has its own
  CHECK(on_file.model->description().dataset_path == std::filesystem::absolute(file).string());
}

TEST_CASE("api: a converged Training's weights solve K̄α = y, as the Cholesky factor does") {
  const testing::Problem problem = make_problem(300, 2, 5);
  Context context({.memory_budget_bytes = 64u << 20});
  const TrainingData data = TrainingData::in_memory(arrays_of(problem));
  const TrainingResult result = train(context, data, std::numeric_limits<std::uint64_t>::max());
  REQUIRE(result.model);
  CHECK(result.run.reason == StopReason::converged);
  // The reference: K̄ of the standardised rows, factored.
  const DatasetDescription dataset = describe_arrays(arrays_of(problem));
  const Standardisation standardisation = dataset_standardisation(dataset);
  std::vector<double> x = problem.x, y = problem.y;
  standardisation.apply_to_rows(x.data(), problem.rows(), problem.d);
  for (double& value : y) value = (value - standardisation.y_mean) / standardisation.y_std;
  const KernelHyperparameters hyperparameters = testing::se_ard(problem.d, 1.2, 0.05);
  const std::size_t n = problem.rows();
  std::vector<double> k = testing::kernel_block(hyperparameters, x, x, problem.d);
  for (std::size_t i = 0; i < n; ++i) k[i * n + i] += hyperparameters.noise_variance;
  const std::vector<double> alpha = testing::spd_solve(k, n, y, 1);
  const std::span<const double> solved = result.model->weights();
  double largest = 0.0;
  for (std::size_t i = 0; i < n; ++i) largest = std::max(largest, std::abs(solved[i] - alpha[i]));
  double scale = 0.0;
  for (const double value : alpha) scale = std::max(scale, std::abs(value));
  CHECK(largest <= 1e-6 * scale);
}

TEST_CASE("api: a Model predicts the same from memory and from its saved file") {
  const testing::Problem problem = make_problem(400, 3, 2), test = make_problem(50, 3, 3);
  const ScratchDirectory scratch;
  const std::string file = scratch.file("train.h5"), saved = scratch.file("model.h5");
  write_dataset(file, arrays_of(problem), {});
  Context context({.memory_budget_bytes = 64u << 20});
  TrainingResult result = train(context, TrainingData::in_memory(arrays_of(problem)), 40);
  REQUIRE(result.model);
  Model model = *result.model;
  model.description().dataset_path = file;  // where its rows are as a file (the same fingerprint)
  model.save(saved, ExistingOutput::refuse);
  CHECK_THROWS_AS(model.save(saved, ExistingOutput::refuse), Error);

  struct Means final : PredictionSink {
    std::vector<double> values;
    void means(std::span<const double> mean) override { values.assign(mean.begin(), mean.end()); }
    void variances(std::size_t, std::span<const double>) override {}
  };
  const std::vector<double>& rows = test.x;  // in their own units: the Predictor standardises them
  Means in_memory, from_file;
  open_predictor(context, *result.model, TrainingData::in_memory(arrays_of(problem)))
      ->predict(rows.data(), test.rows(), {}, in_memory);
  open_model_predictor(context, saved)->predict(rows.data(), test.rows(), {}, from_file);
  CHECK(in_memory.values == from_file.values);
  // The model's rows are checked: other arrays of the same shape are refused, naming the model.
  const testing::Problem other = make_problem(400, 3, 9);
  CHECK_THROWS_WITH_AS(open_predictor(context, *result.model, TrainingData::in_memory(arrays_of(other)), "model X"),
                       doctest::Contains("is not the dataset model X was trained on"), Error);
}

TEST_CASE("api: a Training stopped by the Context resumes from its checkpoint to the uninterrupted weights") {
  const testing::Problem problem = make_problem(500, 3, 4);
  const ScratchDirectory scratch;
  const std::string checkpoint = scratch.file("job.ckpt");
  const TrainingData data = TrainingData::in_memory(arrays_of(problem));
  Context context({.memory_budget_bytes = 64u << 20});
  const TrainingResult whole = train(context, data, 50);

  StopFlag stop;
  context.set_stop_flag(&stop);
  StopAt stop_at(stop, 20);
  Training training(context, data, configuration_for(describe_training_data(data), 50));
  training.prepare({});
  const TrainingResult stopped = training.run(checkpoint, {&stop_at});
  context.set_stop_flag(nullptr);
  CHECK(stopped.run.reason == StopReason::interrupted);
  CHECK_FALSE(stopped.model);
  CHECK(stopped.last_checkpoint_iteration == std::optional<std::uint64_t>(20));

  Checkpoint saved = read_training_checkpoint(checkpoint);
  Training resumed(context, data, std::move(saved.configuration), std::move(saved.state));
  resumed.prepare({});
  const TrainingResult finished = resumed.run("");
  REQUIRE(finished.model);
  CHECK(finished.run.last.iteration == 50);
  const std::span<const double> a = finished.model->weights(), b = whole.model->weights();
  CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end()));
  // Other rows than the checkpoint's are refused.
  const testing::Problem other = make_problem(500, 3, 8);
  Checkpoint again = read_training_checkpoint(checkpoint);
  CHECK_THROWS_WITH_AS(Training(context, TrainingData::in_memory(arrays_of(other)), std::move(again.configuration),
                                std::move(again.state), "checkpoint 'job.ckpt'"),
                       doctest::Contains("is not the dataset checkpoint 'job.ckpt' was trained on"), Error);
}

TEST_CASE("api: a checkpoint stores every method's parameters under the schema's names and restores them exactly") {
  const ScratchDirectory scratch;
  for (const TrainingMethod& method : training_methods()) {
    const std::string name = method.name;
    CAPTURE(name);
    TrainingConfiguration written;
    written.solver = {method.name, 37, 11, method.dense() ? 3u : 0u};
    written.seed = 0xfedcba9876543210ull;  // above 2⁶³: any 64 bits are a seed
    written.job.stopping.tolerance = 1.0 / 3.0;
    written.job.stopping.max_iterations = 12345;
    written.job.stopping.refresh_every = 7;
    written.job.checkpoint_every_seconds = 2.5;
    written.cholqr.information_pivots = 9;
    written.cholqr.objective = InducingObjective::likelihood;
    written.cholqr.learn_hyperparameters = false;
    written.online.novelty = 0.25;
    written.online.passes = 3;
    written.prior.kernel = testing::se_ard(2, 1.0, 0.1);
    written.standardisation.x_mean = {0.0, 0.0};
    written.standardisation.x_std = {1.0, 1.0};
    written.dataset_path = "/data/train.h5";
    written.dataset_fingerprint = "0123456789abcdef";
    written.rows = 50;
    const std::string path = scratch.file(std::string(method.name) + ".ckpt");
    write_training_checkpoint(path, written, initial_solver_state(std::vector<double>(50, 1.0), 1));

    // Each stored name is a parameter of the schema, and the method's own alone (a dense solver stores no cholqr).
    const Checkpoint stored = read_checkpoint(path);
    REQUIRE_FALSE(stored.parameters.empty());
    CHECK(stored.parameters.front().name == (method.dense() ? "solver" : "model"));
    for (const StoredParameter& parameter : stored.parameters) {
      CAPTURE(parameter.name);
      CHECK(find_parameter(parameter.name) != nullptr);
      const std::string takers = methods_taking(parameter.name);
      if (!takers.empty()) CHECK(takers.find(method.name) != std::string::npos);
    }
    const TrainingConfiguration read = read_training_checkpoint(path).configuration;
    CHECK(read.solver.name == written.solver.name);
    CHECK(read.solver.active_set_size == 37);
    CHECK(read.solver.candidates == 11);
    CHECK(read.solver.subspace_steps == (method.dense() ? 3u : SolverOptions{}.subspace_steps));  // BCD's alone
    CHECK(read.seed == written.seed);
    CHECK(read.job.stopping.tolerance == 1.0 / 3.0);
    CHECK(read.job.stopping.max_iterations == 12345);
    CHECK(std::isinf(read.job.stopping.time_limit_seconds));  // stored as 0, "no limit"
    CHECK(read.job.stopping.refresh_every == 7);
    CHECK(read.job.checkpoint_every_seconds == 2.5);
    const std::span<const char* const> own = method.parameters;
    const bool cholqr = std::find(own.begin(), own.end(), std::string_view("info_pivots")) != own.end();
    const bool online = std::find(own.begin(), own.end(), std::string_view("novelty")) != own.end();
    CHECK(read.cholqr.information_pivots == (cholqr ? 9u : CholQrOptions{}.information_pivots));
    CHECK(read.cholqr.learn_hyperparameters == !cholqr);
    CHECK((read.cholqr.objective == InducingObjective::likelihood) == cholqr);
    CHECK(read.online.novelty == (online ? 0.25 : OnlineGpOptions{}.novelty));
    CHECK(read.online.passes == (online ? 3u : OnlineGpOptions{}.passes));
    CHECK(read.dataset_fingerprint == written.dataset_fingerprint);
  }
}

TEST_CASE("api: arrays with a value that is not finite are refused, naming its row and column") {
  testing::Problem problem = make_problem(20, 3, 1);
  problem.x[7 * 3 + 2] = std::nan("");
  CHECK_THROWS_WITH_AS(describe_arrays(arrays_of(problem)), doctest::Contains("X[7, 2] is nan"), Error);
  problem = make_problem(20, 3, 1);
  problem.y[4] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(describe_arrays(arrays_of(problem)), doctest::Contains("y[4] is inf"), Error);
}

}  // namespace
}  // namespace gpstream

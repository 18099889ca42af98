#include "engine/core/error.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/solver_driver.h"
#include "storage/checkpoint/checkpoint_file.h"
#include "storage/checkpoint/search_checkpoint.h"
#include "storage/hyper/hyperparameter_file.h"
#include "storage/model/dense_model_file.h"
#include "../engine/problems.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <cstring>
#include <limits>

using namespace gpstream;
using namespace gpstream::testing;

namespace {

TrainingConfiguration configuration_for(const std::string& solver) {
  TrainingConfiguration configuration;
  configuration.solver = {.name = solver, .active_set_size = 40, .candidates = 30};
  configuration.prior.kernel = se_ard(3, 0.8, 0.05);
  configuration.standardisation.x_mean = {0.1, 0.2, 0.3};
  configuration.standardisation.x_std = {1.0, 2.0, 3.0};
  configuration.standardisation.y_mean = -1.5;
  configuration.standardisation.y_std = 2.5;
  configuration.prior.mean = {.intercept = true, .inputs = {0, 2}, .coefficients = {0.25, -1.0 / 3.0, 2.0}};
  configuration.seed = 99;
  configuration.dataset_path = "/data/train.h5";
  configuration.dataset_fingerprint = "0123456789abcdef";
  configuration.rows = 600;
  return configuration;
}

// Runs `solver` on `problem` for at most `iterations` iterations from `state`.
void run(const Problem& problem, const TrainingConfiguration& configuration, SolverState& state,
         std::uint64_t iterations, bool fresh) {
  InMemoryRowSource rows = problem.source();
  const auto kernel = make_kernel(configuration.prior.kernel, problem.d);
  Context context;
  KernelMatrix matrix(context, rows, *kernel);
  auto solver = make_solver(configuration.solver, matrix);
  StoppingRule rule;
  rule.tolerance = 1e-10;
  rule.max_iterations = iterations;
  run_solver(*solver, matrix, state, problem.y, rule, fresh);
}

}  // namespace

TEST_CASE("a checkpoint reads back exactly what was written") {
  ScratchDirectory directory;
  // The job's parameters are stored as given (api/ names and checks them): a text, whole numbers, reals.
  Checkpoint written{configuration_for("cg"),
                     {{"solver", std::string("cg")},
                      {"random_state", std::int64_t{-7}},
                      {"tol", 1.0 / 3.0},
                      {"max_iter", std::int64_t{0}}},
                     initial_solver_state(std::vector<double>(600, 0.5), 4)};
  written.state.iteration = 17;
  written.state.elapsed_seconds = 3.25;
  written.state.kernel_evaluations = 123456789;
  written.state.alpha[3] = -0.0;
  written.state.alpha[7] = 1e-300;
  written.state.auxiliary["cg_direction"] = std::vector<double>(600, 0.25);
  written.state.auxiliary["cg_residual_norm"] = {42.0};
  written.state.random.discard(1000);
  write_checkpoint(directory.file("c.h5"), written);
  const Checkpoint read = read_checkpoint(directory.file("c.h5"));
  CHECK(read.state.alpha == written.state.alpha);
  CHECK(std::signbit(read.state.alpha[3]));
  CHECK(read.state.gradient == written.state.gradient);
  CHECK(read.state.iteration == 17);
  CHECK(read.state.elapsed_seconds == 3.25);
  CHECK(read.state.kernel_evaluations == 123456789);
  CHECK(read.state.auxiliary == written.state.auxiliary);
  CHECK(read.state.random == written.state.random);
  CHECK(read.parameters == written.parameters);
  CHECK(read.configuration.prior.kernel.lengthscales == written.configuration.prior.kernel.lengthscales);
  CHECK(read.configuration.standardisation.x_std == written.configuration.standardisation.x_std);
  CHECK(read.configuration.standardisation.y_mean == -1.5);
  CHECK(read.configuration.prior.mean.intercept);
  CHECK(read.configuration.prior.mean.inputs == written.configuration.prior.mean.inputs);
  CHECK(read.configuration.prior.mean.coefficients == written.configuration.prior.mean.coefficients);
  CHECK(read.configuration.dataset_fingerprint == "0123456789abcdef");
  // Rewriting replaces the previous checkpoint atomically: no temporary file is left.
  write_checkpoint(directory.file("c.h5"), written);
  CHECK(directory.entries() == std::vector<std::string>{"c.h5"});
}

TEST_CASE("a search checkpoint reads back its entries, their error covariances and the warm start exactly") {
  ScratchDirectory directory;
  const std::string path = directory.file("search.h5");
  SearchCheckpoint written;
  written.command = "hyper";
  written.arguments = {"train.h5", "-o", "h.json", "--all-rows-steps", "4"};
  written.dataset_fingerprint = "fedcba9876543210";
  // An exact evaluation, then an all-rows estimate (no value; a gradient with its covariance).
  written.entries.push_back({{0.0, -0.25, 0.5, -1.0, -4.0}, -123.456, {1.5, -2.5, 0.25, 3.0}, {}});
  written.entries.push_back({{0.0, -0.3, 0.45, -1.1, -4.2},
                             std::numeric_limits<double>::quiet_NaN(),
                             {0.5, -0.125, 2.0, -1.0},
                             {4.0, 0.5, 0.0, 0.0, 0.5, 9.0, 0.0, 0.0, 0.0, 0.0, 1e-6, 0.0, 0.0, 0.0, 0.0, 1e-3}});
  written.warm_start = {1.0 / 3.0, -2.0, 1e-300, 5.5};
  write_search_checkpoint(path, written);
  REQUIRE(is_search_checkpoint(path));
  const SearchCheckpoint read = read_search_checkpoint(path);
  CHECK(read.command == written.command);
  CHECK(read.arguments == written.arguments);
  CHECK(read.dataset_fingerprint == written.dataset_fingerprint);
  REQUIRE(read.entries.size() == 2);
  for (std::size_t k = 0; k < 2; ++k) {
    CHECK(read.entries[k].point == written.entries[k].point);
    CHECK(read.entries[k].gradient == written.entries[k].gradient);
    CHECK(read.entries[k].covariance == written.entries[k].covariance);
  }
  CHECK(read.entries[0].value == written.entries[0].value);
  CHECK(std::isnan(read.entries[1].value));
  CHECK(read.warm_start == written.warm_start);
}

TEST_CASE("a run resumed from a checkpoint reaches the bit-identical alpha of an uninterrupted run") {
  const Problem problem = make_problem(600, 3, 21);
  // gbcd and bcd-cyclic with their past steps (the default), gbcd also without.
  for (const auto& [solver, subspace_steps] :
       {std::pair{"gbcd", 4}, std::pair{"gbcd", 0}, std::pair{"bcd-cyclic", 4}, std::pair{"cg", 0}}) {
    CAPTURE(solver);
    CAPTURE(subspace_steps);
    TrainingConfiguration configuration = configuration_for(solver);
    configuration.solver.subspace_steps = subspace_steps;
    SolverState uninterrupted = initial_solver_state(problem.y, configuration.seed);
    run(problem, configuration, uninterrupted, 12, true);

    ScratchDirectory directory;
    SolverState first_part = initial_solver_state(problem.y, configuration.seed);
    run(problem, configuration, first_part, 5, true);
    // (The configuration's parameters round-trip through api's reader: tests/api.)
    write_checkpoint(directory.file("c.h5"), Checkpoint{configuration, {}, first_part});
    Checkpoint read = read_checkpoint(directory.file("c.h5"));
    SolverState resumed = std::move(read.state);
    run(problem, configuration, resumed, 12, false);

    CHECK(resumed.iteration == 12);
    CHECK(std::memcmp(resumed.alpha.data(), uninterrupted.alpha.data(), resumed.alpha.size() * sizeof(double)) == 0);
    CHECK(std::memcmp(resumed.gradient.data(), uninterrupted.gradient.data(),
                      resumed.gradient.size() * sizeof(double)) == 0);
  }
}

namespace {

// A dense model of `alpha` over a dataset of two inputs, its targets standardised (not its inputs).
DenseModel two_input_model(std::vector<double> alpha) {
  DenseModel model;
  model.prior.kernel = {KernelType::matern52, {0.5, 2.0}, 1.5, 0.01};
  model.standardisation.y_mean = 3.0;
  model.standardisation.y_std = 0.5;
  model.rows = alpha.size();
  model.alpha = std::move(alpha);
  model.dataset_path = "/somewhere/train.h5";
  model.dataset_fingerprint = "feedfacecafebeef";
  model.columns = 2;
  model.feature_names = {"u", "v"};
  model.target_name = "w";
  model.training = {"gbcd", "converged", 12, 9e-5, 1e-4, 1.5, 1000};
  return model;
}

}  // namespace

TEST_CASE("a dense model reads back exactly what was written") {
  ScratchDirectory directory;
  const DenseModel model = two_input_model({1.0, -2.0, 3.5});
  write_dense_model(directory.file("m.h5"), model, ExistingOutput::refuse);
  CHECK_THROWS_WITH_AS(write_dense_model(directory.file("m.h5"), model, ExistingOutput::refuse),
                       doctest::Contains("already exists"), Error);
  const DenseModel read = read_dense_model(directory.file("m.h5"));
  CHECK(read.alpha == model.alpha);
  CHECK(read.prior.kernel.type == KernelType::matern52);
  CHECK(read.prior.kernel.lengthscales == model.prior.kernel.lengthscales);
  CHECK_FALSE(read.standardisation.standardises_inputs());
  CHECK(read.standardisation.y_std == 0.5);
  CHECK(read.feature_names == model.feature_names);
  CHECK(read.training.solver == "gbcd");
  CHECK(read.training.iterations == 12);
  CHECK_THROWS_WITH_AS(read_checkpoint(directory.file("m.h5")),
                       doctest::Contains("is a 'gpstream-model' file, not a gpstream-checkpoint"), Error);
}

TEST_CASE("every value of a kernel's parameter layout reads back from a model and a hyperparameter file") {
  // A sum whose terms have parameters of their own (rational quadratic's alpha) in both places: each family's
  // declaration is all storage needs.
  ScratchDirectory directory;
  DenseModel model = two_input_model({0.5, 0.25});
  model.prior.kernel = KernelHyperparameters(
      KernelType::rational_quadratic, {0.5, 2.0}, 1.5, 0.01,
      {KernelTerm(KernelType::matern32, {3.0}, 0.4), KernelTerm(KernelType::rational_quadratic, {7.0, 9.0}, 0.2)});
  model.prior.kernel.term(0).family_parameters = {0.35};
  model.prior.kernel.term(2).family_parameters = {12.5};
  write_dense_model(directory.file("m.h5"), model, ExistingOutput::refuse);
  const KernelHyperparameters read = read_dense_model(directory.file("m.h5")).prior.kernel;
  CHECK(kernel_name(read) == "rq+matern32+rq");
  CHECK(hyperparameter_values(read) == hyperparameter_values(model.prior.kernel));

  write_hyperparameter_file(directory.file("h.json"), model.prior, model.standardisation, {}, false);
  const KernelHyperparameters from_file = read_hyperparameter_file(directory.file("h.json")).prior.kernel;
  CHECK(hyperparameter_values(from_file) == hyperparameter_values(model.prior.kernel));
  // An own parameter a file leaves out takes its family's declared start; a bad one is named.
  write_file(directory.file("rq.json"),
             R"({"kernel_name": "rq", "signal_variance": 1, "length_scales": [1.0], "noise_variance": 0.1})");
  CHECK(read_hyperparameter_file(directory.file("rq.json")).prior.kernel.family_parameters == std::vector<double>{1.0});
  write_file(directory.file("bad.json"), R"({"kernel_name": "rq", "signal_variance": 1, "length_scales": [1.0],
      "noise_variance": 0.1, "alpha": -3})");
  CHECK_THROWS_WITH_AS(read_hyperparameter_file(directory.file("bad.json")),
                       doctest::Contains("\"alpha\" must be positive, not -3"), Error);
}

TEST_CASE("a model's prior mean reads back with it, and one on inputs the model does not standardise is refused") {
  ScratchDirectory directory;
  DenseModel model = two_input_model({1.0, -2.0});
  model.prior.mean = {.intercept = true, .inputs = {1}, .coefficients = {0.125, -2.5}};
  model.standardisation = {{0.0, 1.0}, {1.0, 3.0}, 3.0, 0.5};
  write_dense_model(directory.file("m.h5"), model, ExistingOutput::refuse);
  const DenseModel read = read_dense_model(directory.file("m.h5"));
  CHECK(read.prior.mean.intercept);
  CHECK(read.prior.mean.inputs == model.prior.mean.inputs);
  CHECK(read.prior.mean.coefficients == model.prior.mean.coefficients);
  model.standardisation.x_mean.clear();
  model.standardisation.x_std.clear();
  CHECK_THROWS_WITH_AS(write_dense_model(directory.file("n.h5"), model, ExistingOutput::refuse),
                       doctest::Contains("a linear mean needs standardised inputs"), Error);
  CHECK_FALSE(std::filesystem::exists(directory.file("n.h5")));
}

TEST_CASE("hyperparameter files in the format of the shared reference files") {
  ScratchDirectory directory;
  write_file(directory.file("h.json"), R"({"signal_variance": 1.7, "length_scales": [3.0, 2.5], "gamma": [0.05555555555555555, 0.08],
      "noise_variance": 0.0105, "standardisation": {"x_mean": [0.1, 0.2], "x_std": [1.1, 0.9], "y_mean": 0.01, "y_std": 0.99}})");
  const HyperparameterFile file = read_hyperparameter_file(directory.file("h.json"));
  CHECK(file.prior.kernel.type == KernelType::squared_exponential_ard);
  CHECK(file.prior.kernel.lengthscales == std::vector<double>{3.0, 2.5});
  CHECK(file.prior.kernel.noise_variance == 0.0105);
  REQUIRE(file.standardisation.has_value());
  CHECK(file.standardisation->x_std == std::vector<double>{1.1, 0.9});

  write_file(directory.file("g.json"),
             R"({"signal_variance": 1, "gamma": [0.125], "noise_variance": 0.1, "kernel_name": "se"})");
  const HyperparameterFile gamma_only = read_hyperparameter_file(directory.file("g.json"));
  CHECK(gamma_only.prior.kernel.lengthscales[0] == doctest::Approx(2.0));
  CHECK(gamma_only.prior.kernel.type == KernelType::squared_exponential);
  CHECK_FALSE(gamma_only.standardisation.has_value());

  write_file(directory.file("bad.json"), R"({"signal_variance": 1, "length_scales": [1]})");
  CHECK_THROWS_WITH_AS(read_hyperparameter_file(directory.file("bad.json")),
                       doctest::Contains("\"noise_variance\" is missing"), Error);
  write_file(directory.file("broken.json"), "{ not json");
  CHECK_THROWS_WITH_AS(read_hyperparameter_file(directory.file("broken.json")),
                       doctest::Contains("broken.json: not JSON (parse error at line 1, column 4"), Error);
}

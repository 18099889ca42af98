// The training job's runner (api/training_job.h) and the learning plan every
// front end shares (api/learning_plan.h).
#include "api/job_specification.h"
#include "api/learning_plan.h"
#include "api/training_job.h"
#include "engine/core/error.h"
#include "engine/core/stop_flag.h"
#include "api/problem_arrays.h"
#include "engine/problems.h"
#include "storage/checkpoint/search_checkpoint.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

namespace gpstream {
namespace {

using testing::arrays_of;
using testing::make_problem;
using testing::ScratchDirectory;

// Requests the Context's stop once the search has made `evaluations` evaluations, or the run reached
// `iteration` (0: never).
class StoppingEvents final : public TrainingJobEvents, public RunObserver {
 public:
  StoppingEvents(StopFlag& stop, std::size_t evaluations, std::uint64_t iteration)
      : stop_(stop), evaluations_(evaluations), iteration_(iteration) {}
  void on_learning(const Training&, const ModelLearningOptions&, std::size_t replayed) override {
    replayed_ = replayed;
  }
  RunObserver* search_progress() override { return this; }
  void on_learned(const Training&, const ModelLearningOptions&, const LearnedModel&) override { learning_ = false; }
  RunObserver* training_progress(const Training&) override { return this; }
  void on_iteration(const IterationReport& report) override {
    if (learning_ && evaluations_ > 0 && ++seen_ >= evaluations_) stop_.request();
    if (!learning_ && iteration_ > 0 && report.iteration >= iteration_) stop_.request();
  }
  std::size_t replayed_ = 0;

 private:
  StopFlag& stop_;
  std::size_t evaluations_, seen_ = 0;
  std::uint64_t iteration_;
  bool learning_ = true;
};

// A fresh job on `problem` that learns an rbf kernel on 120 of its rows first, then runs gbcd.
TrainingJobSpecification learning_job(const TrainingData& data, const std::string& checkpoint) {
  const DatasetDescription dataset = describe_training_data(data);
  TrainingJobSpecification job{.data = data, .checkpoint_path = checkpoint};
  job.configuration.solver = {"gbcd", 40, 30};
  job.configuration.prior.kernel = KernelHyperparameters(KernelType::squared_exponential_ard, {}, 1.0, 0.1);
  job.configuration.standardisation = dataset_standardisation(dataset);
  job.configuration.job.stopping.tolerance = 1e-10;
  job.configuration.job.stopping.max_iterations = 60;
  job.configuration.job.checkpoint_every_seconds = 1e9;  // only when stopped and at the end
  LearningRequest request{.kernel = "rbf", .learn_on = "subset"};
  request.subset.subset = 120;
  request.subset.restarts = 1;
  job.learning = plan_learning(request, dataset, "the arrays").options;
  job.search = {"test", {"learning_job"}, {}, {}};
  return job;
}

TEST_CASE(
    "api: a training job stopped while learning and again while training continues to the "
    "uninterrupted model, bit for bit") {
  const testing::Problem problem = make_problem(400, 3, 5);
  const TrainingData data = TrainingData::in_memory(arrays_of(problem));
  const ScratchDirectory scratch;
  const std::string checkpoint = scratch.file("job.ckpt");
  Context context({.memory_budget_bytes = 64u << 20});
  TrainingJobEvents quiet;
  const TrainingResult whole = run_training_job(context, learning_job(data, ""), quiet);
  REQUIRE(whole.model);
  CHECK(whole.configuration.prior.kernel.noise_variance != 0.1);  // learned

  StopFlag stop;
  context.set_stop_flag(&stop);
  StoppingEvents stop_learning(stop, 6, 0);
  try {
    run_training_job(context, learning_job(data, checkpoint), stop_learning);
    FAIL("the search was not stopped");
  } catch (const JobInterrupted& stopped) {
    CHECK(stopped.stage == JobInterrupted::Stage::learning);
    CHECK(stopped.checkpoint_path == checkpoint);
    CHECK(stopped.evaluations_saved >= 6);
  }
  CHECK(is_search_checkpoint(checkpoint));

  // The search replayed from its checkpoint, the training stopped at iteration 25.
  StopFlag stop_again;
  context.set_stop_flag(&stop_again);
  TrainingJobSpecification continued = learning_job(data, checkpoint);
  continued.replay = read_search_checkpoint(checkpoint);
  StoppingEvents stop_training(stop_again, 0, 25);
  try {
    run_training_job(context, std::move(continued), stop_training);
    FAIL("the training was not stopped");
  } catch (const JobInterrupted& stopped) {
    CHECK(stopped.stage == JobInterrupted::Stage::training);
    CHECK(stopped.iteration == 25);
    CHECK(stopped.last_checkpoint_iteration == std::optional<std::uint64_t>(25));
  }
  CHECK(stop_training.replayed_ >= 6);
  context.set_stop_flag(nullptr);

  Checkpoint saved = read_training_checkpoint(checkpoint);
  TrainingJobSpecification resumed{.data = data,
                                   .configuration = std::move(saved.configuration),
                                   .resumed_state = std::move(saved.state),
                                   .resumed_from = checkpoint};
  const TrainingResult finished = run_training_job(context, std::move(resumed), quiet);
  REQUIRE(finished.model);
  CHECK(finished.run.last.iteration == whole.run.last.iteration);
  const std::span<const double> a = finished.model->weights(), b = whole.model->weights();
  CHECK(std::equal(a.begin(), a.end(), b.begin(), b.end()));
}

TEST_CASE("api: the learning plan fits the subset to the rows unless given, and names the parameter a rule refuses") {
  const testing::Problem problem = make_problem(300, 2, 3);
  const DatasetDescription dataset = describe_training_data(TrainingData::in_memory(arrays_of(problem)));
  LearningRequest request;
  CHECK(plan_learning(request, dataset, "the arrays").options.subset.subset == 300);  // default 2,000
  CHECK(plan_learning(request, dataset, "the arrays").options.kernels.size() == std::size(kAutoKernelCandidates));
  request.given = {"subset"};
  CHECK_THROWS_WITH_AS(plan_learning(request, dataset, "the arrays"),
                       doctest::Contains("`subset` 2000 is larger than the 300 rows of 'the arrays'"), InvalidArgument);
  request = {.kernel = "matern32", .given = {"max_terms"}};
  CHECK_THROWS_WITH_AS(plan_learning(request, dataset, "the arrays"),
                       doctest::Contains("`max_terms` is for `kernel` auto"), InvalidArgument);
  request = {.kernel = "matern32", .mean = "quadratic"};
  CHECK_THROWS_WITH_AS(plan_learning(request, dataset, "the arrays"), doctest::Contains("`mean`: "), InvalidArgument);
  // The values given start the search, the family's own parameters too.
  request = {.kernel = "rq"};
  request.start.signal_variance = 2.0;
  request.start.family_parameters = {{"alpha", 3.0}};
  const LearningPlan plan = plan_learning(request, dataset, "the arrays");
  CHECK(plan.options.subset.start.signal_variance == 2.0);
  CHECK(plan.options.subset.start.family_parameters == request.start.family_parameters);
  CHECK(plan.start_origin == "the kernel options, the rest informed by the data");
}

TEST_CASE("api: a job's name-value pairs are checked by the schema and build the job with the schema's defaults") {
  JobSpecification job;
  CHECK_THROWS_WITH_AS(job.set("bogus", "1"), doctest::Contains("`bogus` is not a parameter"), InvalidArgument);
  CHECK_THROWS_WITH_AS(job.set("basis_size", "0"), doctest::Contains("`basis_size`=0: give"), InvalidArgument);
  CHECK_THROWS_WITH_AS(job.set("length_scale", "1,-2"), doctest::Contains("`length_scale`: values must be positive"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(job.set("precision", "float"), doctest::Contains("`precision`=\"float\": choose"),
                       InvalidArgument);
  CHECK(job.given_names().empty());

  // Nothing given: the engine's defaults.
  const FreshJobParameters defaults = job.fresh_job();
  CHECK(defaults.method == "auto");
  CHECK(defaults.solver.active_set_size == SolverOptions{}.active_set_size);
  CHECK(defaults.solver.subspace_steps == SolverOptions{}.subspace_steps);
  CHECK(defaults.basis_size == SparseMethodOptions{}.basis_size);
  CHECK(defaults.seed == TrainingConfiguration{}.seed);
  CHECK(defaults.checkpoint_every_seconds == TrainingJob{}.checkpoint_every_seconds);
  CHECK(defaults.standardise);
  CHECK_FALSE(defaults.tol);
  const LearningRequest learning = job.learning();
  CHECK(learning.kernel == kAutomaticKernel);
  CHECK(learning.subset.subset == SubsetLearningOptions{}.subset);
  CHECK(learning.vecchia_neighbours == VecchiaOptions{}.neighbours);

  // What is given, as typed; the pairs in the order set name the job.
  job.set("model", "sggp");
  job.set("random_state", "18446744073709551615");  // more digits than a double holds
  job.set("standardise", "false");
  job.set("length_scale", "0.5,2");
  const FreshJobParameters given = job.fresh_job();
  CHECK(given.method == "sggp");
  CHECK(given.seed == 18446744073709551615u);
  CHECK_FALSE(given.standardise);
  CHECK(given.prior.kernel.lengthscales == std::vector<double>{0.5, 2.0});
  CHECK(job.arguments() == std::vector<std::string>{"model=sggp", "random_state=18446744073709551615",
                                                    "standardise=false", "length_scale=0.5,2"});
  // The rules between them: sggp stops at its gap, not at `tol`; learning needs standardised data.
  job.set("tol", "1e-3");
  CHECK_THROWS_WITH_AS(job.check_rules(), doctest::Contains("`tol` is for the dense solvers"), InvalidArgument);
  JobSpecification learn;
  learn.set("learn_hyper", "true");
  learn.set("standardise", "false");
  CHECK_THROWS_WITH_AS(learn.check_rules(), doctest::Contains("learns on standardised data"), InvalidArgument);
}

TEST_CASE("api: the job's methods are the registry's choices, and a method's own parameters are for it alone") {
  JobSpecification job;
  CHECK_THROWS_WITH_AS(job.set("solver", "newton"), doctest::Contains("`solver`=\"newton\": choose auto, gbcd"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(job.set("model", "srm-trans"), doctest::Contains("`model`=\"srm-trans\": choose dense, sd"),
                       InvalidArgument);
  job.set("objective", "mle");  // cholqr's
  CHECK_THROWS_WITH_AS(job.check_rules(), doctest::Contains("`objective` is for `model` cholqr"), InvalidArgument);
  job.set("model", "cholqr");
  CHECK_NOTHROW(job.check_rules());
  job.set("precision", "double");  // the exact GP's
  CHECK_THROWS_WITH_AS(job.check_rules(), doctest::Contains("`precision` is for `model` dense"), InvalidArgument);
}

TEST_CASE("api: a job that names no kernel takes auto when it learns the model, else the engine's rbf") {
  CHECK(default_kernel(/*learning=*/true) == kAutomaticKernel);
  CHECK(default_kernel(/*learning=*/false) == "rbf");
  JobSpecification fixed;
  fixed.set("length_scale", "1");
  CHECK(fixed.fresh_job().prior.kernel.type == KernelType::squared_exponential_ard);
  CHECK_THROWS_WITH_AS(
      [] {
        JobSpecification automatic;
        automatic.set("kernel", "auto");
        automatic.check_rules();
      }(),
      doctest::Contains("`kernel` auto compares kernels"), InvalidArgument);
  JobSpecification learned;
  learned.set("learn_hyper", "true");
  CHECK_NOTHROW(learned.check_rules());
  CHECK(learned.learning().kernel == kAutomaticKernel);
  learned.set("kernel", "matern32+rbf");
  CHECK(learned.learning().kernel == "matern32+rbf");
  CHECK(learned.fresh_job().prior.kernel.term_count() == 2);
}

}  // namespace
}  // namespace gpstream

// `mpirun -np P gpstream train …` end to end: the model of P ranks is the
// single process's, bit for bit; a checkpoint written by P ranks resumes on
// another number of ranks to the uninterrupted model; what cannot run on
// several ranks yet says so in one line.
#include "engine/hyper/marginal_likelihood.h"
#include "storage/checkpoint/checkpoint_file.h"
#include "storage/hyper/hyperparameter_file.h"
#include "storage/model/dense_model_file.h"
#include "storage/model/sparse_model_file.h"
#include "mpirun_support.h"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using gpstream::testing::column_of;
using gpstream::testing::CommandResult;
using gpstream::testing::quote;
using gpstream::testing::run_gpstream;
using gpstream::testing::run_on_ranks;
using gpstream::testing::same_bits;
using gpstream::testing::ScratchDirectory;

namespace {

const std::string kHyper =
    " --lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039 --active-set 100 --seed 3 ";

}  // namespace

TEST_CASE("mpirun -np 1, 2, 3 train the single process's model, bit for bit, for every BCD policy and CG") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 2000 --seed 7 -q -o " + quote(train)).exit_code == 0);
  for (const char* solver : {"gbcd", "bcd-cyclic", "bcd-gradient", "cg"}) {
    CAPTURE(solver);
    const std::string common =
        kHyper + " --solver " + solver + " --max-iter 40 --refresh-every 15 --threads 1 --force -q";
    const std::string alone = directory.file("alone.h5");
    REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(alone) + common).exit_code == 0);
    const auto reference = gpstream::read_dense_model(alone);
    for (const std::size_t ranks : {1, 2, 3}) {
      CAPTURE(ranks);
      const std::string model = directory.file("ranks.h5");
      const CommandResult run = run_on_ranks(ranks, "train " + quote(train) + " -o " + quote(model) + common);
      CAPTURE(run.err);
      REQUIRE(run.exit_code == 0);
      const auto distributed = gpstream::read_dense_model(model);
      CHECK(same_bits(distributed.alpha, reference.alpha));
      CHECK(distributed.training.iterations == reference.training.iterations);
    }
  }
}

TEST_CASE("train --learn-hyper on 2 and 3 ranks learns the single process's hyperparameters and model") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 1500 --seed 7 -q -o " + quote(train)).exit_code == 0);
  const std::string common = " --learn-hyper --subset 150 --restarts 1 --max-iter 20 --threads 1 --force -q";
  const std::string alone = directory.file("alone.h5"), alone_hyper = directory.file("alone.json");
  REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(alone) + " --save-hyper " + quote(alone_hyper) + common)
              .exit_code == 0);
  const auto reference = gpstream::read_dense_model(alone);
  for (const std::size_t ranks : {2, 3}) {
    CAPTURE(ranks);
    const std::string model = directory.file("ranks.h5"), hyper = directory.file("ranks.json");
    // The subset's rows (and y) from their owners; every rank learns alike, rank 0's result is everyone's.
    const CommandResult run =
        run_on_ranks(ranks, "train " + quote(train) + " -o " + quote(model) + " --save-hyper " + quote(hyper) + common);
    CAPTURE(run.err);
    REQUIRE(run.exit_code == 0);
    const auto distributed = gpstream::read_dense_model(model);
    CHECK(distributed.prior.kernel.lengthscales == reference.prior.kernel.lengthscales);
    CHECK(distributed.prior.kernel.noise_variance == reference.prior.kernel.noise_variance);
    CHECK(same_bits(distributed.alpha, reference.alpha));
    CHECK(std::filesystem::exists(hyper));
  }
}

TEST_CASE("train --learn-hyper --all-rows-steps on 2 ranks refines to the single process's hyperparameters") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 1200 --seed 8 -q -o " + quote(train)).exit_code == 0);
  const std::string common =
      " --learn-hyper --kernel rbf --subset 300 --restarts 0 --vecchia-neighbours 10 --exact-rows 600 "
      "--all-rows-steps 2 --probes 8 --max-iter 20 --threads 1 --force -q";
  const std::string alone = directory.file("alone.json"), ranks = directory.file("ranks.json");
  REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(directory.file("alone.h5")) + " --save-hyper " +
                       quote(alone) + common)
              .exit_code == 0);
  // The probes' solves are the single process's bit for bit (GBCD's selection is); the all-pairs contraction
  // and the dot products add the ranks' sums in another order.
  const CommandResult run = run_on_ranks(2, "train " + quote(train) + " -o " + quote(directory.file("ranks.h5")) +
                                                " --save-hyper " + quote(ranks) + common);
  CAPTURE(run.err);
  REQUIRE(run.exit_code == 0);
  const std::string file = gpstream::testing::read_file(ranks);
  CHECK(file.find("refined on all 1200 rows by the exact likelihood's stochastic gradient") != std::string::npos);
  const std::vector<double> expected = gpstream::log_parameters(gpstream::read_hyperparameter_file(alone).prior.kernel);
  const std::vector<double> got = gpstream::log_parameters(gpstream::read_hyperparameter_file(ranks).prior.kernel);
  REQUIRE(got.size() == expected.size());
  for (std::size_t p = 0; p < got.size(); ++p) {
    CAPTURE(p);
    CHECK(got[p] == doctest::Approx(expected[p]).epsilon(1e-7).scale(1.0));
  }
}

TEST_CASE(
    "a checkpoint written by 2 ranks resumes on 3, and one of 3 in a single process, to the uninterrupted model") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 2000 --seed 7 -q -o " + quote(train)).exit_code == 0);
  for (const char* solver : {"gbcd", "cg"}) {  // CG: its direction p and rᵀr travel in the checkpoint too
    CAPTURE(solver);
    const std::string common = kHyper + " --solver " + solver + " --tol 1e-5 --threads 1 --force -q";
    const std::string whole = directory.file("whole.h5");
    REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(whole) + common).exit_code == 0);
    const auto reference = gpstream::read_dense_model(whole);

    const std::string checkpoint = directory.file("job.ck.h5"), model = directory.file("model.h5");
    const CommandResult first = run_on_ranks(2, "train " + quote(train) + " -o " + quote(model) + common +
                                                    " --max-iter 10 --checkpoint " + quote(checkpoint));
    CAPTURE(first.err);
    REQUIRE(first.exit_code == 0);
    CHECK(gpstream::read_checkpoint(checkpoint).state.iteration == 10);
    CHECK(gpstream::read_checkpoint(checkpoint).state.alpha.size() == 2000);  // one file for the whole job
    const CommandResult second =
        run_on_ranks(3, "train --resume " + quote(checkpoint) + " -o " + quote(model) + " --max-iter 25 --force -q");
    CAPTURE(second.err);
    REQUIRE(second.exit_code == 0);
    CHECK(gpstream::read_checkpoint(checkpoint).state.iteration == 25);
    const CommandResult last =
        run_gpstream("train --resume " + quote(checkpoint) + " -o " + quote(model) + " --max-iter 0 --force -q");
    CAPTURE(last.err);
    REQUIRE(last.exit_code == 0);
    const auto resumed = gpstream::read_dense_model(model);
    CHECK(same_bits(resumed.alpha, reference.alpha));
    CHECK(resumed.training.iterations == reference.training.iterations);
    CHECK(resumed.training.iterations > 25);
    std::filesystem::remove(checkpoint);
  }
}

TEST_CASE("what does not run on several ranks yet says so in one line, and ends every rank") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 7 -q -o " + quote(train)).exit_code == 0);
  const CommandResult smo =
      run_on_ranks(2, "train " + quote(train) + " -o " + quote(directory.file("m.h5")) + kHyper + " --solver smo");
  CHECK(smo.exit_code != 0);
  CHECK(smo.err.find("gpstream train: smo does not run on several ranks yet") != std::string::npos);
  CHECK(!std::filesystem::exists(directory.file("m.h5")));
  const CommandResult info = run_on_ranks(2, "info " + quote(train));
  CHECK(info.exit_code != 0);
  CHECK(info.err.find("'info' runs as one process: run it without mpirun") != std::string::npos);
}

TEST_CASE(
    "mpirun -np 2, 3 predict the single process's means and variances (to rounding), and refuse what they cannot") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5"), test = directory.file("test.csv");
  REQUIRE(run_gpstream("generate friedman1 --rows 2000 --seed 7 -q -o " + quote(train)).exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 8 --noise-free -q -o " + quote(test)).exit_code == 0);
  const std::string model = directory.file("model.h5");
  REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(model) + kHyper + " --tol 1e-3 -q").exit_code == 0);
  // The variances by the batched GBCD solves (the route the ranks take), in batches of 64 rows, and exactly.
  const std::string predict = "predict " + quote(model) + " " + quote(test) + " --variance --batch-rows 64 -o ";
  const std::string alone = directory.file("alone.csv"), exact = directory.file("exact.csv");
  REQUIRE(run_gpstream(predict + quote(alone) + " --variance-method gbcd -q").exit_code == 0);
  REQUIRE(run_gpstream(predict + quote(exact) + " --variance-method cholesky -q").exit_code == 0);
  const std::vector<double> expected = column_of(alone, 0), expected_variance = column_of(alone, 1);
  const std::vector<double> exact_variance = column_of(exact, 1);
  REQUIRE(expected.size() == 300);
  for (const std::size_t ranks : {2, 3}) {
    CAPTURE(ranks);
    const std::string output = directory.file("ranks.csv");
    const CommandResult run = run_on_ranks(ranks, predict + quote(output) + " --force");
    CAPTURE(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(run.err.find("on " + std::to_string(ranks) + " ranks") != std::string::npos);
    CHECK(run.err.find("variances by gbcd: the training rows are partitioned among the ranks") != std::string::npos);
    CHECK(run.err.find("predict: RMSE") != std::string::npos);
    const std::vector<double> means = column_of(output, 0), variances = column_of(output, 1);
    REQUIRE(means.size() == expected.size());
    REQUIRE(variances.size() == expected.size());
    for (std::size_t k = 0; k < means.size(); ++k) {
      CAPTURE(k);
      // Each rank sums its own rows: the order of the sums, not their terms, differs.
      CHECK(means[k] == doctest::Approx(expected[k]).epsilon(1e-10));
      CHECK(variances[k] == doctest::Approx(expected_variance[k]).epsilon(1e-9));
      CHECK(variances[k] == doctest::Approx(exact_variance[k]).epsilon(1e-3));  // the gbcd route's bound
    }
  }
  const CommandResult cholesky =
      run_on_ranks(2, predict + quote(directory.file("v.csv")) + " --variance-method cholesky");
  CHECK(cholesky.exit_code == 1);
  CHECK(cholesky.err.find("the cholesky variance route factorises all of K̄ in one process") != std::string::npos);
  CHECK(!std::filesystem::exists(directory.file("v.csv")));
  const std::string sparse = directory.file("sparse.h5");
  REQUIRE(
      run_gpstream("train " + quote(train) + " -o " + quote(sparse) + kHyper + " --model sr --basis 50 -q").exit_code ==
      0);
  const CommandResult refused =
      run_on_ranks(2, "predict " + quote(sparse) + " " + quote(test) + " -o " + quote(directory.file("v.csv")));
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("a sparse or srm-trans model predicts in one process") != std::string::npos);
  CHECK(!std::filesystem::exists(directory.file("v.csv")));
}

TEST_CASE(
    "mpirun -np 2, 3 fit the single process's sparse models (sd, sr, nystrom on a random basis, and the "
    "greedy bases of sgma, mpgp, sggp), the sums of their passes added over the ranks") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 2000 --seed 7 -q -o " + quote(train)).exit_code == 0);
  for (const std::string method : {"sd", "sr", "nystrom", "sgma", "mpgp", "sggp"}) {
    CAPTURE(method);
    const std::string common = kHyper + " --model " + method + " --basis 60 --force -q";
    const std::string alone = directory.file("alone.h5");
    REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(alone) + common).exit_code == 0);
    const gpstream::SparseModel reference = gpstream::read_sparse_model(alone);
    for (const std::size_t ranks : {2, 3}) {
      CAPTURE(ranks);
      const std::string model = directory.file("ranks.h5");
      const CommandResult run = run_on_ranks(ranks, "train " + quote(train) + " -o " + quote(model) + common);
      CAPTURE(run.err);
      REQUIRE(run.exit_code == 0);
      const gpstream::SparseModel distributed = gpstream::read_sparse_model(model);
      // The same basis: random, or chosen greedily from the same candidates (their rows from their owners),
      // whose scores differ from one process's by rounding only.
      CHECK(distributed.basis_indices == reference.basis_indices);
      CHECK(distributed.basis_rows == reference.basis_rows);
      REQUIRE(distributed.weights.size() == reference.weights.size());
      // The ranks' sums are added in another order than one process's: equal to rounding, amplified by the
      // conditioning of the whitened system.
      double largest = 0.0, difference = 0.0;
      for (std::size_t k = 0; k < reference.weights.size(); ++k) {
        largest = std::max(largest, std::abs(reference.weights[k]));
        difference = std::max(difference, std::abs(reference.weights[k] - distributed.weights[k]));
      }
      CHECK(difference <= 1e-8 * largest);
      // Nyström's weights of every training row, gathered from the ranks.
      REQUIRE(distributed.training_weights.size() == reference.training_weights.size());
      double largest_weight = 0.0, weight_difference = 0.0;
      for (std::size_t k = 0; k < reference.training_weights.size(); ++k) {
        largest_weight = std::max(largest_weight, std::abs(reference.training_weights[k]));
        weight_difference =
            std::max(weight_difference, std::abs(reference.training_weights[k] - distributed.training_weights[k]));
      }
      CHECK(weight_difference <= 1e-8 * largest_weight);
      CHECK((method == "nystrom") == !reference.training_weights.empty());
    }
  }
}

TEST_CASE("mpirun -np 2, 3 predict by the Bayesian committee machine as the single process does (to rounding)") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5"), test = directory.file("test.csv");
  REQUIRE(run_gpstream("generate friedman1 --rows 1200 --seed 7 -q -o " + quote(train)).exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 150 --seed 8 --noise-free -q -o " + quote(test)).exit_code == 0);
  const std::string hyper = directory.file("hyper.json");
  gpstream::testing::write_file(
      hyper, R"({"kernel_name": "se-ard",)"
             R"( "length_scales": [0.5,0.5,0.8,1.5,2,40,40,40,40,40], "signal_variance": 1, "noise_variance": 0.05})");
  const std::string predict = "predict --model bcm " + quote(train) + " " + quote(test) + " --hyper " + quote(hyper) +
                              " --module-size 200 --query-block 50 --variance --force -q -o ";
  const std::string alone = directory.file("alone.csv");
  REQUIRE(run_gpstream(predict + quote(alone)).exit_code == 0);
  const std::vector<double> expected_means = column_of(alone, 0), expected_variances = column_of(alone, 1);
  REQUIRE(expected_means.size() == 150);
  for (const std::size_t ranks : {2, 3}) {
    CAPTURE(ranks);
    const std::string output = directory.file("ranks.csv");
    const CommandResult run = run_on_ranks(ranks, predict + quote(output));
    CAPTURE(run.err);
    REQUIRE(run.exit_code == 0);
    // The same k-means modules (their sums added over the ranks), each module on one rank, the
    // precision sums added over the ranks: the order of the sums differs.
    const std::vector<double> means = column_of(output, 0), variances = column_of(output, 1);
    REQUIRE(means.size() == expected_means.size());
    for (std::size_t k = 0; k < means.size(); ++k) {
      CAPTURE(k);
      CHECK(means[k] == doctest::Approx(expected_means[k]).epsilon(1e-8));
      CHECK(variances[k] == doctest::Approx(expected_variances[k]).epsilon(1e-8));
    }
  }
}

TEST_CASE("ranks are cross-checked: other data, another noise variance, tolerance or model on one rank is refused") {
  ScratchDirectory directory;
  const std::string first = directory.file("first.h5"), second = directory.file("second.h5");
  // The same shape, other rows: node-local copies that differ.
  REQUIRE(run_gpstream("generate friedman1 --rows 1000 --seed 7 -q -o " + quote(first)).exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 1000 --seed 8 -q -o " + quote(second)).exit_code == 0);
  const std::string model = directory.file("m.h5");
  // An MPMD launch: rank 0 runs one command line, rank 1 another.
  const auto launch = [&](const std::string& rank0, const std::string& rank1) {
    return gpstream::testing::run_command("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 '" MPIRUN
                                          "' --oversubscribe -np 1 '" GPSTREAM_BINARY "' " +
                                          rank0 + " : -np 1 '" GPSTREAM_BINARY "' " + rank1);
  };
  const std::string scales = " --lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --active-set 100 ";
  const std::string common = scales + " --max-iter 20 -q -o " + quote(model);
  const std::string same = "train " + quote(first) + common + " --noise-var 0.039";
  REQUIRE(launch(same, same).exit_code == 0);  // the check passes where the ranks agree
  std::filesystem::remove(model);              // (the refusals below must leave none)
  const auto refused = [&](const std::string& rank1, const std::string& what) {
    const CommandResult run = launch(same, rank1);
    CAPTURE(run.err);
    CHECK(run.exit_code != 0);
    CHECK(run.err.find("rank 1 of 2 does not agree with rank 0 on " + what) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(model));
  };
  refused("train " + quote(second) + common + " --noise-var 0.039", "the training data");
  refused("train " + quote(first) + common + " --noise-var 0.05",
          "the prior (kernel, noise, mean) and the standardisation");
  refused("train " + quote(first) + common + " --noise-var 0.039 --tol 1e-4", "the method, the seed");
  refused("train " + quote(first) + common + " --noise-var 0.039 --seed 4", "the method, the seed");
  // predict: another model on one rank.
  const std::string other = directory.file("other.h5");
  REQUIRE(run_gpstream("train " + quote(first) + common + " --noise-var 0.039").exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(first) + scales + " --max-iter 20 -q --noise-var 0.05 -o " + quote(other))
              .exit_code == 0);
  const std::string predict = " " + quote(second) + " -q -o " + quote(directory.file("p.csv"));
  REQUIRE(launch("predict " + quote(model) + predict, "predict " + quote(model) + predict).exit_code == 0);
  std::filesystem::remove(directory.file("p.csv"));
  const CommandResult mixed = launch("predict " + quote(model) + predict, "predict " + quote(other) + predict);
  CAPTURE(mixed.err);
  CHECK(mixed.exit_code != 0);
  CHECK(mixed.err.find("rank 1 of 2 does not agree with rank 0 on the model's weights") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("p.csv")));
}

TEST_CASE("Ctrl-C on one rank stops every rank at the same iteration, exits 130 through mpirun, and resumes") {
  // mpirun's own exit code when it is signalled itself is Open MPI's (1: orterun's abort path), whatever the
  // ranks return (docs/reliability.md); here the signal reaches a rank, as `kill -INT` of a rank's process does.
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5"), checkpoint = directory.file("ck.h5");
  const std::string model = directory.file("m.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 4000 --seed 7 -q -o " + quote(train)).exit_code == 0);
  std::vector<std::string> words = {MPIRUN, "--oversubscribe", "-np", "2", GPSTREAM_BINARY, "train", train,
                                    "-o", model, "--checkpoint", checkpoint, "--tol", "1e-12", "-q",
                                    "--lengthscales", "1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4", "--noise-var",
                                    "0.039"};
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::vector<std::string> environment_words = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
  for (char** variable = environ; *variable != nullptr; ++variable) environment_words.emplace_back(*variable);
  std::vector<char*> environment;
  for (std::string& word : environment_words) environment.push_back(word.data());
  environment.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, directory.file("err").c_str(), O_WRONLY | O_CREAT, 0644);
  pid_t mpirun = 0;
  REQUIRE(posix_spawn(&mpirun, argv[0], &actions, nullptr, argv.data(), environment.data()) == 0);
  posix_spawn_file_actions_destroy(&actions);
  // The checkpoint at iteration 0 says the run is under way; then a rank (a child of mpirun) is signalled.
  for (int wait = 0; wait < 4000 && !std::filesystem::exists(checkpoint); ++wait) ::usleep(5000);
  ::usleep(500000);
  pid_t rank = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string pid, command, state, parent;
    stat >> pid >> command >> state >> parent;
    if (parent == std::to_string(mpirun) && command.find("gpstream") != std::string::npos) {
      rank = static_cast<pid_t>(std::stol(pid));
      break;
    }
  }
  REQUIRE(rank > 0);
  ::kill(rank, SIGINT);
  int status = 0;
  ::waitpid(mpirun, &status, 0);
  const std::string err = gpstream::testing::read_file(directory.file("err"));
  CAPTURE(err);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(err.find("Resume with:\n  mpirun -np 2 gpstream train --resume") != std::string::npos);
  const std::uint64_t stopped = gpstream::read_checkpoint(checkpoint).state.iteration;
  CHECK(stopped > 0);
  const CommandResult resumed = run_on_ranks(2, "train --resume " + quote(checkpoint) + " -q --max-iter " +
                                                    std::to_string(stopped + 2));
  CAPTURE(resumed.err);
  CHECK(resumed.exit_code == 0);
}

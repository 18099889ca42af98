// `mpirun -np P gpstream train …` end to end: the model of P ranks is the
// single process's, bit for bit; a checkpoint written by P ranks resumes on
// another number of ranks to the uninterrupted model; what cannot run on
// several ranks yet says so in one line.
#include "storage/checkpoint/checkpoint_file.h"
#include "storage/model/dense_model_file.h"
#include "storage/model/sparse_model_file.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>

using gpstream::testing::CommandResult;
using gpstream::testing::quote;
using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;

namespace {

const std::string kHyper =
    " --lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039 --active-set 100 --seed 3 ";

// gpstream on `ranks` ranks (oversubscribed: CI has two cores; as root where CI runs as root).
CommandResult run_on_ranks(std::size_t ranks, const std::string& arguments) {
  ScratchDirectory capture;
  const std::string out = capture.file("out"), err = capture.file("err");
  const std::string command =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 '" MPIRUN "' --oversubscribe -np " +
      std::to_string(ranks) + " '" GPSTREAM_BINARY "' " + arguments + " >'" + out + "' 2>'" + err + "' </dev/null";
  const int status = std::system(command.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = gpstream::testing::read_file(out);
  result.err = gpstream::testing::read_file(err);
  return result;
}

// The first column (the means) of a prediction file.
std::vector<double> means_of(const std::string& path) {
  std::vector<double> means;
  for (const std::vector<double>& row : gpstream::testing::read_numbers(path)) means.push_back(row.at(0));
  return means;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

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

TEST_CASE("mpirun -np 2, 3 predict the single process's means (to rounding), and refuse what they cannot yet") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5"), test = directory.file("test.csv");
  REQUIRE(run_gpstream("generate friedman1 --rows 2000 --seed 7 -q -o " + quote(train)).exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 8 --noise-free -q -o " + quote(test)).exit_code == 0);
  const std::string model = directory.file("model.h5");
  REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(model) + kHyper + " --tol 1e-3 -q").exit_code == 0);
  const std::string alone = directory.file("alone.csv");
  REQUIRE(run_gpstream("predict " + quote(model) + " " + quote(test) + " -o " + quote(alone) + " -q").exit_code == 0);
  const std::vector<double> expected = means_of(alone);
  REQUIRE(expected.size() == 300);
  for (const std::size_t ranks : {2, 3}) {
    CAPTURE(ranks);
    const std::string output = directory.file("ranks.csv");
    const CommandResult run =
        run_on_ranks(ranks, "predict " + quote(model) + " " + quote(test) + " -o " + quote(output) + " --force");
    CAPTURE(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(run.err.find("on " + std::to_string(ranks) + " ranks") != std::string::npos);
    CHECK(run.err.find("predict: RMSE") != std::string::npos);
    const std::vector<double> means = means_of(output);
    REQUIRE(means.size() == expected.size());
    // Each rank sums its own rows: the order of the sum, not its terms, differs.
    for (std::size_t k = 0; k < means.size(); ++k) CHECK(means[k] == doctest::Approx(expected[k]).epsilon(1e-10));
  }
  const CommandResult variance = run_on_ranks(
      2, "predict " + quote(model) + " " + quote(test) + " -o " + quote(directory.file("v.csv")) + " --variance");
  CHECK(variance.exit_code == 2);
  CHECK(variance.err.find("on several ranks predict gives the means of a dense model only") != std::string::npos);
  CHECK(!std::filesystem::exists(directory.file("v.csv")));
}

TEST_CASE(
    "mpirun -np 2, 3 fit the single process's SR model and greedy bases (sgma, mpgp, sggp), the sums of their passes "
    "added over the ranks") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 2000 --seed 7 -q -o " + quote(train)).exit_code == 0);
  for (const char* method : {"sr", "sgma", "mpgp", "sggp"}) {
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
    }
  }
}

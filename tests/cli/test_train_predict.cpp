// End-to-end training and prediction through the gpstream binary.
#include "storage/checkpoint/checkpoint_file.h"
#include "storage/dataset/dataset_format.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/dense_model_file.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>

using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;
using gpstream::testing::spawn_gpstream;

namespace {

// Friedman1 hyperparameters in standardised space (../shared/data/hyper/friedman1.json, rounded).
const std::string kHyper = "--lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039";

std::string quote(const std::string& path) { return "'" + path + "'"; }

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) difference += (a[i] - b[i]) * (a[i] - b[i]), norm += b[i] * b[i];
  return std::sqrt(difference / norm);
}

}  // namespace

TEST_CASE("train then predict: gbcd and cg models equal the cholesky model, and predict reports the RMSE") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5"), test = directory.file("test.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 1200 --seed 5 -q -o " + quote(train)).exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 6 --noise-free -q -o " + quote(test)).exit_code == 0);
  std::map<std::string, std::vector<double>> alpha;
  for (const char* solver : {"cholesky", "gbcd", "cg"}) {
    CAPTURE(solver);
    const std::string model = directory.file(std::string(solver) + ".h5");
    const auto trained = run_gpstream("train " + quote(train) + " -o " + quote(model) + " --solver " + solver +
                                      " --active-set 200 --tol 1e-9 " + kHyper);
    CAPTURE(trained.err);
    REQUIRE(trained.exit_code == 0);
    alpha[solver] = gpstream::read_dense_model(model).alpha;
    const auto predicted = run_gpstream("predict " + quote(model) + " " + quote(test) + " -o " +
                                        quote(directory.file("p.csv")) + " --force");
    CAPTURE(predicted.err);
    REQUIRE(predicted.exit_code == 0);
    CHECK(predicted.err.find("(GBCD paper eq. 16: the RMSE over the standard deviation of the training targets") !=
          std::string::npos);
    CHECK(gpstream::testing::count_lines(gpstream::testing::read_file(directory.file("p.csv"))) == 301);
  }
  CHECK(relative_difference(alpha["gbcd"], alpha["cholesky"]) < 1e-6);
  CHECK(relative_difference(alpha["cg"], alpha["cholesky"]) < 1e-6);

  // Predictions from CSV inputs picked by column name equal those from the dataset.
  REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 6 --noise-free -q -o " + quote(directory.file("test.csv")))
              .exit_code == 0);
  const std::string model = directory.file("cholesky.h5");
  REQUIRE(
      run_gpstream("predict " + quote(model) + " " + quote(test) + " -o " + quote(directory.file("a.csv"))).exit_code ==
      0);
  REQUIRE(run_gpstream("predict " + quote(model) + " " + quote(directory.file("test.csv")) + " -o " +
                       quote(directory.file("b.csv")))
              .exit_code == 0);
  CHECK(gpstream::testing::read_file(directory.file("a.csv")) == gpstream::testing::read_file(directory.file("b.csv")));
}

TEST_CASE("a run stopped and resumed from its checkpoint gives the bit-identical model, with the log continued") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 1000 --seed 7 -q -o " + quote(train)).exit_code == 0);
  const std::string common = " --active-set 100 --tol 1e-7 --seed 3 --precision double " + kHyper;
  // The kernel-column cache changes no result (at one precision): the whole run keeps columns,
  // the first part does not, the resumed part starts with an empty cache.
  const auto whole_run =
      run_gpstream("train " + quote(train) + " -o " + quote(directory.file("whole.h5")) + common + " --cache ram");
  REQUIRE(whole_run.exit_code == 0);
  CHECK(whole_run.err.find("kernel-column cache in RAM") != std::string::npos);
  CHECK(whole_run.err.find("% hits") != std::string::npos);
  const auto first = run_gpstream("train " + quote(train) + " -o " + quote(directory.file("part.h5")) + common +
                                  " --max-iter 4 --cache off --checkpoint " + quote(directory.file("c.h5")) +
                                  " --log " + quote(directory.file("log.csv")));
  REQUIRE(first.exit_code == 0);
  CHECK(first.err.find("not converged") != std::string::npos);
  CHECK(gpstream::read_checkpoint(directory.file("c.h5")).state.iteration == 4);
  const auto resumed =
      run_gpstream("train --resume " + quote(directory.file("c.h5")) + " -o " + quote(directory.file("resumed.h5")) +
                   " --max-iter 0 --cache ram --log " + quote(directory.file("log.csv")));
  CAPTURE(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.find("resuming gbcd from") != std::string::npos);
  CHECK(resumed.err.find("at iteration 4:") != std::string::npos);
  const auto whole = gpstream::read_dense_model(directory.file("whole.h5"));
  const auto continued = gpstream::read_dense_model(directory.file("resumed.h5"));
  REQUIRE(whole.alpha.size() == continued.alpha.size());
  CHECK(std::memcmp(whole.alpha.data(), continued.alpha.data(), whole.alpha.size() * sizeof(double)) == 0);
  CHECK(whole.training.iterations == continued.training.iterations);
  // One header, then iterations 0, 1, ... without a gap or a repeat.
  const std::string log = gpstream::testing::read_file(directory.file("log.csv"));
  CHECK(gpstream::testing::count_lines(log) == whole.training.iterations + 2);

  // A resumed run keeps its configuration, and its dataset.
  const auto conflicting = run_gpstream("train --resume " + quote(directory.file("c.h5")) + " -o " +
                                        quote(directory.file("x.h5")) + " --solver cg");
  CHECK(conflicting.exit_code == 1);
  CHECK(conflicting.err.find("--solver cg conflicts with checkpoint") != std::string::npos);
  REQUIRE(
      run_gpstream("generate friedman1 --rows 1000 --seed 8 -q -o " + quote(directory.file("other.h5"))).exit_code ==
      0);
  const auto other = run_gpstream("train " + quote(directory.file("other.h5")) + " --resume " +
                                  quote(directory.file("c.h5")) + " -o " + quote(directory.file("x.h5")));
  CHECK(other.exit_code == 1);
  CHECK(other.err.find("is not the dataset checkpoint") != std::string::npos);
}

TEST_CASE("a single-precision run resumes to the same bits, and the model and info say how it ran") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 3000 --seed 7 -q -o " + quote(train)).exit_code == 0);
  const std::string common = " --active-set 100 --seed 3 --cache off " + kHyper;
  const auto whole_run = run_gpstream("train " + quote(train) + " -o " + quote(directory.file("whole.h5")) + common);
  CAPTURE(whole_run.err);
  REQUIRE(whole_run.exit_code == 0);
  CHECK(whole_run.err.find("train: precision: single for the block products and greedy scores (auto") !=
        std::string::npos);
  CHECK(whole_run.err.find("; precision single, 1 exact residual in double; wrote") != std::string::npos);
  REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(directory.file("part.h5")) + common +
                       " -q --max-iter 5 --checkpoint " + quote(directory.file("c.h5")))
              .exit_code == 0);
  // The job keeps its precision: another one is refused, and the resumed run says it continues in single.
  CHECK(run_gpstream("info " + quote(directory.file("c.h5"))).out.find("precision    single\n") != std::string::npos);
  const auto conflicting = run_gpstream("train --resume " + quote(directory.file("c.h5")) + " -o " +
                                        quote(directory.file("x.h5")) + " --precision double");
  CHECK(conflicting.exit_code == 1);
  CHECK(conflicting.err.find("--precision double conflicts with checkpoint") != std::string::npos);
  const auto resumed = run_gpstream("train --resume " + quote(directory.file("c.h5")) + " -o " +
                                    quote(directory.file("resumed.h5")) + " --max-iter 0");
  CAPTURE(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.find("train: precision: single (as the checkpoint's run)") != std::string::npos);
  const auto whole = gpstream::read_dense_model(directory.file("whole.h5"));
  const auto continued = gpstream::read_dense_model(directory.file("resumed.h5"));
  REQUIRE(whole.alpha.size() == continued.alpha.size());
  CHECK(std::memcmp(whole.alpha.data(), continued.alpha.data(), whole.alpha.size() * sizeof(double)) == 0);
  CHECK(whole.training.precision == "single");
  CHECK(whole.training.exact_residuals_in_single_precision == 1);
  CHECK(continued.training.precision == "single");
  CHECK(run_gpstream("info " + quote(directory.file("whole.h5")))
            .out.find("precision    single, 1 exact residual in "
                      "double") != std::string::npos);
  // --precision double: the model says so, and the sparse models take no precision.
  REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(directory.file("double.h5")) + common +
                       " -q --precision double")
              .exit_code == 0);
  CHECK(gpstream::read_dense_model(directory.file("double.h5")).training.precision == "double");
  const auto sparse = run_gpstream("train " + quote(train) + " -o " + quote(directory.file("sd.h5")) +
                                   " --model sd --basis 100 --precision double " + kHyper);
  CHECK(sparse.exit_code == 2);
  CHECK(sparse.err.find("--precision is for --model dense") != std::string::npos);
}

TEST_CASE("the kernel-column cache's disk tier gives the model bit for bit, serves columns, and leaves no file") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 2000 --seed 7 -q -o " + quote(train)).exit_code == 0);
  // 16 MiB above the process's own: RAM for ~380 of the 2,000 columns, more than an active set of 100; the rest on disk.
  const std::string common = " --active-set 100 --max-iter 30 --seed 3 --precision double" +
                             gpstream::testing::memory_above_process(16u << 20) + " " + kHyper;
  REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(directory.file("off.h5")) + common + " --cache off")
              .exit_code == 0);
  // The disk tier's file goes in the model's directory by default.
  const auto on_disk = run_gpstream("train " + quote(train) + " -o " + quote(directory.file("disk.h5")) + common +
                                    " --cache disk --log " + quote(directory.file("log.csv")));
  CAPTURE(on_disk.err);
  REQUIRE(on_disk.exit_code == 0);
  CHECK(on_disk.err.find("on disk: up to 2,000 columns") != std::string::npos);
  CHECK(on_disk.err.find("in a deleted file in " + directory.path().string()) != std::string::npos);
  // The budget's split, as printed: every part (vectors, X, the disk tier's queue, the RAM tier) and what is
  // free add up to the budget given, never more.
  {
    const std::size_t start = on_disk.err.find("memory budget ");
    REQUIRE(start != std::string::npos);
    const double total = std::stod(on_disk.err.substr(start + 14));
    REQUIRE(on_disk.err.substr(on_disk.err.find(' ', start + 14), 6) == " MiB: ");
    const std::size_t parts_start = on_disk.err.find(": ", start) + 2;
    const std::string split = on_disk.err.substr(parts_start, on_disk.err.find(" free", start) + 5 - parts_start);
    CHECK(split.find("for the process itself before this run") != std::string::npos);
    CHECK(split.find("for the disk tier's write queue") != std::string::npos);
    CHECK(split.find("for the kernel-column cache") != std::string::npos);
    double sum = 0;
    std::stringstream parts(split);
    for (std::string part; std::getline(parts, part, ',');) {
      std::stringstream words(part);
      double value = 0;
      std::string unit;
      words >> value >> unit;
      sum += value * (unit == "KiB" ? 1024.0 : unit == "MiB" ? 1048576.0 : unit == "GiB" ? 1073741824.0 : 1.0);
    }
    // Within the rounding of the printed figures: half a unit of the last digit (0.05 MiB) per part.
    CHECK(std::abs(sum - total * 1048576) <= 7 * 0.05 * 1048576);
  }
  const auto plain = gpstream::read_dense_model(directory.file("off.h5"));
  const auto cached = gpstream::read_dense_model(directory.file("disk.h5"));
  REQUIRE(plain.alpha.size() == cached.alpha.size());
  CHECK(std::memcmp(plain.alpha.data(), cached.alpha.data(), plain.alpha.size() * sizeof(double)) == 0);
  // The log's last line (iteration 30): 3,000 lookups, hits, of them some read back from disk, 16,000 bytes each.
  const std::string log = gpstream::testing::read_file(directory.file("log.csv"));
  REQUIRE(gpstream::testing::count_lines(log) == 32);
  std::vector<std::string> last;
  std::stringstream line(log.substr(log.rfind('\n', log.size() - 2) + 1));
  for (std::string field; std::getline(line, field, ',');) last.push_back(field);
  REQUIRE(last.size() == 11);
  CHECK(last[0] == "30");
  CHECK(last[6] == "3000");
  const std::uint64_t hits = std::stoull(last[7]), disk_hits = std::stoull(last[8]);
  CHECK(disk_hits > 0);
  CHECK(hits >= disk_hits);
  CHECK(std::stoull(last[9]) == disk_hits * 16000);
  CHECK(std::isfinite(std::stod(last[10])));  // core-seconds saved, net of the reads (the sign depends on the disk)
  CHECK(directory.entries() == std::vector<std::string>{"disk.h5", "log.csv", "off.h5", "train.h5"});

  // A directory that cannot hold it: one line naming it, no model.
  const auto missing = run_gpstream("train " + quote(train) + " -o " + quote(directory.file("x.h5")) + common +
                                    " --cache disk --cache-dir " + quote(directory.file("none")));
  CHECK(missing.exit_code == 1);
  CHECK(gpstream::testing::count_lines(missing.err) == 1);
  CHECK(missing.err.find("--cache-dir") != std::string::npos);
  CHECK(missing.err.find(directory.file("none")) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("x.h5")));
}

TEST_CASE("Ctrl-C writes a checkpoint and prints the resume command") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 3000 --seed 9 -q -o " + quote(train)).exit_code == 0);
  const std::string err = directory.file("err.txt");
  const std::string command = std::string("'") + GPSTREAM_BINARY + "' train " + quote(train) + " -o " +
                              quote(directory.file("m.h5")) + " --solver bcd-cyclic --tol 1e-12 --checkpoint " +
                              quote(directory.file("c.h5")) + " " + kHyper + " 2>" + quote(err) +
                              " & pid=$!; sleep 1.5; kill -INT $pid; wait $pid";
  const int status = std::system(command.c_str());
  CHECK(WEXITSTATUS(status) == 130);
  const std::string message = gpstream::testing::read_file(err);
  CHECK(message.find("Resume with:") != std::string::npos);
  CHECK(message.find("gpstream train --resume") != std::string::npos);
  CHECK(gpstream::read_checkpoint(directory.file("c.h5")).state.iteration > 0);
  CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));
}

TEST_CASE("checkpoints survive SIGKILL at random moments: every checkpoint left behind loads") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 2000 --seed 10 -q -o " + quote(train)).exit_code == 0);
  const std::string checkpoint = directory.file("c.h5");
  std::mt19937 random(12345);
  std::uniform_int_distribution<int> delay_ms(150, 700);
  int loaded = 0;
  for (int attempt = 0; attempt < 30; ++attempt) {
    const pid_t pid = spawn_gpstream({"train",
                                      train,
                                      "-o",
                                      directory.file("m.h5"),
                                      "--force",
                                      "--solver",
                                      "bcd-cyclic",
                                      "--active-set",
                                      "100",
                                      "--tol",
                                      "1e-12",
                                      "--checkpoint",
                                      checkpoint,
                                      "--checkpoint-every",
                                      "0.001",
                                      "--lengthscales",
                                      "1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4",
                                      "--noise-var",
                                      "0.039",
                                      "-q"});
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!std::filesystem::exists(checkpoint)) continue;
    CAPTURE(attempt);
    const gpstream::Checkpoint read = gpstream::read_checkpoint(checkpoint);  // throws if torn
    CHECK(read.state.alpha.size() == 2000);
    ++loaded;
  }
  CHECK(loaded >= 20);
}

TEST_CASE("bad training and prediction inputs give one clear line") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 200 --seed 11 -q -o " + quote(train)).exit_code == 0);
  const std::string out = " -o " + quote(directory.file("m.h5"));
  auto expect = [&](const std::string& arguments, const std::string& message) {
    const auto result = run_gpstream(arguments);
    CAPTURE(arguments);
    CAPTURE(result.err);
    CHECK(result.exit_code != 0);
    CHECK(gpstream::testing::count_lines(result.err) == 1);
    CHECK(result.err.find(message) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));
  };
  expect("train " + quote(train) + out + " --lengthscales 1,2 --noise-var 0.1",
         "needs 10 lengthscales (one per input) or one for all, but 2 were given");
  expect("train " + quote(train) + out + " --kernel se --lengthscales 1 --noise-var 0",
         "--noise-var=0: give a positive, finite number");
  expect("train " + quote(train) + out + " --kernel se --lengthscales -2 --noise-var 0.1",
         "--lengthscales: values must be positive, not -2");
  expect("train " + quote(train) + out + " --kernel se --lengthscales 1 --noise-var 0.1 --signal-var 0",
         "--signal-var=0: give a positive, finite number");
  expect("train " + quote(train) + out + " --kernel se --lengthscales 1", "give the --noise-var");
  expect("train " + quote(train) + out + " --kernel se --lengthscales 1 --noise-var 0.1 --solver newton",
         "--solver=\"newton\": choose auto, gbcd, bcd-cyclic");
  // K̄ of 1,000 rows (7.6 MiB) in 2 MiB above what the process holds.
  const std::string larger = directory.file("larger.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 1000 --seed 12 -q -o " + quote(larger)).exit_code == 0);
  expect("train " + quote(larger) + out + " --kernel se --lengthscales 1 --noise-var 0.1 --solver cholesky" +
             gpstream::testing::memory_above_process(2u << 20),
         "solve by block coordinate descent (gbcd), which forms no n×n matrix (or raise --memory)");

  {  // A dataset file with no rows.
    gpstream::hdf5::Handle file = gpstream::hdf5::create_file(directory.file("empty.h5"));
    const hid_t root = file.get();
    gpstream::hdf5::write_attribute(root, "format", std::string(gpstream::kDatasetFormat));
    gpstream::hdf5::write_attribute(root, "version", std::int64_t{1});
    gpstream::hdf5::write_attribute(root, "feature_names", std::vector<std::string>{"a"});
    gpstream::hdf5::write_attribute(root, "target_name", std::string("y"));
    for (const char* name : {"x_mean", "x_std"}) gpstream::hdf5::write_attribute(root, name, std::vector<double>{0.0});
    for (const char* name : {"y_mean", "y_std"}) gpstream::hdf5::write_attribute(root, name, 0.0);
    gpstream::hdf5::write_attribute(root, "fingerprint", std::string("0"));
    const hsize_t dims[2] = {0, 1};
    gpstream::hdf5::Handle space = gpstream::hdf5::check_handle(H5Screate_simple(2, dims, nullptr), H5Sclose, "space");
    gpstream::hdf5::Handle x = gpstream::hdf5::check_handle(
        H5Dcreate2(root, "X", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose, "X");
    gpstream::hdf5::write_vector(root, "y", {});
  }
  expect("train " + quote(directory.file("empty.h5")) + out + " --kernel se --lengthscales 1 --noise-var 0.1",
         "has no rows to train on");
  expect("hyper " + quote(directory.file("empty.h5")) + " --subset 100 -o " + quote(directory.file("h.json")),
         "' has 0 rows: a dataset of one row or none has nothing to learn hyperparameters from");

  // A model used with inputs of a different d.
  const std::string model = directory.file("model.h5");
  REQUIRE(
      run_gpstream("train " + quote(train) + " -o " + quote(model) + " --kernel se --lengthscales 2 --noise-var 0.1 -q")
          .exit_code == 0);
  gpstream::testing::write_file(directory.file("narrow.csv"), "1,2,3\n4,5,6\n");
  expect("predict " + quote(model) + " " + quote(directory.file("narrow.csv")) + out,
         "the model takes 10 inputs, but the file has 3 columns");
  gpstream::testing::write_file(directory.file("small.csv"), "a,b\n1,2\n");
  REQUIRE(run_gpstream("convert " + quote(directory.file("small.csv")) + " -q -o " + quote(directory.file("small.h5")))
              .exit_code == 0);
  expect("predict " + quote(model) + " " + quote(directory.file("small.h5")) + out,
         "has no inputs named \"x1\", \"x2\"");
  expect("predict " + quote(model) + " " + quote(train) + out + " --data " + quote(directory.file("small.h5")),
         "is not the dataset model");
}

TEST_CASE("a dataset's inputs are matched by name as a CSV's are: columns in another order predict the same") {
  ScratchDirectory directory;
  std::string train = "a,b,c,y\n", test = "c,a,b,y\n", renamed = "p,q,r,y\n";
  for (int i = 0; i < 200; ++i) {
    const double a = std::fmod(i * 0.6180339887, 1.0), b = std::fmod(i * 0.4142135623, 1.0),
                 c = std::fmod(i * 0.7320508075, 1.0);
    const double y = std::sin(6 * a) + 2 * b * b - c;
    train += fmt::format("{},{},{},{}\n", a, b, c, y);
    if (i % 4 == 0) {
      test += fmt::format("{},{},{},{}\n", c, a, b, y);
      renamed += fmt::format("{},{},{},{}\n", c, a, b, y);
    }
  }
  gpstream::testing::write_file(directory.file("train.csv"), train);
  gpstream::testing::write_file(directory.file("test.csv"), test);
  gpstream::testing::write_file(directory.file("renamed.csv"), renamed);
  for (const char* name : {"train", "test", "renamed"}) {
    REQUIRE(run_gpstream(fmt::format("convert {} -o {}", quote(directory.file(std::string(name) + ".csv")),
                                     quote(directory.file(std::string(name) + ".h5"))))
                .exit_code == 0);
  }
  const std::string model = directory.file("m.h5");
  REQUIRE(run_gpstream("train " + quote(directory.file("train.h5")) +
                       " --kernel matern52 --lengthscales 0.5 --noise-var 0.01 -q -o " + quote(model))
              .exit_code == 0);
  const auto predicted = [&](const std::string& inputs, const std::string& output) {
    const auto result = run_gpstream("predict " + quote(model) + " " + quote(inputs) + " -o " + quote(output));
    CAPTURE(result.err);
    REQUIRE(result.exit_code == 0);
    return gpstream::testing::read_numbers(output);
  };
  const auto from_csv = predicted(directory.file("test.csv"), directory.file("csv.csv"));
  const auto from_dataset = predicted(directory.file("test.h5"), directory.file("h5.csv"));
  REQUIRE(from_csv.size() == 50);
  CHECK(from_dataset == from_csv);
  // The truth is within the model's reach: by position (c, a, b read as a, b, c) it was not (RMSE 1.47 of 0.235 in the sweep).
  const auto report = run_gpstream("predict " + quote(model) + " " + quote(directory.file("test.h5")) + " -o " +
                                   quote(directory.file("again.csv")));
  const std::size_t at = report.err.find("RMSE ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(report.err.substr(at + 5)) < 0.1);
  // A dataset without the model's inputs is refused, naming them.
  const auto refused = run_gpstream("predict " + quote(model) + " " + quote(directory.file("renamed.h5")) + " -o " +
                                    quote(directory.file("no.csv")));
  CAPTURE(refused.err);
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("no inputs named \"a\", \"b\", \"c\", which the model needs") != std::string::npos);
  CHECK(!std::filesystem::exists(directory.file("no.csv")));
}

TEST_CASE("train --profile says where an iteration's time goes, phase by phase, and the phases add up to no more") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 3000 --seed 5 -q -o " + quote(data)).exit_code == 0);
  const auto run = run_gpstream("train " + quote(data) + " " + kHyper +
                                " --max-iter 20 --active-set 100 -q --profile -o " + quote(directory.file("m.h5")));
  CAPTURE(run.err);
  REQUIRE(run.exit_code == 0);
  const std::size_t at = run.err.find("train: profile, ms per iteration over 20 iterations: ");
  REQUIRE(at != std::string::npos);
  double phases = 0.0;
  for (const char* phase : {"first variable", "candidate pool", "chunk solves", "candidate scores", "greedy steps",
                            "factor block", "block solve", "block product", "subspace step", "convergence"}) {
    CAPTURE(phase);
    const std::size_t found = run.err.find(std::string(phase) + " ", at);
    REQUIRE(found != std::string::npos);
    const double milliseconds = std::stod(run.err.substr(found + std::strlen(phase) + 1));
    CHECK(milliseconds >= 0.0);
    phases += milliseconds;
  }
  const double all = std::stod(run.err.substr(run.err.find("in all ", at) + 7));
  CHECK(phases > 0.0);
  CHECK(phases <= all * 1.001 + 0.01);
}

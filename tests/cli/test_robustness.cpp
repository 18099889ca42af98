// What a user meets when things go wrong: interrupted jobs, resumed jobs,
// data written by other tools, and numbers that are not numbers.
#include "storage/dataset/dataset_format.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/dense_model_file.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <thread>

using gpstream::testing::quote;
using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;

namespace {

const std::vector<std::string> kHyper = {"--lengthscales", "1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4", "--noise-var",
                                         "0.039"};

std::string join(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + quote(word);
  return text;
}

// Overwrites /X[row, column] (or /y[row] when column < 0) of a dataset in
// place, as another tool editing the file would: attributes untouched.
void overwrite_value(const std::string& path, std::size_t row, int column, double value) {
  gpstream::hdf5::Handle file =
      gpstream::hdf5::check_handle(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, path);
  gpstream::hdf5::Handle dataset = gpstream::hdf5::open_dataset(file.get(), column < 0 ? "y" : "X", path);
  gpstream::hdf5::Handle space = gpstream::hdf5::check_handle(H5Dget_space(dataset.get()), H5Sclose, path);
  const hsize_t start[2] = {row, static_cast<hsize_t>(std::max(column, 0))}, count[2] = {1, 1};
  REQUIRE(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0);
  const hsize_t one[1] = {1};
  gpstream::hdf5::Handle memory = gpstream::hdf5::check_handle(H5Screate_simple(1, one, nullptr), H5Sclose, path);
  REQUIRE(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, memory.get(), space.get(), H5P_DEFAULT, &value) >= 0);
}

// The command after "Resume with:" in an interrupted run's message, without the leading "gpstream ".
std::string printed_resume_command(const std::string& message) {
  const std::size_t marker = message.find("Resume with:\n  gpstream ");
  REQUIRE(marker != std::string::npos);
  const std::size_t start = marker + std::strlen("Resume with:\n  gpstream ");
  return message.substr(start, message.find('\n', start) - start);
}

// Polls `done` every 5 ms for up to 20 s; whether it came true.
template <typename Condition>
bool eventually(Condition done) {
  for (int wait = 0; wait < 4000; ++wait) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

// Waits until a run has claimed `path`: its lock file exists.
void wait_until_claimed(const std::string& path) {
  const std::filesystem::path p(path);
  const std::filesystem::path lock = p.parent_path() / ("." + p.filename().string() + ".gpstream-lock");
  REQUIRE(eventually([&] { return std::filesystem::exists(lock); }));
}

// Waits until a run's standard error, written to `path`, holds `text`.
void wait_until_said(const std::string& path, const std::string& text) {
  REQUIRE(eventually([&] {
    return std::filesystem::exists(path) && gpstream::testing::read_file(path).find(text) != std::string::npos;
  }));
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE(
    "Ctrl-C, then the printed resume command, ends where the launched job would have: same tolerance, same bits") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 4000 --seed 3 -q -o " + quote(train)).exit_code == 0);
  // Small active sets make this run take a few seconds; --tol 1e-6 is not the default.
  std::vector<std::string> job = {"train", train, "--active-set", "5", "--candidates", "10", "--tol", "1e-6"};
  job.insert(job.end(), kHyper.begin(), kHyper.end());
  const std::string whole = directory.file("whole.h5"), model = directory.file("model.h5");
  REQUIRE(run_gpstream(join(job) + " -q -o " + quote(whole)).exit_code == 0);

  const std::string checkpoint = directory.file("run.ckpt"), err = directory.file("err.txt");
  std::vector<std::string> launched = job;
  launched.insert(launched.end(), {"-o", model, "--checkpoint", checkpoint, "--checkpoint-every", "0.05"});
  const pid_t pid = gpstream::testing::spawn_gpstream(launched, err);
  for (int wait = 0; wait < 2000 && !std::filesystem::exists(checkpoint); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGINT);
  REQUIRE(gpstream::testing::wait_for(pid) == 130);
  const std::string message = gpstream::testing::read_file(err);
  CAPTURE(message);
  CHECK_FALSE(std::filesystem::exists(model));
  const std::string early = directory.file("early.ckpt");  // the resumed runs below overwrite the checkpoint
  std::filesystem::copy_file(checkpoint, early);

  const auto resumed = run_gpstream(printed_resume_command(message));
  CAPTURE(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.find("tol 1e-06") != std::string::npos);  // it says what it continues with
  const gpstream::DenseModel a = gpstream::read_dense_model(whole), b = gpstream::read_dense_model(model);
  CHECK(a.training.iterations == b.training.iterations);
  CHECK(b.training.tolerance == 1e-6);
  CHECK(bitwise_equal(a.alpha, b.alpha));

  // After a SIGKILL nothing is printed: `--resume` alone continues the same job, to the same output.
  REQUIRE(std::filesystem::remove(model));
  const auto bare = run_gpstream("train --resume " + quote(checkpoint) + " -q");
  CAPTURE(bare.err);
  REQUIRE(bare.exit_code == 0);
  CHECK(bitwise_equal(a.alpha, gpstream::read_dense_model(model).alpha));
  // An option given on resume overrides the job's.
  const auto looser =
      run_gpstream("train --resume " + quote(early) + " --tol 1e-3 -o " + quote(directory.file("looser.h5")));
  CHECK(looser.exit_code == 0);
  CHECK(looser.err.find("tol 0.001") != std::string::npos);
  CHECK(gpstream::read_dense_model(directory.file("looser.h5")).training.iterations < a.training.iterations);
}

TEST_CASE("numeric options that are not numbers, or out of range, are refused in one line") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 4 -q -o " + quote(train)).exit_code == 0);
  const std::string base = "train " + quote(train) + " -o " + quote(directory.file("m.h5")) + " " + join(kHyper);
  auto refused = [&](const std::string& options, const std::string& message, int code) {
    const auto result = run_gpstream(base + " " + options);
    CAPTURE(options);
    CAPTURE(result.err);
    CHECK(result.exit_code == code);
    CHECK(gpstream::testing::count_lines(result.err) == 1);
    CHECK(result.err.find(message) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));
  };
  refused("--tol nan", "--tol: nan is not a finite number", 2);
  refused("--tol inf", "--tol: inf is not a finite number", 2);
  refused("--max-iter -1", "--max-iter must be a whole number of at least 0", 2);
  refused("--threads -1", "--threads must be a whole number of at least 0", 2);
  refused("--time-limit -5", "--time-limit=-5: give a finite number, at least 0", 2);
  refused("--signal-var 1e-310", "below the smallest normal double", 2);
  refused("--gap 0.1", "--gap is for --model sggp", 2);
  // A name's choices are the schema's (api/parameter_schema.h), checked as the options are read.
  refused("--cache disc", "--cache=\"disc\": choose off, ram, disk or auto", 2);
  refused("--precision single", "--precision=\"single\": choose auto or double", 2);
  refused("--learn-hyper --learn-on everywhere", "--learn-on=\"everywhere\": choose all or subset", 2);
  refused("--learn-hyper --mean-fit wls", "--mean-fit=\"wls\": choose ols or gls", 2);
  refused("--cache ram --cache-dir .", "--cache-dir and --cache-disk are for the disk tier (--cache disk or auto)", 2);
  refused("--cache disk --cache-disk 0", "--cache-disk: \"0\" is not a positive size", 2);
  refused("--model sggp --basis 20 --tol 1e-3", "--tol is for the dense solvers and cholqr: sggp stops at --gap", 2);
  // The rules between parameters are the API's (api/job_rules.h), Python's too (its test spells them as keywords).
  refused("--model sd --basis 20 --tol 1e-3", "--tol is for the dense solvers and cholqr: --model sd runs to --basis",
          2);
  refused("--kernel auto", "--kernel auto compares kernels by their learned evidence: it needs --learn-hyper", 2);
  refused("--mean none", "--mean is an option of learning: it needs --learn-hyper", 2);
  refused("--learn-hyper --no-standardise", "--learn-hyper learns on standardised data: drop --no-standardise", 2);
  // Hyperparameters whose derived quantities overflow are refused before any work.
  const auto tiny = run_gpstream("train " + quote(train) + " -o " + quote(directory.file("m.h5")) +
                                 " --kernel se --lengthscales 1e-300 --noise-var 0.1");
  CHECK(tiny.exit_code == 1);
  CHECK(tiny.err.find("lengthscale 1e-300 is too small") != std::string::npos);

  // --time-limit 0 means no limit: the run converges, it does not write α = 0.
  const auto unlimited = run_gpstream(base + " --time-limit 0");
  CAPTURE(unlimited.err);
  REQUIRE(unlimited.exit_code == 0);
  CHECK(unlimited.err.find("converged") != std::string::npos);
}

TEST_CASE(
    "NaN or inf in a dataset written by another tool, and non-numeric columns, are errors naming row and column") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5"), test = directory.file("test.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 5 -q -o " + quote(train)).exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 20 --seed 6 -q -o " + quote(test)).exit_code == 0);
  const std::string model = directory.file("m.h5");
  REQUIRE(run_gpstream("train " + quote(train) + " -q -o " + quote(model) + " " + join(kHyper)).exit_code == 0);

  const std::string bad_x = directory.file("bad_x.h5"), bad_y = directory.file("bad_y.h5");
  std::filesystem::copy_file(train, bad_x);
  std::filesystem::copy_file(train, bad_y);
  overwrite_value(bad_x, 41, 2, std::nan(""));
  overwrite_value(bad_y, 7, -1, std::numeric_limits<double>::infinity());
  for (const char* solver : {"gbcd", "cg", "cholesky"}) {
    CAPTURE(solver);
    const auto x = run_gpstream("train " + quote(bad_x) + " -o " + quote(directory.file("x.h5")) + " --solver " +
                                solver + " " + join(kHyper));
    CHECK(x.exit_code == 1);
    CHECK(gpstream::testing::count_lines(x.err) == 1);
    CHECK(x.err.find("/X row 42 column 3 (\"x3\") is nan") != std::string::npos);
    const auto y = run_gpstream("train " + quote(bad_y) + " -o " + quote(directory.file("y.h5")) + " --solver " +
                                solver + " " + join(kHyper));
    CHECK(y.exit_code == 1);
    CHECK(y.err.find("/y row 8 (\"y\") is inf") != std::string::npos);
  }
  // predict reads an HDF5 input by the same rule as a CSV one.
  std::filesystem::copy_file(test, directory.file("bad_test.h5"));
  overwrite_value(directory.file("bad_test.h5"), 3, 0, std::nan(""));
  const auto predicted = run_gpstream("predict " + quote(model) + " " + quote(directory.file("bad_test.h5")) + " -o " +
                                      quote(directory.file("p.csv")));
  CHECK(predicted.exit_code == 1);
  CHECK(predicted.err.find("/X row 4 column 1 (\"x1\") is nan") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("p.csv")));

  // /X of strings: one line saying so, no HDF5 diagnostics.
  {
    gpstream::hdf5::Handle file = gpstream::hdf5::create_file(directory.file("strings.h5"));
    const hid_t root = file.get();
    gpstream::hdf5::write_attribute(root, "format", std::string(gpstream::kDatasetFormat));
    gpstream::hdf5::write_attribute(root, "version", std::int64_t{1});
    const hsize_t dims[2] = {2, 1};
    gpstream::hdf5::Handle space = gpstream::hdf5::check_handle(H5Screate_simple(2, dims, nullptr), H5Sclose, "space");
    gpstream::hdf5::Handle type = gpstream::hdf5::check_handle(H5Tcopy(H5T_C_S1), H5Tclose, "type");
    H5Tset_size(type.get(), 8);
    gpstream::hdf5::Handle x = gpstream::hdf5::check_handle(
        H5Dcreate2(root, "X", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose, "X");
    gpstream::hdf5::write_vector(root, "y", {1.0, 2.0});
  }
  const auto strings = run_gpstream("train " + quote(directory.file("strings.h5")) + " -o " +
                                    quote(directory.file("s.h5")) + " --kernel se --lengthscales 1 --noise-var 0.1");
  CAPTURE(strings.err);
  CHECK(strings.exit_code == 1);
  CHECK(gpstream::testing::count_lines(strings.err) == 1);
  CHECK(strings.err.find("/X holds strings, not numbers") != std::string::npos);
}

TEST_CASE("a singular K̄ from the command line is an error for gbcd as for cholesky, not an endless run") {
  ScratchDirectory directory;
  std::string csv = "a,y\n";
  for (int i = 0; i < 200; ++i) csv += "0.5," + std::to_string(i % 7) + "\n";  // identical rows, different targets
  gpstream::testing::write_file(directory.file("same.csv"), csv);
  REQUIRE(run_gpstream("convert " + quote(directory.file("same.csv")) + " -q -o " + quote(directory.file("same.h5")))
              .exit_code == 0);
  for (const char* solver : {"gbcd", "cholesky", "cg", "smo"}) {
    CAPTURE(solver);
    const auto result =
        run_gpstream("train " + quote(directory.file("same.h5")) + " -o " + quote(directory.file("m.h5")) +
                     " --no-standardise --kernel se --lengthscales 1 --noise-var 1e-300 --solver " + solver);
    CAPTURE(result.err);
    CHECK(result.exit_code == 1);
    CHECK(result.err.find("not numerically positive definite") != std::string::npos);
  }
}

TEST_CASE("a dataset edited in place after a checkpoint or a model was made from it is refused") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 500 --seed 8 -q -o " + quote(train)).exit_code == 0);
  const std::string model = directory.file("m.h5"), checkpoint = directory.file("c.ckpt");
  REQUIRE(run_gpstream("train " + quote(train) + " -q -o " + quote(model) + " --max-iter 2 --checkpoint " +
                       quote(checkpoint) + " " + join(kHyper))
              .exit_code == 0);
  overwrite_value(train, 100, 4, 0.25);  // a finite value: only the contents hash can tell
  const auto resumed =
      run_gpstream("train --resume " + quote(checkpoint) + " --max-iter 0 -o " + quote(directory.file("r.h5")));
  CHECK(resumed.exit_code == 1);
  CHECK(resumed.err.find("was changed after it was written") != std::string::npos);
  const auto predicted =
      run_gpstream("predict " + quote(model) + " " + quote(train) + " -o " + quote(directory.file("p.csv")));
  CHECK(predicted.exit_code == 1);
  CHECK(predicted.err.find("was changed after it was written") != std::string::npos);
}

TEST_CASE("a write that fails for lack of space is one line, exit 1, and leaves no file behind") {
  ScratchDirectory directory;
  const std::string csv = directory.file("big.csv");
  REQUIRE(run_gpstream("generate friedman1 --rows 40000 --seed 9 -q -o " + quote(csv)).exit_code == 0);
  // A file-size limit makes every write past 1 MiB fail as a full disk would (EFBIG instead of ENOSPC).
  const std::string script = directory.file("full.sh");
  gpstream::testing::write_file(script, "ulimit -f 1024\ntrap '' XFSZ\n'" + std::string(GPSTREAM_BINARY) +
                                            "' convert " + quote(csv) + " -o " + quote(directory.file("out.h5")) +
                                            " 2>" + quote(directory.file("err.txt")) + "\n");
  const int status = std::system(("bash " + quote(script)).c_str());
  std::filesystem::remove(script);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);  // not 139: HDF5's exit handler used to crash on the failed file
  const std::string message = gpstream::testing::read_file(directory.file("err.txt"));
  CAPTURE(message);
  CHECK(gpstream::testing::count_lines(message) == 1);
  CHECK(message.find("File too large") != std::string::npos);
  CHECK(directory.entries() == std::vector<std::string>{"big.csv", "err.txt"});
}

TEST_CASE(
    "outputs are never clobbered: no-replace publishing, locked paths, inputs protected, stale temporaries removed") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 4000 --seed 3 -q -o " + quote(train)).exit_code == 0);
  std::vector<std::string> slow = {"train", train, "--active-set", "5", "--candidates", "10", "--tol", "1e-7", "-q"};
  slow.insert(slow.end(), kHyper.begin(), kHyper.end());

  SUBCASE("an output that appears while the run works is kept, and so is the run's result") {
    const std::string model = directory.file("m.h5");
    std::vector<std::string> arguments = slow;
    arguments.erase(std::find(arguments.begin(), arguments.end(), "-q"));
    arguments.insert(arguments.end(), {"-o", model, "--checkpoint", directory.file("c.ckpt")});
    const pid_t pid = gpstream::testing::spawn_gpstream(arguments, directory.file("err.txt"));
    // Not only the lock: the run checks that -o is new just after taking it, and says where its
    // checkpoints go once that check passed; a file written earlier is refused at start instead.
    wait_until_said(directory.file("err.txt"), "a checkpoint every");
    gpstream::testing::write_file(model, "someone else's file");
    CHECK(gpstream::testing::wait_for(pid) == 1);
    const std::string message = gpstream::testing::read_file(directory.file("err.txt"));
    CAPTURE(message);
    CHECK(message.find("appeared while this run was working") != std::string::npos);
    CHECK(gpstream::testing::read_file(model) == "someone else's file");
    CHECK(std::filesystem::exists(model + "." + std::to_string(pid)));
  }
  SUBCASE("two runs cannot share a checkpoint or a model path") {
    std::vector<std::string> arguments = slow;
    arguments.insert(arguments.end(), {"-o", directory.file("a.h5"), "--checkpoint", directory.file("c.ckpt")});
    const pid_t pid = gpstream::testing::spawn_gpstream(arguments);
    wait_until_claimed(directory.file("c.ckpt"));
    const auto second = run_gpstream(join(slow) + " -o " + quote(directory.file("b.h5")) + " --checkpoint " +
                                     quote(directory.file("c.ckpt")));
    CHECK(second.exit_code == 1);
    CHECK(second.err.find("--checkpoint: '" + directory.file("c.ckpt") + "' is in use by another gpstream run") !=
          std::string::npos);
    const auto third = run_gpstream(join(slow) + " -o " + quote(directory.file("a.h5")));
    CHECK(third.exit_code == 1);
    CHECK(third.err.find("is in use by another gpstream run") != std::string::npos);
    ::kill(pid, SIGTERM);
    CHECK(gpstream::testing::wait_for(pid) == 130);
  }
  SUBCASE("a closed terminal (SIGHUP) stops the run with a checkpoint, as Ctrl-C does") {
    std::vector<std::string> arguments = slow;
    arguments.insert(arguments.end(), {"-o", directory.file("a.h5"), "--checkpoint", directory.file("c.ckpt")});
    const pid_t pid = gpstream::testing::spawn_gpstream(arguments);
    wait_until_claimed(directory.file("c.ckpt"));
    ::kill(pid, SIGHUP);
    CHECK(gpstream::testing::wait_for(pid) == 130);
    CHECK(std::filesystem::exists(directory.file("c.ckpt")));
  }
  SUBCASE("no command writes over its own input, even with --force") {
    gpstream::testing::write_file(directory.file("a.csv"), "x,y\n1,2\n3,4\n");
    const auto convert = run_gpstream("convert " + quote(directory.file("a.csv")) + " -o " +
                                      quote(directory.file("a.csv")) + " --force");
    CHECK(convert.exit_code == 1);
    CHECK(convert.err.find("which this command reads") != std::string::npos);
    CHECK(gpstream::testing::read_file(directory.file("a.csv")) == "x,y\n1,2\n3,4\n");
    const auto trained = run_gpstream("train " + quote(train) + " -o " + quote(train) + " --force " + join(kHyper));
    CHECK(trained.exit_code == 1);
    CHECK(trained.err.find("which this command reads") != std::string::npos);
    CHECK(run_gpstream("info " + quote(train)).exit_code == 0);
  }
  SUBCASE("an output directory that does not exist is an error before any training") {
    const auto missing = run_gpstream(join(slow) + " -o " + quote(directory.file("no/such/dir/m.h5")));
    CHECK(missing.exit_code == 1);
    CHECK(missing.err.find("the directory") != std::string::npos);
    CHECK(missing.err.find("does not exist") != std::string::npos);
    const auto checkpoint = run_gpstream(join(slow) + " -o " + quote(directory.file("m.h5")) + " --checkpoint " +
                                         quote(directory.file("gone/c.ckpt")));
    CHECK(checkpoint.exit_code == 1);
    CHECK(checkpoint.err.find("--checkpoint: cannot write") != std::string::npos);
  }
  SUBCASE("the temporary file of a killed writer is removed by the next writer of the same path, and no other file") {
    // Our own pattern (.NAME.gpstream-tmp-PID-XXXXXX), its writer gone: removed. A user's files that merely look
    // alike (.m.h5.tmp-mine, .m.h5.lock) are not ours, however old.
    const std::string stale = directory.file(".m.h5.gpstream-tmp-999999-AbC123");
    const std::string mine = directory.file(".m.h5.tmp-mine"), lock = directory.file(".m.h5.lock");
    for (const std::string& file : {stale, mine, lock}) {
      gpstream::testing::write_file(file, std::string(1 << 16, 'x'));
      std::filesystem::last_write_time(file, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
    }
    const auto trained = run_gpstream("train " + quote(train) + " -q --max-iter 3 -o " + quote(directory.file("m.h5")) +
                                      " " + join(kHyper));
    CHECK(trained.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(stale));
    CHECK(gpstream::testing::read_file(mine) == std::string(1 << 16, 'x'));
    CHECK(gpstream::testing::read_file(lock) == std::string(1 << 16, 'x'));
  }

}

TEST_CASE(
    "the memory budget covers the n-vectors and says how it is split, and a job that cannot fit is refused up front") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5");
  // 200,000 rows: the margins below are megabytes, above the few hundred kilobytes by which the resident memory of
  // the process varies between runs (more under the sanitizers).
  REQUIRE(run_gpstream("generate friedman1 --rows 200000 --seed 3 -q -o " + quote(train)).exit_code == 0);
  // Plain GBCD: its four vectors of the rows' values (the default's past steps are checked below).
  const std::string base = "train " + quote(train) + " --max-iter 2 --solver gbcd --subspace-steps 0 " + join(kHyper) + " -o ";
  const auto resident = run_gpstream(base + quote(directory.file("a.h5")) + " --memory 256M");
  CHECK(resident.exit_code == 0);
  CHECK(resident.err.find("memory budget 256.0 MiB: ") != std::string::npos);
  CHECK(resident.err.find(" for the process itself before this run, 6.1 MiB for 4 "
                          "vectors of 200,000 values, 16.8 MiB for X held in memory") != std::string::npos);
  // 16 MiB above the process's own memory: the vectors (6.1 MiB) fit, X (16.8 MiB more) does not.
  const auto streamed =
      run_gpstream(base + quote(directory.file("b.h5")) + gpstream::testing::memory_above_process(16u << 20));
  CHECK(streamed.exit_code == 0);
  CHECK(streamed.err.find("X streamed from the file in blocks") != std::string::npos);
  CHECK(gpstream::read_dense_model(directory.file("a.h5")).alpha ==
        gpstream::read_dense_model(directory.file("b.h5")).alpha);
  // 2 MiB above it: not even the vectors fit.
  const auto refused =
      run_gpstream(base + quote(directory.file("c.h5")) + gpstream::testing::memory_above_process(2u << 20));
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("4 vectors of 200,000 values needs 6.1 MiB, but the memory budget is") != std::string::npos);
  CHECK(refused.err.find("use fewer training rows (or raise --memory)") != std::string::npos);
  // The past steps of the default (4) are ten vectors more, reserved with the others. Asked for, they are
  // refused when they do not fit; as the default, fewer are taken, and the run says so.
  const std::string fourteen_above = gpstream::testing::memory_above_process(14u << 20);
  const auto accelerated = run_gpstream("train " + quote(train) + " --max-iter 2 --subspace-steps 4 " + join(kHyper) +
                                        " -o " + quote(directory.file("c.h5")) + fourteen_above);
  CHECK(accelerated.exit_code == 1);
  CHECK(accelerated.err.find("14 vectors of 200,000 values needs 21.4 MiB") != std::string::npos);
  CHECK(
      accelerated.err.find("or no past steps (10 of the vectors are the 4 past steps of the subspace acceleration)") !=
      std::string::npos);
  const auto shrunk = run_gpstream("train " + quote(train) + " --max-iter 2 " + join(kHyper) + " -o " +
                                   quote(directory.file("e.h5")) + fourteen_above);
  CAPTURE(shrunk.err);
  CHECK(shrunk.exit_code == 0);
  CHECK(shrunk.err.find("train: gbcd with 1 past steps on ") != std::string::npos);
  CHECK(shrunk.err.find(" for 8 vectors of 200,000 values, ") != std::string::npos);
  CHECK(shrunk.err.find("train: note: 1 past steps of the subspace acceleration instead of the default 4: the 6 "
                        "vectors of 200,000 values the others need do not fit the memory budget") != std::string::npos);
  const auto roomy = run_gpstream("train " + quote(train) + " --max-iter 2 " + join(kHyper) + " -o " +
                                  quote(directory.file("d.h5")) + " --memory 256M");
  CHECK(roomy.exit_code == 0);
  CHECK(roomy.err.find("train: gbcd with 4 past steps on ") != std::string::npos);
  CHECK(roomy.err.find(" for 14 vectors of 200,000 values, ") != std::string::npos);
  // Below what the process itself holds, a budget is refused saying so.
  const auto tiny = run_gpstream(base + quote(directory.file("c.h5")) + " --memory 1M");
  CHECK(tiny.exit_code == 1);
  CHECK(tiny.err.find("the process itself before this run needs") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("c.h5")));
}

TEST_CASE("--max-iter and --time-limit count over the whole job, resumptions included") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5"), checkpoint = directory.file("c.ckpt");
  REQUIRE(run_gpstream("generate friedman1 --rows 1000 --seed 12 -q -o " + quote(train)).exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(train) + " -q --active-set 20 --max-iter 4 --checkpoint " + quote(checkpoint) +
                       " -o " + quote(directory.file("four.h5")) + " " + join(kHyper))
              .exit_code == 0);
  // The job asked for 4 iterations in all: resuming it has nothing left to do.
  const auto same = run_gpstream("train --resume " + quote(checkpoint) + " -o " + quote(directory.file("again.h5")));
  CAPTURE(same.err);
  REQUIRE(same.exit_code == 0);
  CHECK(same.err.find("at most 4 iterations in all") != std::string::npos);
  CHECK(gpstream::read_dense_model(directory.file("again.h5")).training.iterations == 4);
  // Raised to 10: six more, not ten.
  const auto more =
      run_gpstream("train --resume " + quote(checkpoint) + " --max-iter 10 -q -o " + quote(directory.file("ten.h5")));
  REQUIRE(more.exit_code == 0);
  CHECK(gpstream::read_dense_model(directory.file("ten.h5")).training.iterations == 10);
  // A time limit already spent ends a resumed run at once, with the model it has.
  const auto spent = run_gpstream("train --resume " + quote(checkpoint) + " --max-iter 0 --time-limit 1e-9 -o " +
                                  quote(directory.file("spent.h5")));
  CAPTURE(spent.err);
  REQUIRE(spent.exit_code == 0);
  CHECK(spent.err.find("time limit reached") != std::string::npos);
  CHECK(gpstream::read_dense_model(directory.file("spent.h5")).training.iterations == 10);
}

// Nothing lost, nothing silently wrong: what an adversarial sweep of the
// tool found (issue 27), each as a user meets it on the command line.
#include "storage/checkpoint/checkpoint_file.h"
#include "storage/dataset/dataset_format.h"
#include "storage/hdf5/contents_checksum.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/dense_model_file.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>
#include <thread>
#include <tuple>

using gpstream::testing::quote;
using gpstream::testing::run_command;
using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;

namespace {

const std::string& kHyper = gpstream::testing::kFriedman1Kernel;

// Opens a gpstream file for editing in place, as another tool (h5py) would.
gpstream::hdf5::Handle open_for_editing(const std::string& path) {
  return gpstream::hdf5::check_handle(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose, path);
}

// Gives an edited file the checksum of its new contents, as a tool that
// knows the format would: what is then refused is refused by the check of
// the value itself, behind the checksum.
void reseal(const std::string& path) {
  gpstream::hdf5::Handle file = open_for_editing(path);
  gpstream::hdf5::write_attribute(file.get(), gpstream::hdf5::kContentsChecksum,
                                  gpstream::hdf5::contents_checksum(file.get(), path));
}

// Overwrites element `index` of the float64 vector dataset `name`.
void overwrite_element(const std::string& path, const std::string& name, std::size_t index, double value) {
  gpstream::hdf5::Handle file = open_for_editing(path);
  gpstream::hdf5::Handle dataset = gpstream::hdf5::open_dataset(file.get(), name, path);
  gpstream::hdf5::Handle space = gpstream::hdf5::check_handle(H5Dget_space(dataset.get()), H5Sclose, path);
  const hsize_t start[1] = {index}, count[1] = {1};
  REQUIRE(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) >= 0);
  gpstream::hdf5::Handle memory = gpstream::hdf5::check_handle(H5Screate_simple(1, count, nullptr), H5Sclose, path);
  REQUIRE(H5Dwrite(dataset.get(), H5T_NATIVE_DOUBLE, memory.get(), space.get(), H5P_DEFAULT, &value) >= 0);
}

// `gpstream ARGS` with `directory` mounted as a tmpfs of `kibibytes`: a full
// disk (in a user and mount namespace of its own, as an unprivileged user
// may make). Empty when this machine does not allow it. Without
// LeakSanitizer: Debian 12's HDF5 (1.10.8) leaks its file's cache when a
// write fails for lack of space (HDFGroup/hdf5#4585, fixed in 1.14.5), which
// is not ours to judge; every other run of the suite keeps the check.
std::optional<gpstream::testing::CommandResult> run_with_small_disk(const std::string& directory, int kibibytes,
                                                                    const std::string& arguments) {
  const auto probe = run_command("unshare -rm true");
  if (probe.exit_code != 0) return std::nullopt;
  return run_command(fmt::format(
      "unshare -rm sh -c \"mount -t tmpfs -o size={}k tmpfs '{}' && exec env ASAN_OPTIONS=detect_leaks=0 '{}' {}\"",
      kibibytes, directory, GPSTREAM_BINARY, arguments));
}

// Rows of a dataset each twice, the copy's target different: K̄ singular
// but for the noise variance.
std::string duplicated_rows_csv() {
  std::string text = "a,b,c,y\n";
  std::string copies;
  for (int i = 0; i < 400; ++i) {
    const double a = std::fmod(i * 0.6180339887, 1.0), b = std::fmod(i * 0.4142135623, 1.0),
                 c = std::fmod(i * 0.7320508075, 1.0);
    const double y = std::sin(3 * a) + b;
    text += fmt::format("{:.17g},{:.17g},{:.17g},{:.17g}\n", a, b, c, y);
    copies += fmt::format("{:.17g},{:.17g},{:.17g},{:.17g}\n", a, b, c, y + 0.05 * std::cos(7.0 * i));
  }
  return text + copies;
}

}  // namespace

TEST_CASE("no command writes over any file it reads, directly or through the model, with --force or without") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), test = directory.file("t.h5"), model = directory.file("m.h5");
  const std::string hyper = directory.file("h.json");
  REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 2 -q -o " + quote(data)).exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 20 --seed 3 -q -o " + quote(test)).exit_code == 0);
  REQUIRE(run_gpstream("hyper " + quote(data) + " --subset 100 --restarts 0 -q -o " + quote(hyper)).exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(data) + " --hyper " + quote(hyper) + " -q -o " + quote(model)).exit_code == 0);
  const std::string data_bytes = gpstream::testing::read_file(data), hyper_bytes = gpstream::testing::read_file(hyper);
  const auto refused = [&](const std::string& arguments, const std::string& what) {
    CAPTURE(arguments);
    const auto result = run_gpstream(arguments);
    CAPTURE(result.err);
    CHECK(result.exit_code == 1);
    CHECK(result.err.find(what) != std::string::npos);
    CHECK(result.err.find("never writes over a file it reads") != std::string::npos);
  };
  // The model's training dataset, read through the model.
  refused("predict " + quote(model) + " " + quote(test) + " -o " + quote(data) + " --force",
          "is the model's training dataset");
  // The hyperparameter file, as the model or as the log.
  refused("train " + quote(data) + " --hyper " + quote(hyper) + " -o " + quote(hyper) + " --force", "is --hyper");
  refused("train " + quote(data) + " --hyper " + quote(hyper) + " -o " + quote(directory.file("m2.h5")) + " --log " +
              quote(hyper),
          "is --hyper");
  refused("train " + quote(data) + " --learn-hyper --subset 50 --init " + quote(hyper) + " --save-hyper " +
              quote(hyper) + " --force -o " + quote(directory.file("m3.h5")),
          "is --init");
  refused("hyper " + quote(data) + " --init " + quote(hyper) + " -o " + quote(hyper) + " --force", "is --init");
  CHECK(gpstream::testing::read_file(data) == data_bytes);
  CHECK(gpstream::testing::read_file(hyper) == hyper_bytes);
  // A checkpoint being resumed is read: no other output may replace it (its own --checkpoint continues it).
  const std::string checkpoint = directory.file("c.h5");
  REQUIRE(run_gpstream("train " + quote(data) + " --hyper " + quote(hyper) +
                       " --active-set 50 --max-iter 2 -q --checkpoint " + quote(checkpoint) + " -o " +
                       quote(directory.file("m4.h5")))
              .exit_code == 0);
  refused("train --resume " + quote(checkpoint) + " --checkpoint " + quote(directory.file("c2.h5")) + " --log " +
              quote(checkpoint),
          "is --resume");
  CHECK(gpstream::read_checkpoint(checkpoint).state.iteration == 2);
}

TEST_CASE("a finished solve is never lost to a full disk under its checkpoint or its log") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 3000 --seed 4 -q -o " + quote(data)).exit_code == 0);
  std::filesystem::create_directory(directory.file("full"));
  const std::string full = directory.file("full");
  SUBCASE("the checkpoint's disk is full: warnings, and the model is written") {
    // α and g of 3,000 rows take 47 KiB: a 16 KiB disk holds no checkpoint.
    const auto run = run_with_small_disk(full, 16,
                                         "train " + quote(data) + kHyper + " --max-iter 5 -o " +
                                             quote(directory.file("m.h5")) + " --checkpoint " + quote(full + "/ck.h5"));
    if (!run) {
      MESSAGE("skipped: this machine allows no user mount namespace (unshare -rm) for a small disk");
      return;
    }
    CAPTURE(run->err);
    CHECK(run->exit_code == 0);
    CHECK(run->err.find("warning: cannot write the checkpoint '" + full + "/ck.h5'") != std::string::npos);
    CHECK(run->err.find("No space left on device") != std::string::npos);
    CHECK(run->err.find("the run goes on") != std::string::npos);
    CHECK(gpstream::read_dense_model(directory.file("m.h5")).training.iterations == 5);
  }
  SUBCASE("the log's disk fills up: the log keeps whole rows, the run goes on, the model is written") {
    const auto run = run_with_small_disk(full, 8,
                                         "train " + quote(data) + kHyper + " --active-set 20 --max-iter 400 -o " +
                                             quote(directory.file("m.h5")) + " --log " + quote(full + "/log.csv"));
    if (!run) {
      MESSAGE("skipped: this machine allows no user mount namespace (unshare -rm) for a small disk");
      return;
    }
    CAPTURE(run->err);
    CHECK(run->exit_code == 0);
    CHECK(run->err.find("cannot write the training log '" + full + "/log.csv': No space left on device") !=
          std::string::npos);
    CHECK(gpstream::read_dense_model(directory.file("m.h5")).training.iterations == 400);
  }
}

TEST_CASE("a K̄ too ill-conditioned for the tolerance is an error that says what to do, for every solver") {
  ScratchDirectory directory;
  const std::string csv = directory.file("dup.csv"), data = directory.file("dup.h5");
  gpstream::testing::write_file(csv, duplicated_rows_csv());
  REQUIRE(run_gpstream("convert " + quote(csv) + " -q -o " + quote(data)).exit_code == 0);
  for (const char* solver : {"gbcd", "bcd-cyclic", "bcd-gradient", "cg", "smo", "cholesky"}) {
    CAPTURE(solver);
    const auto run =
        run_gpstream("train " + quote(data) + " --lengthscales 0.5 --noise-var 1e-12 --tol 1e-6 --solver " + solver +
                     " -o " + quote(directory.file("m.h5")) + " --time-limit 60");
    CAPTURE(run.err);
    CHECK(run.exit_code == 1);
    CHECK(gpstream::testing::count_lines(run.err) <= 4);  // the announcement, then the one-line error
    CHECK(run.err.find("too ill-conditioned for the tolerance 1e-06") != std::string::npos);
    CHECK(run.err.find("Raise the noise variance (now 1e-12") != std::string::npos);
    CHECK(run.err.find("remove duplicated or near-duplicated rows") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));
  }
  // A noise floor that makes K̄ well enough conditioned: solved, and the exact residual meets the tolerance.
  const auto solved = run_gpstream("train " + quote(data) + " --lengthscales 0.5 --noise-var 1e-4 --tol 1e-6 -o " +
                                   quote(directory.file("ok.h5")));
  CAPTURE(solved.err);
  CHECK(solved.exit_code == 0);
  CHECK(gpstream::read_dense_model(directory.file("ok.h5")).training.convergence_measure <= 1e-6);
}

TEST_CASE("no NaN or inf is written: huge targets, huge variances and a damaged model are refused") {
  ScratchDirectory directory;
  std::string huge = "a,y\n", moderate = "a,y\n";
  for (int i = 0; i < 50; ++i) {
    huge += fmt::format("{},{}\n", i * 0.1, (i % 2 == 0 ? 1 : -1) * 1e160);
    moderate += fmt::format("{},{}\n", i * 0.1, 10 * std::sin(i * 0.3));  // y_std² ≈ 50: 1e308 σ² overflows
  }
  gpstream::testing::write_file(directory.file("huge.csv"), huge);
  const auto converted =
      run_gpstream("convert " + quote(directory.file("huge.csv")) + " -o " + quote(directory.file("huge.h5")));
  CHECK(converted.exit_code == 1);
  CHECK(converted.err.find("too large for their squares to fit a double") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("huge.h5")));

  gpstream::testing::write_file(directory.file("m.csv"), moderate);
  const std::string data = directory.file("m.h5"), model = directory.file("model.h5");
  REQUIRE(run_gpstream("convert " + quote(directory.file("m.csv")) + " -q -o " + quote(data)).exit_code == 0);
  for (const char* option : {"--noise-var 1e308", "--noise-var 0.1 --signal-var 1e308"}) {
    CAPTURE(option);
    const auto run = run_gpstream("train " + quote(data) + " --lengthscales 1 " + option + " -o " + quote(model));
    CHECK(run.exit_code == 1);
    CHECK(run.err.find("not finite in the target's units") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(model));
  }
  REQUIRE(run_gpstream("train " + quote(data) + " --lengthscales 1 --noise-var 0.1 -q -o " + quote(model)).exit_code ==
          0);
  overwrite_element(model, "alpha", 7, std::numeric_limits<double>::quiet_NaN());
  reseal(model);
  const auto predicted =
      run_gpstream("predict " + quote(model) + " " + quote(data) + " -o " + quote(directory.file("p.csv")));
  CHECK(predicted.exit_code == 1);
  CHECK(predicted.err.find("/alpha holds a value that is not a finite number (nan at entry 8 of 50)") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("p.csv")));
}

TEST_CASE("a shared --log is refused while its run lives, and a resumed run's log repeats no iteration") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), log = directory.file("log.csv");
  const std::string checkpoint = directory.file("c.h5");
  // A job of several seconds (10,000 rows in blocks of 5: ~20,000 iterations), still running when it is killed.
  REQUIRE(run_gpstream("generate friedman1 --rows 10000 --seed 6 -q -o " + quote(data)).exit_code == 0);
  const std::vector<std::string> job = {"train",
                                        data,
                                        "-o",
                                        directory.file("m.h5"),
                                        "--active-set",
                                        "5",
                                        "--tol",
                                        "1e-6",
                                        "--log",
                                        log,
                                        "--checkpoint",
                                        checkpoint,
                                        "--checkpoint-every",
                                        "0.2",
                                        "--lengthscales",
                                        "1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4",
                                        "--noise-var",
                                        "0.039",
                                        "-q"};
  const pid_t first = gpstream::testing::spawn_gpstream(job);
  const std::filesystem::path lock = directory.path() / ".log.csv.gpstream-lock";
  for (int wait = 0; wait < 4000 && !std::filesystem::exists(lock); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto second = run_gpstream("train " + quote(data) + kHyper + " --max-iter 3 -o " +
                                   quote(directory.file("other.h5")) + " --log " + quote(log));
  CHECK(second.exit_code == 1);
  CHECK(second.err.find("--log: '" + log + "' is in use by another gpstream run") != std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(900));
  ::kill(first, SIGKILL);
  gpstream::testing::wait_for(first);
  const std::uint64_t saved = gpstream::read_checkpoint(checkpoint).state.iteration;
  REQUIRE(saved > 0);
  // Resumed for a few more iterations: every row's iteration once, in order, each row whole.
  REQUIRE(run_gpstream("train --resume " + quote(checkpoint) + " --max-iter " + std::to_string(saved + 5) + " -q")
              .exit_code == 0);
  std::istringstream lines(gpstream::testing::read_file(log));
  std::string line;
  std::getline(lines, line);  // the header
  std::size_t expected = 0;
  for (; std::getline(lines, line); ++expected) {
    CAPTURE(line);
    CHECK(std::count(line.begin(), line.end(), ',') == 10);
    CHECK(line.substr(0, line.find(',')) == std::to_string(expected));
  }
  CHECK(expected == saved + 6);  // iterations 0 … saved + 5, each once
}

TEST_CASE("checkpoints are not trusted blindly: a changed vector or an invalid counter is refused") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), checkpoint = directory.file("c.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 500 --seed 7 -q -o " + quote(data)).exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(data) + kHyper + " --max-iter 3 -q --checkpoint " + quote(checkpoint) + " -o " +
                       quote(directory.file("m.h5")))
              .exit_code == 0);
  const std::string original = gpstream::testing::read_file(checkpoint);
  const double g0 = gpstream::read_checkpoint(checkpoint).state.gradient[0];
  overwrite_element(checkpoint, "gradient", 0, g0 / 2);
  const auto changed = run_gpstream("train --resume " + quote(checkpoint) + " -o " + quote(directory.file("x.h5")));
  CHECK(changed.exit_code == 1);
  CHECK(changed.err.find("do not match their checksum") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("x.h5")));

  gpstream::testing::write_file(checkpoint, original);
  {
    gpstream::hdf5::Handle file = open_for_editing(checkpoint);
    gpstream::hdf5::write_attribute(file.get(), "iteration", std::int64_t{-5});
  }
  reseal(checkpoint);
  const auto negative = run_gpstream("train --resume " + quote(checkpoint) + " -o " + quote(directory.file("x.h5")));
  CHECK(negative.exit_code == 1);
  CHECK(negative.err.find("invalid iteration -5") != std::string::npos);

  // A parameter out of the schema's range is refused, naming it.
  gpstream::testing::write_file(checkpoint, original);
  {
    gpstream::hdf5::Handle file = open_for_editing(checkpoint);
    gpstream::hdf5::Handle parameters = gpstream::hdf5::open_group(file.get(), "parameters", checkpoint);
    gpstream::hdf5::write_attribute(parameters.get(), "candidates", std::int64_t{0});
  }
  reseal(checkpoint);
  const auto out_of_range = run_gpstream("train --resume " + quote(checkpoint) + " -o " + quote(directory.file("x.h5")));
  INFO(out_of_range.err);
  CHECK(out_of_range.exit_code != 0);
  CHECK(out_of_range.err.find("c.h5: --candidates=0: give a whole number, at least 1; start the run again") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("x.h5")));
}

TEST_CASE("models and checkpoints are checked against what they claim to be: an edited noise variance, a flipped bit") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), checkpoint = directory.file("c.h5"), model = directory.file("m.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 500 --seed 7 -q -o " + quote(data)).exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(data) + kHyper + " --active-set 50 --max-iter 3 -q --checkpoint " +
                       quote(checkpoint) + " -o " + quote(model))
              .exit_code == 0);
  // A checkpoint's kernel is part of what it is: resumed under another noise variance, its gradient would be
  // another K̄'s (the sweep: convergence reported at 7.6e-4 where the exact residual was 2.25).
  for (const char* attribute : {"noise_variance", "signal_variance"}) {
    CAPTURE(attribute);
    const std::string original = gpstream::testing::read_file(checkpoint);
    {
      gpstream::hdf5::Handle file = open_for_editing(checkpoint);
      gpstream::hdf5::write_attribute(file.get(), attribute, 0.5);
    }
    const auto resumed = run_gpstream("train --resume " + quote(checkpoint) + " -o " + quote(directory.file("x.h5")));
    CHECK(resumed.exit_code == 1);
    CHECK(resumed.err.find("the checkpoint's contents do not match their checksum") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(directory.file("x.h5")));
    gpstream::testing::write_file(checkpoint, original);
  }
  // One flipped bit of α in a model file (the sweep: SMSE 0.29 -> 0.61, silently), or an edited lengthscale.
  const std::string predictions = directory.file("p.csv");
  REQUIRE(run_gpstream("predict " + quote(model) + " " + quote(data) + " -q -o " + quote(predictions)).exit_code == 0);
  std::filesystem::remove(predictions);
  const std::string original = gpstream::testing::read_file(model);
  std::vector<double> alpha;
  {
    gpstream::hdf5::Handle file = gpstream::hdf5::open_file(model);
    alpha = gpstream::hdf5::read_vector(file.get(), "alpha", model);
  }
  std::uint64_t bits = 0;
  std::memcpy(&bits, &alpha[17], sizeof bits);
  bits ^= std::uint64_t{1} << 40;
  double flipped = 0;
  std::memcpy(&flipped, &bits, sizeof bits);
  overwrite_element(model, "alpha", 17, flipped);
  const auto predicted = run_gpstream("predict " + quote(model) + " " + quote(data) + " -o " + quote(predictions));
  CAPTURE(predicted.err);
  CHECK(predicted.exit_code == 1);
  CHECK(predicted.err.find("the model file's contents do not match their checksum") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(predictions));
  gpstream::testing::write_file(model, original);
  {
    gpstream::hdf5::Handle file = open_for_editing(model);
    gpstream::hdf5::write_attribute(file.get(), "lengthscales", std::vector<double>(10, 1.0));
  }
  CHECK(run_gpstream("predict " + quote(model) + " " + quote(data) + " -o " + quote(predictions)).exit_code == 1);
  CHECK(run_gpstream("info " + quote(model)).exit_code == 1);
}

TEST_CASE("a negative or NaN standard deviation is refused wherever it enters: a --hyper file, a dataset, a model") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), model = directory.file("m.h5"), hyper = directory.file("h.json");
  REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 7 -q -o " + quote(data)).exit_code == 0);
  REQUIRE(run_gpstream("hyper " + quote(data) + " --kernel rbf --subset 100 --restarts 0 -q -o " + quote(hyper))
              .exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(data) + " --hyper " + quote(hyper) + " -q -o " + quote(model)).exit_code == 0);
  const auto refused = [&](const std::string& arguments, const std::string& what) {
    CAPTURE(arguments);
    const auto result = run_gpstream(arguments);
    CAPTURE(result.err);
    CHECK(result.exit_code == 1);
    CHECK(result.err.find(what) != std::string::npos);
  };
  // A hyperparameter file: a negative y_std would reflect every prediction about the mean.
  const std::string text = gpstream::testing::read_file(hyper);
  nlohmann::json json = nlohmann::json::parse(text);
  json["standardisation"]["y_std"] = -json["standardisation"]["y_std"].get<double>();
  gpstream::testing::write_file(hyper, json.dump());
  refused("train " + quote(data) + " --hyper " + quote(hyper) + " -q -o " + quote(directory.file("m2.h5")),
          "the target \"y\" has a negative standard deviation");
  json = nlohmann::json::parse(text);
  json["standardisation"]["x_std"][2] = nullptr;
  gpstream::testing::write_file(hyper, json.dump());
  CHECK(run_gpstream("train " + quote(data) + " --hyper " + quote(hyper) + " -q -o " + quote(directory.file("m2.h5")))
            .exit_code != 0);
  // A dataset's statistics, edited by another tool.
  const std::string dataset_bytes = gpstream::testing::read_file(data);
  for (const auto& [attribute, value, what] : std::vector<std::tuple<std::string, double, std::string>>{
           {"y_std", -5.0, "has a negative standard deviation"}, {"y_std", std::nan(""), "not a number"}}) {
    {
      gpstream::hdf5::Handle file = open_for_editing(data);
      gpstream::hdf5::write_attribute(file.get(), attribute, value);
    }
    refused("train " + quote(data) + kHyper + " -q -o " + quote(directory.file("m3.h5")), what);
    gpstream::testing::write_file(data, dataset_bytes);
  }
  {
    gpstream::hdf5::Handle file = open_for_editing(data);
    gpstream::hdf5::write_attribute(file.get(), "x_std", std::vector<double>(10, std::nan("")));
  }
  refused("train " + quote(data) + kHyper + " -q -o " + quote(directory.file("m3.h5")), "input column \"x1\" has mean");
  gpstream::testing::write_file(data, dataset_bytes);
  // A model, even one whose checksum was made again for the edit.
  {
    gpstream::hdf5::Handle file = open_for_editing(model);
    gpstream::hdf5::write_attribute(file.get(), "y_std", -5.0);
  }
  reseal(model);
  refused("predict " + quote(model) + " " + quote(data) + " -o " + quote(directory.file("p.csv")),
          "has a negative standard deviation -5");
  CHECK_FALSE(std::filesystem::exists(directory.file("p.csv")));
}

TEST_CASE("squared distances do not cancel: a lengthscale of 1e-8, raw inputs far from the origin") {
  ScratchDirectory directory;
  std::string near = "a,b,y\n", far = "a,b,y\n";
  for (int i = 0; i < 300; ++i) {
    const double a = std::fmod(i * 0.6180339887, 1.0), b = std::fmod(i * 0.4142135623, 1.0);
    const double y = std::sin(6 * a) + std::cos(4 * b) + 0.05 * std::sin(17.0 * i);
    near += fmt::format("{:.17g},{:.17g},{:.17g}\n", a, b, y);
    far += fmt::format("{:.17g},{:.17g},{:.17g}\n", 3e5 + a, 3e5 + b, y);
  }
  for (const auto& [name, text] : {std::pair{"near", near}, std::pair{"far", far}}) {
    gpstream::testing::write_file(directory.file(std::string(name) + ".csv"), text);
    REQUIRE(run_gpstream("convert " + quote(directory.file(std::string(name) + ".csv")) + " -q -o " +
                         quote(directory.file(std::string(name) + ".h5")))
                .exit_code == 0);
  }
  const auto predictions = [&](const std::string& data, const std::string& options) {
    const std::string model = directory.file("m.h5"), output = directory.file("p.csv");
    std::filesystem::remove(model);
    std::filesystem::remove(output);
    const auto trained = run_gpstream("train " + quote(data) + " " + options + " -q -o " + quote(model));
    CAPTURE(trained.err);
    REQUIRE(trained.exit_code == 0);
    REQUIRE(
        run_gpstream("predict " + quote(model) + " " + quote(data) + " --variance -q -o " + quote(output)).exit_code ==
        0);
    return gpstream::testing::read_numbers(output);
  };
  // ℓ = 1e-8: K = s²I to double precision, so the means at the training rows are s²/(s² + σ²) of the (standardised)
  // targets and every variance s² + σ² − s⁴/(s² + σ²), in closed form (the sweep: means 53 % off, variances 50x).
  const gpstream::DatasetDescription description = gpstream::read_dataset_description(directory.file("near.h5"));
  const auto targets = gpstream::testing::read_numbers(directory.file("near.csv"));
  for (const char* kernel : {"rbf", "matern52", "matern12"}) {
    CAPTURE(kernel);
    const auto tiny = predictions(directory.file("near.h5"),
                                  std::string("--kernel ") + kernel + " --lengthscales 1e-8 --noise-var 0.25");
    const double shrink = 1.0 / 1.25, y_std = description.y_std;
    for (std::size_t i = 0; i < tiny.size(); ++i) {
      const double expected = description.y_mean + shrink * (targets[i][2] - description.y_mean);
      REQUIRE(tiny[i][0] == doctest::Approx(expected).epsilon(1e-9).scale(y_std));
      REQUIRE(tiny[i][1] == doctest::Approx(y_std * y_std * (1.25 - shrink)).epsilon(1e-9));
    }
  }
  // Raw inputs at 3e5 + U[0, 1] (no standardisation) with ℓ = 0.3: the exact (Cholesky) answer of the same rows
  // without the offset, to the offset's rounding of the stored inputs (the sweep: variances 4.5 % off).
  const std::string raw = "--no-standardise --solver cholesky --kernel matern32 --lengthscales 0.3 --noise-var 0.01";
  const auto at_origin = predictions(directory.file("near.h5"), raw);
  const auto offset = predictions(directory.file("far.h5"), raw);
  REQUIRE(offset.size() == at_origin.size());
  for (std::size_t i = 0; i < offset.size(); ++i) {
    CHECK(offset[i][0] == doctest::Approx(at_origin[i][0]).epsilon(1e-6));
    CHECK(offset[i][1] == doctest::Approx(at_origin[i][1]).epsilon(1e-6));
  }
}

TEST_CASE("the resume command printed at launch works from the first instant: a checkpoint is written at the start") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), checkpoint = directory.file("c.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 4000 --seed 8 -q -o " + quote(data)).exit_code == 0);
  // A long job (an hour between checkpoints), killed as soon as its checkpoint appears.
  const std::vector<std::string> job = {"train",
                                        data,
                                        "-o",
                                        directory.file("m.h5"),
                                        "--active-set",
                                        "5",
                                        "--tol",
                                        "1e-10",
                                        "--checkpoint",
                                        checkpoint,
                                        "--checkpoint-every",
                                        "3600",
                                        "--lengthscales",
                                        "1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4",
                                        "--noise-var",
                                        "0.039",
                                        "-q"};
  const pid_t pid = gpstream::testing::spawn_gpstream(job);
  for (int wait = 0; wait < 5000 && !std::filesystem::exists(checkpoint); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  int status = 0;
  CHECK(::waitpid(pid, &status, WNOHANG) == 0);  // still running: the checkpoint is the one of the start
  ::kill(pid, SIGKILL);
  gpstream::testing::wait_for(pid);
  REQUIRE(std::filesystem::exists(checkpoint));
  CHECK(gpstream::read_checkpoint(checkpoint).state.iteration == 0);
  const auto resumed = run_gpstream("train --resume " + quote(checkpoint) + " --max-iter 300 -q");
  CAPTURE(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(data) + kHyper + " --active-set 5 --tol 1e-10 --max-iter 300 -q -o " +
                       quote(directory.file("whole.h5")))
              .exit_code == 0);
  CHECK(gpstream::read_dense_model(directory.file("m.h5")).alpha ==
        gpstream::read_dense_model(directory.file("whole.h5")).alpha);
}

TEST_CASE("smaller ones: NA rows, duplicate input names, constant targets, option messages") {
  ScratchDirectory directory;
  // A headerless CSV whose first row holds a missing value: a data row with a missing value, not a header.
  gpstream::testing::write_file(directory.file("na.csv"), "1,NA,3\n4,5,6\n7,8,9\n");
  const auto na = run_gpstream("convert " + quote(directory.file("na.csv")) + " -o " + quote(directory.file("na.h5")));
  CHECK(na.exit_code == 1);
  CHECK(na.err.find(":1:2: column \"col2\": invalid value \"NA\" (use --drop-invalid") != std::string::npos);
  const auto dropped = run_gpstream("convert " + quote(directory.file("na.csv")) + " --drop-invalid -o " +
                                    quote(directory.file("na.h5")));
  CHECK(dropped.exit_code == 0);
  CHECK(dropped.err.find("no header line") != std::string::npos);

  // Duplicate input names written by another tool: refused when read, not bound to one CSV column.
  const std::string data = directory.file("d.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 100 --seed 9 -q -o " + quote(data)).exit_code == 0);
  const std::string twins = directory.file("twins.h5");
  std::filesystem::copy_file(data, twins);
  {
    gpstream::hdf5::Handle file = open_for_editing(twins);
    std::vector<std::string> names = {"x1", "x1", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10"};
    gpstream::hdf5::write_attribute(file.get(), "feature_names", names);
  }
  const auto duplicate = run_gpstream("info " + quote(twins));
  CHECK(duplicate.exit_code == 1);
  CHECK(duplicate.err.find("input columns 1 and 2 are both named \"x1\"") != std::string::npos);

  // Constant targets: nothing to learn, said before any output.
  std::string constant = "a,y\n";
  for (int i = 0; i < 30; ++i) constant += fmt::format("{},2.5\n", i);
  gpstream::testing::write_file(directory.file("c.csv"), constant);
  REQUIRE(
      run_gpstream("convert " + quote(directory.file("c.csv")) + " -q -o " + quote(directory.file("c.h5"))).exit_code ==
      0);
  const auto flat = run_gpstream("train " + quote(directory.file("c.h5")) + " --lengthscales 1 --noise-var 0.1 -o " +
                                 quote(directory.file("cm.h5")));
  CHECK(flat.exit_code == 1);
  CHECK(flat.err.find("is constant (2.5 in every row)") != std::string::npos);

  const std::string model = directory.file("m.h5");
  const auto gamma = run_gpstream("train " + quote(data) + " --gamma 1e308 --noise-var 0.1 -o " + quote(model));
  CHECK(gamma.exit_code == 2);
  CHECK(gamma.err.find("--gamma: values must be positive and at most") != std::string::npos);
  const auto empty_memory = run_gpstream("train " + quote(data) + kHyper + " --memory '' -o " + quote(model));
  CHECK(empty_memory.exit_code == 2);
  CHECK(empty_memory.err.find("--memory: \"\" is not a size") != std::string::npos);
  const auto novelty =
      run_gpstream("train " + quote(data) + kHyper + " --model online --novelty 1.5 -o " + quote(model));
  CHECK(novelty.exit_code == 2);
  CHECK(novelty.err.find("--novelty=1.5: give a finite number, at least 0 and below 1") !=
        std::string::npos);
  gpstream::testing::write_file(directory.file("big.json"),
                                "{\"signal_variance\": 1e400, \"noise_variance\": 0.1, \"length_scales\": [1]}");
  const auto json =
      run_gpstream("train " + quote(data) + " --hyper " + quote(directory.file("big.json")) + " -o " + quote(model));
  CHECK(json.exit_code == 1);
  CHECK(json.err.find(directory.file("big.json") + ": not a valid hyperparameter file") != std::string::npos);
  // One lengthscale for every input of the rbf (se-ard) kernel, as --help says.
  const auto one = run_gpstream("train " + quote(data) + " --lengthscales 2 --noise-var 0.1 -q -o " + quote(model));
  CHECK(one.exit_code == 0);
  // A resumed run's conflicting option is named with its value.
  const std::string checkpoint = directory.file("ck.h5");
  REQUIRE(run_gpstream("train " + quote(data) + kHyper + " --max-iter 1 -q --checkpoint " + quote(checkpoint) + " -o " +
                       quote(directory.file("r.h5")))
              .exit_code == 0);
  const auto conflict = run_gpstream("train --resume " + quote(checkpoint) + " --noise-var 0.2");
  CHECK(conflict.exit_code == 1);
  CHECK(conflict.err.find("--noise-var 0.2 conflicts with checkpoint") != std::string::npos);
}

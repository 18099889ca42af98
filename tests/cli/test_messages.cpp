// Messages that say what is wrong and what to do, one case each (the second
// adversarial sweep's list, issue 46), as a user meets them.
#include "storage/dataset/dataset_format.h"
#include "storage/hdf5/hdf5_handle.h"
#include "test_support.h"
#include "tools/command_line.h"

#include <hdf5.h>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <tuple>

using gpstream::testing::quote;
using gpstream::testing::read_file;
using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;
using gpstream::testing::write_file;

namespace {

const std::string& kHyper = gpstream::testing::kFriedman1Kernel;

void check_message(const gpstream::testing::CommandResult& result, const std::string& message) {
  CAPTURE(result.err);
  CHECK(result.exit_code == 1);
  CHECK(result.err.find(message) != std::string::npos);
  CHECK(gpstream::testing::count_lines(result.err) == 1);
}

}  // namespace

TEST_CASE("--hyper naming a directory says so, naming it") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 100 --seed 2 -q -o " + quote(data)).exit_code == 0);
  check_message(run_gpstream("train " + quote(data) + " --hyper " + quote(directory.path().string()) + " -o " +
                             quote(directory.file("m.h5"))),
                "'" + directory.path().string() + "' is a directory, not a hyperparameter file");
}

TEST_CASE("info describes a search checkpoint, and train --resume on hyper's names the command that continues it") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), checkpoint = directory.file("search.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 400 --seed 2 -q -o " + quote(data)).exit_code == 0);
  // Stopped after its first checkpoint (written at once: --checkpoint-every 0.01).
  const pid_t hyper = gpstream::testing::spawn_gpstream(
      {"hyper", data, "-q", "--checkpoint", checkpoint, "--checkpoint-every", "0.01", "-o", directory.file("h.json")});
  for (int wait = 0; wait < 2000 && !std::filesystem::exists(checkpoint); ++wait) ::usleep(5000);
  ::usleep(200000);
  ::kill(hyper, SIGINT);
  gpstream::testing::wait_for(hyper);
  REQUIRE(std::filesystem::exists(checkpoint));
  const auto info = run_gpstream("info " + quote(checkpoint));
  CAPTURE(info.err);
  CHECK(info.exit_code == 0);
  CHECK(info.out.find("gpstream-search-checkpoint of gpstream hyper") != std::string::npos);
  CHECK(info.out.find("evaluations of the likelihood") != std::string::npos);
  // (the scratch directory's paths need no quotes)
  const std::string command = "gpstream hyper " + data + " -q --checkpoint " + checkpoint +
                              " --checkpoint-every 0.01 -o " + directory.file("h.json");
  CHECK(info.out.find("resume with  " + command) != std::string::npos);
  check_message(run_gpstream("train --resume " + quote(checkpoint)), "continue it with " + command);
  // Given with other options too (which train would refuse for its own search): the same, naming hyper.
  check_message(run_gpstream("train --resume " + quote(checkpoint) + " -o " + quote(directory.file("m.h5"))),
                "holds the hyperparameter search of gpstream hyper, not a training job: continue it with " + command);
  // The command it names continues the search to its end.
  const auto continued = run_gpstream(command.substr(std::string("gpstream ").size()));
  CAPTURE(continued.err);
  CHECK(continued.exit_code == 0);
  CHECK(std::filesystem::exists(directory.file("h.json")));
}

TEST_CASE("convert refuses a header that is not UTF-8, and an HDF5 file, and reads classic Mac line ends") {
  ScratchDirectory directory;
  write_file(directory.file("latin1.csv"), "caf\xe9,y\n1,2\n3,4\n");
  check_message(run_gpstream("convert " + quote(directory.file("latin1.csv")) + " -o " + quote(directory.file("l.h5"))),
                "latin1.csv:1:1: the column name is not UTF-8 text (a Latin-1 or Windows-1252 file?)");
  CHECK_FALSE(std::filesystem::exists(directory.file("l.h5")));

  const std::string data = directory.file("d.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 100 --seed 2 -q -o " + quote(data)).exit_code == 0);
  check_message(run_gpstream("convert " + quote(data) + " -o " + quote(directory.file("again.h5"))),
                "an HDF5 file (a gpstream dataset or model?), not CSV text");
  CHECK_FALSE(std::filesystem::exists(directory.file("again.h5")));

  // Lines ended by CR alone: three data rows, not "a header line but no data rows".
  write_file(directory.file("mac.csv"), "a,b,y\r1,2,3\r4,5,6\r7,8,10\r");
  const auto mac = run_gpstream("convert " + quote(directory.file("mac.csv")) + " -o " + quote(directory.file("m.h5")));
  CAPTURE(mac.err);
  CHECK(mac.exit_code == 0);
  CHECK(mac.err.find("3 rows x 2 inputs") != std::string::npos);
}

TEST_CASE("a gbcd workspace that grows past the budget with the inputs' width is refused up front") {
  ScratchDirectory directory;
  // 300 rows of 3,000 inputs: (m − 1)κ = 17,940 candidate rows held 5 times, 2.0 GiB.
  std::string text;
  for (int j = 0; j < 3000; ++j) text += fmt::format("x{},", j);
  text += "y\n";
  for (int i = 0; i < 300; ++i) {
    for (int j = 0; j < 3000; ++j) text += fmt::format("{:.3f},", std::sin(0.37 * i + 1.3 * j));
    text += fmt::format("{:.3f}\n", std::cos(0.1 * i));
  }
  write_file(directory.file("wide.csv"), text);
  const std::string data = directory.file("wide.h5");
  REQUIRE(run_gpstream("convert " + quote(directory.file("wide.csv")) + " -q -o " + quote(data)).exit_code == 0);
  const auto refused =
      run_gpstream("train " + quote(data) + " --kernel se --lengthscales 50 --noise-var 0.1 --memory 1G -o " +
                   quote(directory.file("m.h5")));
  check_message(refused, "the gbcd selection's 90,300 copies of rows of 3,000 inputs");
  CHECK(refused.err.find("use fewer candidates or a smaller active set (or raise --memory)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));
  // What the message advises fits.
  CHECK(run_gpstream("train " + quote(data) + " --kernel se --lengthscales 50 --noise-var 0.1 --memory 1G " +
                     "--candidates 10 -q -o " + quote(directory.file("m.h5")))
            .exit_code == 0);
}

TEST_CASE("messages name parameters, which each front end spells its own way") {
  // The libraries write a parameter by its API name in backticks; the command line spells it as its option.
  CHECK(gpstream::cli::for_command_line("'a.h5' already exists (use `overwrite` to overwrite it)") ==
        "'a.h5' already exists (use --force to overwrite it)");
  CHECK(gpstream::cli::for_command_line("`compression_level`: 12; rows dropped by `drop_invalid`") ==
        "--compress: 12; rows dropped by --drop-invalid");
  // Backticks around anything but a name are left alone, and so is an unmatched one.
  CHECK(gpstream::cli::for_command_line("the column `a b` and `x") == "the column `a b` and `x");
  CHECK(gpstream::spell_parameters("use `drop_invalid`", [](std::string_view name) { return std::string(name); }) ==
        "use drop_invalid");
  // As the user meets it: convert's error for an existing output, and its advice on a NaN.
  ScratchDirectory directory;
  write_file(directory.file("a.csv"), "a,b\n1,2\nNaN,3\n");
  const auto failed = run_gpstream("convert " + quote(directory.file("a.csv")) + " -o " + quote(directory.file("a.h5")));
  check_message(failed, "(use --drop-invalid to skip such rows)");
  write_file(directory.file("a.h5"), "");
  check_message(run_gpstream("convert " + quote(directory.file("a.csv")) + " -o " + quote(directory.file("a.h5"))),
                "already exists (use --force to overwrite it)");
}

TEST_CASE("a -q job stopped while learning resumes with -q") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), checkpoint = directory.file("ck.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 600 --seed 2 -q -o " + quote(data)).exit_code == 0);
  const pid_t job = gpstream::testing::spawn_gpstream({"train", data, "--learn-hyper", "-q", "--checkpoint", checkpoint,
                                                       "--checkpoint-every", "0.01", "-o", directory.file("m.h5")});
  for (int wait = 0; wait < 2000 && !std::filesystem::exists(checkpoint); ++wait) ::usleep(5000);
  ::usleep(200000);
  ::kill(job, SIGINT);
  gpstream::testing::wait_for(job);
  REQUIRE(std::filesystem::exists(checkpoint));
  REQUIRE_FALSE(std::filesystem::exists(directory.file("m.h5")));
  const auto resumed = run_gpstream("train --resume " + quote(checkpoint) + " -q");
  CAPTURE(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.err.empty());
  CHECK(std::filesystem::exists(directory.file("m.h5")));
}

TEST_CASE("a CSV of test rows is told by its contents, whatever its name, and read from a pipe") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), model = directory.file("m.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 200 --seed 2 -q -o " + quote(data)).exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(data) + kHyper + " -q -o " + quote(model)).exit_code == 0);
  const std::string csv = directory.file("test.csv");
  REQUIRE(run_gpstream("generate friedman1 --rows 30 --seed 3 -q -o " + quote(csv)).exit_code == 0);
  const std::string upper = directory.file("test.CSV"), bare = directory.file("rows");
  write_file(upper, read_file(csv));
  write_file(bare, read_file(csv));
  const std::string reference = directory.file("p.csv");
  REQUIRE(run_gpstream("predict " + quote(model) + " " + quote(csv) + " -q -o " + quote(reference)).exit_code == 0);
  for (const std::string& inputs : {upper, bare, std::string("/dev/stdin")}) {
    CAPTURE(inputs);
    const auto predicted =
        gpstream::testing::run_command("(cat " + quote(csv) + " | '" + std::string(GPSTREAM_BINARY) + "' predict " +
                                       quote(model) + " " + inputs + " -q -o " + quote(directory.file("q.csv")) +
                                       " --force)");
    CAPTURE(predicted.err);
    CHECK(predicted.exit_code == 0);
    CHECK(read_file(directory.file("q.csv")) == read_file(reference));
  }
}

TEST_CASE("numbers too small for a double, an empty --columns and options of other methods say what they are") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 100 --seed 2 -q -o " + quote(data)).exit_code == 0);
  const std::string train = "train " + quote(data) + " -o " + quote(directory.file("m.h5"));
  const auto usage = [](const gpstream::testing::CommandResult& result, const std::string& message) {
    CAPTURE(result.err);
    CHECK(result.exit_code == 2);
    CHECK(result.err.find(message) != std::string::npos);
  };
  usage(run_gpstream(train + " --lengthscales 4e-320 --noise-var 0.1"),
        "--lengthscales: 4e-320 is subnormal (below 2.2e-308, the smallest normal double)");
  usage(run_gpstream(train + " --gamma 4e-320 --noise-var 0.1"), "--gamma: 4e-320 is subnormal");
  usage(run_gpstream(train + " --lengthscales 1e-400 --noise-var 0.1"),
        "--lengthscales: 1e-400 underflows to 0 (below 4.9e-324, the smallest double)");
  usage(run_gpstream(train + kHyper + " --objective bogus"), "--objective=\"bogus\": choose var or mle");
  usage(run_gpstream(train + kHyper + " --objective var"), "--objective is for --model");
  write_file(directory.file("u.csv"), "a,b,y\n1,1e-400,3\n2,3,4\n");
  check_message(run_gpstream("convert " + quote(directory.file("u.csv")) + " -o " + quote(directory.file("u.h5"))),
                "u.csv:2:2: column \"b\": value \"1e-400\", which underflows to 0 (below 4.9e-324, the smallest "
                "double) (use --drop-invalid to skip such rows)");
  // A subnormal value is a number.
  write_file(directory.file("s.csv"), "a,b,y\n1,4e-320,3\n2,3,4\n");
  CHECK(run_gpstream("convert -q " + quote(directory.file("s.csv")) + " -o " + quote(directory.file("s.h5"))).exit_code ==
        0);
  usage(run_gpstream("convert " + quote(directory.file("s.csv")) + " --columns '' -o " + quote(directory.file("c.h5"))),
        "--columns '': a column is empty");
  CHECK_FALSE(std::filesystem::exists(directory.file("c.h5")));
}

TEST_CASE("a path taken by another file and a moved training set are said as such") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 100 --seed 2 -q -o " + quote(data)).exit_code == 0);
  write_file(directory.file("notes.txt"), "my notes\n");
  check_message(run_gpstream("hyper " + quote(data) + " -q --checkpoint " + quote(directory.file("notes.txt")) +
                             " -o " + quote(directory.file("h.json"))),
                "--checkpoint: '" + directory.file("notes.txt") +
                    "' already exists and is not a search checkpoint; give another path, or --force to replace it");
  CHECK(read_file(directory.file("notes.txt")) == "my notes\n");

  const std::string model = directory.file("m.h5"), moved = directory.file("moved.h5");
  REQUIRE(run_gpstream("train " + quote(data) + kHyper + " -q -o " + quote(model)).exit_code == 0);
  std::filesystem::rename(data, moved);
  const std::string csv = directory.file("t.csv");
  REQUIRE(run_gpstream("generate friedman1 --rows 10 --seed 3 -q -o " + quote(csv)).exit_code == 0);
  check_message(run_gpstream("predict " + quote(model) + " " + quote(csv) + " --variance -q -o " +
                             quote(directory.file("p.csv"))),
                "the training dataset of model '" + model + "', '" + data +
                    "', does not exist (moved or removed?): give where it is now with --data");
  CHECK(run_gpstream("predict " + quote(model) + " " + quote(csv) + " --variance -q --data " + quote(moved) + " -o " +
                     quote(directory.file("p.csv")))
            .exit_code == 0);
}

TEST_CASE("a dataset edited after convert, or with a damaged standard deviation, is refused naming what is wrong") {
  ScratchDirectory directory;
  const std::string csv = directory.file("d.csv"), data = directory.file("d.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 200 --seed 2 -q -o " + quote(csv)).exit_code == 0);
  REQUIRE(run_gpstream("convert -q " + quote(csv) + " -o " + quote(data)).exit_code == 0);
  const std::string edited = directory.file("edited.h5"), tiny = directory.file("tiny.h5");
  std::filesystem::copy_file(data, edited);
  std::filesystem::copy_file(data, tiny);
  {  // One target changed in place: the stored statistics and fingerprint now describe other data.
    const hid_t file = H5Fopen(edited.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hid_t y = H5Dopen2(file, "y", H5P_DEFAULT);
    const hid_t space = H5Dget_space(y);
    const hsize_t first = 5, one = 1;
    H5Sselect_hyperslab(space, H5S_SELECT_SET, &first, nullptr, &one, nullptr);
    const hid_t memory = H5Screate_simple(1, &one, nullptr);
    const double value = 123.0;
    REQUIRE(H5Dwrite(y, H5T_NATIVE_DOUBLE, memory, space, H5P_DEFAULT, &value) >= 0);
    H5Sclose(memory), H5Sclose(space), H5Dclose(y), H5Fclose(file);
  }
  for (const std::string& command : {"train " + quote(edited) + kHyper, "hyper " + quote(edited) + " --subset 100"}) {
    CAPTURE(command);
    check_message(run_gpstream(command + " -q -o " + quote(directory.file("out"))),
                  "'" + edited + "' was changed after it was written: its contents hash to");
    check_message(run_gpstream(command + " -q -o " + quote(directory.file("out"))),
                  "write the dataset again from its CSV: gpstream convert '" + csv + "' -o '" + edited + "' --force");
    CHECK_FALSE(std::filesystem::exists(directory.file("out")));
  }
  // A standard deviation of 1e-300 for values of spread ~0.3 (a damaged statistic), and a negative one.
  const std::string negative = directory.file("negative.h5");
  std::filesystem::copy_file(data, negative);
  for (const auto& [file, column, spread] : {std::tuple{tiny, 2, 1e-300}, std::tuple{negative, 4, -1.0}}) {
    const gpstream::hdf5::Handle opened(H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    std::vector<double> spreads = gpstream::read_dataset_description(file).x_std;
    spreads[column] = spread;
    gpstream::hdf5::write_attribute(opened.get(), "x_std", spreads);
  }
  const auto info = run_gpstream("info " + quote(negative));
  CHECK(info.exit_code == 0);
  CHECK(info.out.find("-1  <- not a valid mean and standard deviation: train and predict refuse this dataset") !=
        std::string::npos);
  check_message(run_gpstream("train " + quote(tiny) + kHyper + " -q -o " + quote(directory.file("m.h5"))),
                "standardised by mean");
  check_message(run_gpstream("train " + quote(tiny) + kHyper + " -q -o " + quote(directory.file("m.h5"))),
                "and standard deviation 1e-300, is ");
  CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));
}

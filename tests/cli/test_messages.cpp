// Messages that say what is wrong and what to do, one case each (the second
// adversarial sweep's list, issue 46), as a user meets them.
#include "test_support.h"
#include "tools/command_line.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <csignal>
#include <filesystem>

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

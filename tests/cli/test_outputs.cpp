// What a command may write: no file it did not make unless --force names
// it as an output, never a file it reads, never a device or FIFO replaced
// (docs/reliability.md), as a user meets it on the command line.
#include "storage/checkpoint/checkpoint_file.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>
#include <future>

using gpstream::testing::quote;
using gpstream::testing::read_file;
using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;
using gpstream::testing::write_file;

namespace {

const std::string& kHyper = gpstream::testing::kFriedman1Kernel;

// A data set and a model trained on it, in `directory`.
struct Trained {
  explicit Trained(const ScratchDirectory& directory) : data(directory.file("d.h5")), model(directory.file("m.h5")) {
    REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 2 -q -o " + quote(data)).exit_code == 0);
    REQUIRE(run_gpstream("train " + quote(data) + kHyper + " -q -o " + quote(model)).exit_code == 0);
  }
  std::string data, model;
};

void check_refused(const gpstream::testing::CommandResult& result, const std::string& what) {
  CAPTURE(result.err);
  CHECK(result.exit_code == 1);
  CHECK(result.err.find(what) != std::string::npos);
}

}  // namespace

TEST_CASE("train --log and --checkpoint replace no file the run did not make unless --force names them") {
  ScratchDirectory directory;
  const Trained trained(directory);
  const std::string precious = directory.file("data.csv"), link = directory.file("link.csv");
  write_file(precious, "a,b\n1,2\n3,4\n");
  std::filesystem::create_symlink(precious, link);
  const std::string train = "train " + quote(trained.data) + kHyper + " --active-set 50 -q --max-iter 3 -o ";

  SUBCASE("--log: an existing file, or one behind a link, is kept") {
    check_refused(run_gpstream(train + quote(directory.file("m1.h5")) + " --log " + quote(precious)),
                  "--log: '" + precious + "' already exists");
    check_refused(run_gpstream(train + quote(directory.file("m1.h5")) + " --log " + quote(link)), "already exists");
    CHECK(read_file(precious) == "a,b\n1,2\n3,4\n");
    // --force names it: replaced, through the link, which stays a link.
    REQUIRE(run_gpstream(train + quote(directory.file("m1.h5")) + " --log " + quote(link) + " --force").exit_code == 0);
    CHECK(read_file(precious).starts_with("iteration,seconds,"));
    CHECK(std::filesystem::is_symlink(link));
  }
  SUBCASE("--log on --resume: only the run's own training log is continued") {
    const std::string checkpoint = directory.file("ck.h5"), log = directory.file("log.csv");
    REQUIRE(run_gpstream(train + quote(directory.file("m1.h5")) + " --checkpoint " + quote(checkpoint) + " --log " +
                         quote(log))
                .exit_code == 0);
    // Another file given as the log of the resumed run: kept.
    const std::string resume =
        "train --resume " + quote(checkpoint) + " --max-iter 5 -q -o " + quote(directory.file("m2.h5"));
    check_refused(run_gpstream(resume + " --log " + quote(precious)), "--log: '" + precious + "' already exists");
    CHECK(read_file(precious) == "a,b\n1,2\n3,4\n");
    // The run's own log replaced by somebody's file meanwhile: not the run's to cut back.
    write_file(log, "somebody's notes\nline 2\n");
    check_refused(run_gpstream(resume), "is not a gpstream training log");
    CHECK(read_file(log) == "somebody's notes\nline 2\n");
  }
  SUBCASE("--checkpoint: an unrelated file, or another run's checkpoint that could still be resumed, is kept") {
    check_refused(run_gpstream(train + quote(directory.file("m1.h5")) + " --checkpoint " + quote(precious)),
                  "--checkpoint: '" + precious + "' already exists");
    CHECK(read_file(precious) == "a,b\n1,2\n3,4\n");
    const std::string other = directory.file("other.h5");
    REQUIRE(run_gpstream(train + quote(directory.file("m1.h5")) + " --checkpoint " + quote(other)).exit_code == 0);
    const std::string before = read_file(other);
    check_refused(run_gpstream(train + quote(directory.file("m2.h5")) + " --checkpoint " + quote(other)),
                  "holds a run that gpstream train --resume");
    CHECK(read_file(other) == before);
    CHECK(gpstream::read_checkpoint(other).state.iteration == 3);
    // The run it holds resumes from it, and --force replaces it.
    CHECK(run_gpstream("train --resume " + quote(other) + " --max-iter 4 -q --force").exit_code == 0);
    CHECK(
        run_gpstream(train + quote(directory.file("m2.h5")) + " --checkpoint " + quote(other) + " --force").exit_code ==
        0);
  }
}

TEST_CASE("a resumed run owns only the checkpoint it resumes, and an output new to the job needs the resumed command's --force") {
  ScratchDirectory directory;
  const Trained trained(directory);
  const std::string precious = directory.file("notes.txt"), checkpoint = directory.file("ck.h5");
  write_file(precious, "somebody's notes\n");
  // Launched with --force (over an existing model), stopped at iteration 3 with its checkpoint.
  write_file(directory.file("m1.h5"), "an old model\n");
  REQUIRE(run_gpstream("train " + quote(trained.data) + kHyper + " --active-set 50 -q --max-iter 3 --force -o " +
                       quote(directory.file("m1.h5")) + " --checkpoint " + quote(checkpoint))
              .exit_code == 0);
  const std::string resume = "train --resume " + quote(checkpoint) + " --max-iter 5 -q";

  SUBCASE("--checkpoint elsewhere: an unrelated file or another run's checkpoint is kept") {
    check_refused(run_gpstream(resume + " --checkpoint " + quote(precious)),
                  "--checkpoint: '" + precious + "' already exists");
    CHECK(read_file(precious) == "somebody's notes\n");
    const std::string other = directory.file("other.h5");
    REQUIRE(run_gpstream("train " + quote(trained.data) + kHyper + " --active-set 50 -q --max-iter 2 -o " +
                         quote(directory.file("m3.h5")) + " --checkpoint " + quote(other))
                .exit_code == 0);
    const std::string before = read_file(other);
    check_refused(run_gpstream(resume + " --checkpoint " + quote(other)), "holds a run that gpstream train --resume");
    CHECK(read_file(other) == before);
    // The resumed file itself, however it is spelled, is the job's own.
    const auto spelled = run_gpstream("train --resume " + quote(checkpoint) + " --max-iter 4 -q --checkpoint " +
                                      quote(directory.path().string() + "/./ck.h5"));
    CAPTURE(spelled.err);
    CHECK(spelled.exit_code == 0);
    CHECK(gpstream::read_checkpoint(checkpoint).state.iteration == 4);
  }
  SUBCASE("--force given at launch does not cover the resumed command's new outputs") {
    for (const char* option : {" -o ", " --log ", " --checkpoint "}) {
      CAPTURE(option);
      check_refused(run_gpstream(resume + option + quote(precious)), "'" + precious + "' already exists");
      CHECK(read_file(precious) == "somebody's notes\n");
    }
    // The resumed command's own --force covers them; the launch's still covers the job's own model.
    CHECK(run_gpstream(resume + " -o " + quote(precious) + " --force").exit_code == 0);
    CHECK(read_file(precious).starts_with("\x89HDF"));
  }
  SUBCASE("the job's own model keeps the launch's --force") {
    const auto resumed = run_gpstream(resume);
    CAPTURE(resumed.err);
    CHECK(resumed.exit_code == 0);
    CHECK(read_file(directory.file("m1.h5")).starts_with("\x89HDF"));
  }
}

TEST_CASE("a dangling link to another output is that output, not a run in progress") {
  ScratchDirectory directory;
  const Trained trained(directory);
  const std::string link = directory.file("link.h5");
  std::filesystem::create_symlink(directory.file("m9.h5"), link);
  check_refused(run_gpstream("train " + quote(trained.data) + kHyper + " -q --max-iter 3 -o " +
                             quote(directory.file("m9.h5")) + " --checkpoint " + quote(link)),
                "-o and --checkpoint name the same file");
}

TEST_CASE("standard streams are written to their descriptor: a shell's >> appends, nothing is renamed over it") {
  ScratchDirectory directory;
  const Trained trained(directory);
  const std::string log = directory.file("results.log");
  const std::string binary = std::string("'") + GPSTREAM_BINARY + "' ";
  for (const std::string output : {"/dev/stdout", "-", "/proc/self/fd/1", "/dev/fd/1"}) {
    for (const std::string force : {"", " --force"}) {
      CAPTURE(output);
      CAPTURE(force);
      write_file(log, "first line\n");
      const auto predicted = gpstream::testing::run_command(
          "(" + binary + "predict " + quote(trained.model) + " " + quote(trained.data) + " -q -o " + output + force +
          " >> " + quote(log) + ")");
      CAPTURE(predicted.err);
      CHECK(predicted.exit_code == 0);
      const std::string appended = read_file(log);
      CHECK(appended.starts_with("first line\nmean\n"));
      CHECK(gpstream::testing::count_lines(appended) == 302);
    }
  }
  // A model to standard output: appended as bytes, the file before it kept.
  write_file(log, "first line\n");
  const auto model = gpstream::testing::run_command("(" + binary + "train " + quote(trained.data) + kHyper +
                                                    " -q --max-iter 3 -o /dev/stdout --force >> " + quote(log) + ")");
  CHECK(model.exit_code == 0);
  CHECK(read_file(log).starts_with("first line\n\x89HDF"));
}

TEST_CASE("devices and FIFOs are written in place, never replaced, and -o /dev/null needs no --force") {
  ScratchDirectory directory;
  const Trained trained(directory);
  const std::string predict = "predict " + quote(trained.model) + " " + quote(trained.data) + " -q -o ";
  CHECK(run_gpstream(predict + "/dev/null").exit_code == 0);
  CHECK(run_gpstream(predict + "/dev/null --force").exit_code == 0);
  CHECK(run_gpstream("train " + quote(trained.data) + kHyper + " -q -o /dev/null --log /dev/null").exit_code == 0);
  CHECK(std::filesystem::is_character_file("/dev/null"));
  // A FIFO with a reader gets the predictions, with --force as without, and stays a FIFO.
  const std::string fifo = directory.file("predictions.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string force : {"", " --force"}) {
    auto reader = std::async(std::launch::async, [&] { return read_file(fifo); });
    CHECK(run_gpstream(predict + quote(fifo) + force).exit_code == 0);
    const std::string received = reader.get();
    CHECK(received.starts_with("mean\n"));
    CHECK(gpstream::testing::count_lines(received) == 301);
    CHECK(std::filesystem::is_fifo(fifo));
  }
  // A link to nothing is written through, as the shell's > would: the link stays, its target is created.
  const std::string link = directory.file("link.csv"), target = directory.file("target.csv");
  std::filesystem::create_symlink(target, link);
  const auto through = run_gpstream(predict + quote(link));
  CAPTURE(through.err);
  CHECK(through.exit_code == 0);
  CHECK(std::filesystem::is_symlink(link));
  CHECK(gpstream::testing::count_lines(read_file(target)) == 301);
  CHECK(directory.entries() == std::vector<std::string>{"d.h5", "link.csv", "m.h5", "predictions.fifo", "target.csv"});
}

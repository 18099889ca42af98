// Every bad input to `gpstream convert`: one line on stderr naming the file,
// line and column and quoting the text at fault, a non-zero exit, and no
// output file (not even a temporary one) left behind.
#include "test_support.h"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;
using gpstream::testing::write_file;

namespace {

// Converts `csv_text` with `options` and checks the failure: the message
// holds every piece of `expected`, and the directory holds only the input.
void expect_failure(const std::string& csv_text, const std::string& options, const std::vector<std::string>& expected) {
  ScratchDirectory directory;
  write_file(directory.file("bad.csv"), csv_text);
  const auto result =
      run_gpstream("convert '" + directory.file("bad.csv") + "' -o '" + directory.file("out.h5") + "' " + options);
  CAPTURE(result.err);
  CHECK(result.exit_code == 1);
  CHECK(gpstream::testing::count_lines(result.err) == 1);
  CHECK(result.err.starts_with("gpstream convert: error: "));
  for (const std::string& piece : expected) CHECK(result.err.find(piece) != std::string::npos);
  CHECK(directory.entries() == std::vector<std::string>{"bad.csv"});
}

}  // namespace

TEST_CASE("ragged row") {
  expect_failure("a,b,c\n1,2,3\n4,5\n", "", {"bad.csv:3:3:", "expected 3 fields but found 2", "\"4,5\""});
  expect_failure("a,b,c\n1,2,3,4\n", "", {"bad.csv:2:4:", "expected 3 fields but found 4"});
}

TEST_CASE("non-numeric field") {
  expect_failure("a,b,c\n1,2,3\n4,five,6\n", "", {"bad.csv:3:2:", "column \"b\"", "\"five\" is not a number"});
  expect_failure("a,b,c\n1,2,3\n4,5,6x\n", "", {"bad.csv:3:3:", "\"6x\" is not a number"});
}

TEST_CASE("NaN, infinity and missing values fail without --drop-invalid") {
  expect_failure("a,b\n1,2\nNaN,3\n", "", {"bad.csv:3:1:", "column \"a\"", "\"NaN\"", "--drop-invalid"});
  expect_failure("a,b\n1,2\n3,-inf\n", "", {"bad.csv:3:2:", "\"-inf\"", "--drop-invalid"});
  expect_failure("a,b\n1,2\n3,\n", "", {"bad.csv:3:2:", "missing value"});
}

TEST_CASE("empty file, header only, only dropped rows") {
  expect_failure("", "", {"bad.csv: the file is empty"});
  expect_failure("\n\n", "", {"bad.csv: the file is empty"});
  expect_failure("a,b,c\n", "", {"bad.csv: the file has a header line but no data rows"});
  expect_failure("a,b\nnan,1\n", "--drop-invalid", {"bad.csv: no valid data rows (1 dropped"});
}

TEST_CASE("duplicate column names") {
  expect_failure("a,b,a,y\n1,2,3,4\n", "", {"bad.csv:1:3:", "duplicate column name \"a\" (also column 1)"});
}

TEST_CASE("unknown or misused target and input columns") {
  expect_failure("a,b,y\n1,2,3\n", "--target price",
                 {"--target: no column named \"price\"", "bad.csv", "columns: a, b, y"});
  expect_failure("a,b,y\n1,2,3\n", "--target 7", {"--target: column 7 does not exist", "3 columns"});
  expect_failure("a,b,y\n1,2,3\n", "--columns a,zz", {"--columns: no column named \"zz\""});
  expect_failure("a,b,y\n1,2,3\n", "--columns a,y", {"--columns: column \"y\" is the target"});
  expect_failure("y\n1\n", "", {"no input columns"});
}

TEST_CASE("output path not writable, or existing without --force") {
  ScratchDirectory directory;
  write_file(directory.file("ok.csv"), "a,y\n1,2\n");
  const std::string input = "'" + directory.file("ok.csv") + "'";

  const auto missing = run_gpstream("convert " + input + " -o '" + directory.file("no/such/dir/out.h5") + "'");
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("cannot write") != std::string::npos);
  CHECK(missing.err.find("No such file or directory") != std::string::npos);

  if (::geteuid() != 0) {  // root writes anywhere, so a read-only directory proves nothing then
    std::filesystem::create_directory(directory.file("locked"));
    ::chmod(directory.file("locked").c_str(), 0555);
    const auto locked = run_gpstream("convert " + input + " -o '" + directory.file("locked/out.h5") + "'");
    CHECK(locked.exit_code == 1);
    CHECK(locked.err.find("Permission denied") != std::string::npos);
  }

  write_file(directory.file("out.h5"), "precious");
  const auto exists = run_gpstream("convert " + input + " -o '" + directory.file("out.h5") + "'");
  CHECK(exists.exit_code == 1);
  CHECK(exists.err.find("already exists (use --force to overwrite it)") != std::string::npos);
  CHECK(gpstream::testing::read_file(directory.file("out.h5")) == "precious");
  // A failed conversion with --force leaves the old file alone too.
  write_file(directory.file("broken.csv"), "a,y\n1,x\n");
  const auto broken =
      run_gpstream("convert '" + directory.file("broken.csv") + "' --force -o '" + directory.file("out.h5") + "'");
  CHECK(broken.exit_code == 1);
  CHECK(gpstream::testing::read_file(directory.file("out.h5")) == "precious");

  const auto forced = run_gpstream("convert " + input + " --force -o '" + directory.file("out.h5") + "'");
  CHECK(forced.exit_code == 0);
  CHECK(gpstream::testing::read_file(directory.file("out.h5")) != "precious");
}

TEST_CASE("usage mistakes exit with code 2 and point to --help") {
  const auto no_output = run_gpstream("convert in.csv");
  CHECK(no_output.exit_code == 2);
  CHECK(no_output.err.find("'--output' is required") != std::string::npos);
  CHECK(no_output.err.find("gpstream convert --help") != std::string::npos);
  CHECK(run_gpstream("convert in.csv -o x.h5 --bogus").exit_code == 2);
  CHECK(run_gpstream("convert in.csv -o x.h5 --delimiter ab").exit_code == 2);
  CHECK(run_gpstream("nonsense").exit_code == 2);
  CHECK(run_gpstream("").exit_code == 2);
}

TEST_CASE("UTF-16 text and NUL bytes are named as such, not cut short") {
  const std::string utf16_with_bom(
      "\xFF\xFE"
      "a\0,\0b\0\n\0"
      "1\0,\0"
      "2\0\n\0",
      18);
  expect_failure(utf16_with_bom, "", {"bad.csv: the file is UTF-16 text, which is not supported; convert it to UTF-8"});
  const std::string utf16_without_bom(
      "a\0,\0b\0\n\0"
      "1\0,\0"
      "2\0\n\0",
      16);
  expect_failure(utf16_without_bom, "", {"bad.csv:1:2: a NUL byte", "convert it to UTF-8"});
  expect_failure(std::string("a,b\n1,2\n3,\0"
                             "4\n",
                             11),
                 "", {"bad.csv:3:3: a NUL byte"});
}

#include "engine/core/error.h"
#include "storage/output/atomic_output_file.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <filesystem>

using gpstream::AtomicOutputFile;
using gpstream::testing::ScratchDirectory;

TEST_CASE("nothing appears at the destination before commit - an abandoned output leaves nothing") {
  ScratchDirectory directory;
  const std::string path = directory.file("result.h5");
  {
    AtomicOutputFile output(path, false);
    gpstream::testing::write_file(output.temporary_path(), "partial");
    CHECK_FALSE(std::filesystem::exists(path));
  }
  CHECK(directory.entries().empty());
  {
    AtomicOutputFile output(path, false);
    gpstream::testing::write_file(output.temporary_path(), "complete");
    output.commit();
  }
  CHECK(gpstream::testing::read_file(path) == "complete");
  CHECK(directory.entries() == std::vector<std::string>{"result.h5"});
}

TEST_CASE("an existing file is replaced only when overwriting is allowed, and only on commit") {
  ScratchDirectory directory;
  const std::string path = directory.file("result.h5");
  gpstream::testing::write_file(path, "old");
  CHECK_THROWS_WITH_AS(AtomicOutputFile(path, false), doctest::Contains("already exists (use `overwrite`"),
                       gpstream::OutputExists);
  {
    AtomicOutputFile output(path, true);
    gpstream::testing::write_file(output.temporary_path(), "new");
  }
  CHECK(gpstream::testing::read_file(path) == "old");
}

TEST_CASE("an output in a missing directory is refused at once") {
  ScratchDirectory directory;
  CHECK_THROWS_WITH_AS(AtomicOutputFile(directory.file("missing/out.h5"), false),
                       doctest::Contains("No such file or directory"), gpstream::Error);
}

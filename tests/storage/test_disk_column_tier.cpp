#include "engine/core/context.h"
#include "storage/column_cache/disk_column_tier.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace gpstream;
using namespace gpstream::testing;

namespace {

std::vector<double> column_values(std::size_t rows, std::size_t seed) {
  std::vector<double> values(rows);
  for (std::size_t i = 0; i < rows; ++i)
    values[i] = std::sin(static_cast<double>(seed) + 0.37 * static_cast<double>(i));
  return values;
}

// The tier's (deleted) file, through this process's descriptor table: the
// only way left to reach it from outside the tier, as a disk fault would.
int open_tier_file(const ScratchDirectory& directory) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(entry.path(), error).string();
    if (!error && target.starts_with(directory.path().string() + "/gpstream-kernel-columns-") &&
        target.ends_with("(deleted)"))
      return ::open(entry.path().c_str(), O_RDWR | O_CLOEXEC);
  }
  return -1;
}

}  // namespace

TEST_CASE("the disk tier gives back what was written, bit for bit, from its queue or its file, and leaves no file") {
  ScratchDirectory directory;
  MemoryBudget budget(std::size_t{256} << 20);
  constexpr std::size_t kRows = 1000;
  DiskColumnTier tier(directory.path().string(), kRows, 8 * kRows * sizeof(double), budget);
  CHECK(tier.capacity() == 8);
  CHECK(tier.rows() == kRows);
  CHECK(directory.entries().empty());  // unlinked at once: nothing outlives the run
  CHECK(tier.describe().find(directory.path().string()) != std::string::npos);

  std::vector<double> out(kRows);
  std::string problem;
  CHECK_FALSE(tier.read(3, out, problem));
  CHECK(problem.find("nothing was written") != std::string::npos);

  for (std::size_t slot = 0; slot < 8; ++slot) REQUIRE(tier.write(slot, column_values(kRows, slot)));
  // Straight away (possibly still queued), and again once on disk.
  for (const bool flushed : {false, true}) {
    CAPTURE(flushed);
    if (flushed) tier.flush();
    for (std::size_t slot = 0; slot < 8; ++slot) {
      REQUIRE(tier.read(slot, out, problem));
      const std::vector<double> expected = column_values(kRows, slot);
      CHECK(std::memcmp(out.data(), expected.data(), kRows * sizeof(double)) == 0);
    }
  }
  // A later write supersedes an earlier one.
  REQUIRE(tier.write(5, column_values(kRows, 50)));
  REQUIRE(tier.write(5, column_values(kRows, 51)));
  tier.flush();
  REQUIRE(tier.read(5, out, problem));
  CHECK(out == column_values(kRows, 51));

  SUBCASE("a column changed on disk is refused, not served") {
    const int file = open_tier_file(directory);
    REQUIRE(file >= 0);
    const double garbage = 12345.0;
    REQUIRE(::pwrite(file, &garbage, sizeof garbage, 2 * kRows * sizeof(double) + 80) == sizeof garbage);
    ::close(file);
    CHECK_FALSE(tier.read(2, out, problem));
    CHECK(problem.find("checksum") != std::string::npos);
    REQUIRE(tier.read(1, out, problem));  // the others are intact
    CHECK(out == column_values(kRows, 1));
    // Written again, it is served again.
    REQUIRE(tier.write(2, column_values(kRows, 2)));
    tier.flush();
    REQUIRE(tier.read(2, out, problem));
    CHECK(out == column_values(kRows, 2));
  }
  SUBCASE("a truncated file is refused") {
    const int file = open_tier_file(directory);
    REQUIRE(file >= 0);
    REQUIRE(::ftruncate(file, static_cast<off_t>(6 * kRows * sizeof(double) + 8)) == 0);
    ::close(file);
    CHECK_FALSE(tier.read(7, out, problem));
    CHECK(problem.find("truncated") != std::string::npos);
    CHECK_FALSE(tier.read(6, out, problem));
    REQUIRE(tier.read(5, out, problem));
  }
}

TEST_CASE("the disk tier's write queue takes a bounded share of the budget: what it refuses is not kept, the rest is") {
  ScratchDirectory directory;
  constexpr std::size_t kRows = 1 << 16;  // 512 KiB columns
  MemoryBudget budget(std::size_t{4} << 20);
  DiskColumnTier tier(directory.path().string(), kRows, 0, budget);
  CHECK(tier.capacity() == kRows);  // the default: half the free space, but no more columns than rows
  // A quarter of the budget: 1 MiB, two columns.
  CHECK(budget.available() == (std::size_t{3} << 20));
  // Whether the writer keeps up depends on the disk; either way a column is
  // kept exactly when its write was accepted.
  std::vector<bool> accepted;
  for (std::size_t slot = 0; slot < 200; ++slot) accepted.push_back(tier.write(slot, column_values(kRows, slot)));
  tier.flush();
  std::vector<double> out(kRows);
  std::string problem;
  for (std::size_t slot = 0; slot < 200; ++slot) {
    CAPTURE(slot);
    REQUIRE(tier.read(slot, out, problem) == accepted[slot]);
    if (accepted[slot]) CHECK(out == column_values(kRows, slot));
  }
}

TEST_CASE("the disk tier refuses a directory it cannot use, naming it") {
  MemoryBudget budget(std::size_t{64} << 20);
  CHECK_THROWS_WITH_AS(DiskColumnTier("/nonexistent/dir", 100, 0, budget), doctest::Contains("'/nonexistent/dir'"),
                       Error);
  ScratchDirectory directory;
  CHECK_THROWS_WITH_AS(DiskColumnTier(directory.path().string(), 100, std::uint64_t{1} << 62, budget),
                       doctest::Contains("free, less than the"), Error);
  CHECK_THROWS_WITH_AS(DiskColumnTier(directory.path().string(), 100, 10, budget),
                       doctest::Contains("room for no kernel column"), Error);
  CHECK(budget.available() == budget.total());  // nothing held after a failed construction
}

TEST_CASE("the disk tier measures its read speed from the storage and keeps nothing from the probe") {
  ScratchDirectory directory;
  MemoryBudget budget(std::size_t{64} << 20);
  DiskColumnTier tier(directory.path().string(), 4096, 0, budget);
  const double seconds = tier.measure_read_seconds_per_value();
  CHECK(seconds > 0);
  CHECK(seconds < 1e-5);  // 100 µs per value would be a broken device, not a slow one
  std::vector<double> out(4096);
  std::string problem;
  CHECK_FALSE(tier.read(0, out, problem));
}

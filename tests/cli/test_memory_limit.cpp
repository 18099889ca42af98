// The default memory budget follows the container: cgroup v1 and v2 limits
// are found from /proc/self/cgroup, on the process's cgroup or a parent.
#include "test_support.h"
#include "api/memory_limit.h"

#include <doctest/doctest.h>

#include <filesystem>

using gpstream::cgroup_memory_limit;
using gpstream::testing::ScratchDirectory;

namespace {

void write_limit(const std::filesystem::path& directory, const char* file, const std::string& value) {
  std::filesystem::create_directories(directory);
  gpstream::testing::write_file((directory / file).string(), value + "\n");
}

}  // namespace

TEST_CASE("cgroup v2: the tightest memory.max of the process's cgroup and its parents, 'max' is no limit") {
  ScratchDirectory root;
  const std::filesystem::path base = root.path();
  write_limit(base / "jobs" / "job1", "memory.max", "max");
  CHECK_FALSE(cgroup_memory_limit("0::/jobs/job1\n", base.string()).has_value());
  write_limit(base / "jobs", "memory.max", "268435456");
  CHECK(cgroup_memory_limit("0::/jobs/job1\n", base.string()) == 268435456u);
  write_limit(base / "jobs" / "job1", "memory.max", "134217728");
  CHECK(cgroup_memory_limit("0::/jobs/job1\n", base.string()) == 134217728u);
  // Inside a container the process's own cgroup is the mount's root.
  write_limit(base, "memory.max", "67108864");
  CHECK(cgroup_memory_limit("0::/\n", base.string()) == 67108864u);
}

TEST_CASE("cgroup v1: memory/…/memory.limit_in_bytes on the memory controller's line, 2^63 is no limit") {
  ScratchDirectory root;
  const std::filesystem::path base = root.path();
  const std::string self = "9:cpu,cpuacct:/a\n4:memory:/docker/abc\n0::/\n";
  write_limit(base / "memory" / "docker" / "abc", "memory.limit_in_bytes", "9223372036854771712");
  CHECK_FALSE(cgroup_memory_limit(self, base.string()).has_value());
  write_limit(base / "memory" / "docker" / "abc", "memory.limit_in_bytes", "536870912");
  CHECK(cgroup_memory_limit(self, base.string()) == 536870912u);
  CHECK_FALSE(cgroup_memory_limit("garbage\n", base.string()).has_value());
}

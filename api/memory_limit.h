// How much memory this process may use: the machine's RAM, or less when a
// container's memory cgroup (v1 or v2) limits it. The default --memory is a
// fraction of it, so that a job in a 256 MiB container plans for 256 MiB,
// not for the host's RAM.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpstream {

// The tightest memory-cgroup limit on this process, if any: read from
// `proc_self_cgroup` (the text of /proc/self/cgroup) and the hierarchy
// mounted at `cgroup_root` (normally /sys/fs/cgroup), checking the process's
// own cgroup and each of its parents (memory.max for v2,
// memory/…/memory.limit_in_bytes for v1; "max" or a near-2⁶³ value is no limit).
std::optional<std::uint64_t> cgroup_memory_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root);

struct MemoryLimit {
  std::uint64_t bytes = 0;  // what the process may use
  std::string source;       // "the machine's RAM" or "the container's memory limit"
};
MemoryLimit process_memory_limit();

// The default --memory: three quarters of process_memory_limit(), leaving
// room for the program, the libraries' own buffers and the page cache.
std::uint64_t default_memory_budget(const MemoryLimit& limit);

}  // namespace gpstream

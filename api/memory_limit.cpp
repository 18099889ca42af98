#include "api/memory_limit.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpstream {
namespace {

// A limit file's value; nothing for "max", an unreadable file, or a value so
// large (v1 writes 2⁶³ rounded down to a page) that it means no limit.
std::optional<std::uint64_t> read_limit(const std::filesystem::path& file) {
  std::ifstream stream(file);
  std::string text;
  if (!(stream >> text) || text == "max") return std::nullopt;
  try {
    std::size_t used = 0;
    const unsigned long long value = std::stoull(text, &used);
    if (used != text.size() || value >= (1ull << 62)) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// The smallest limit in `relative` and its parents under `base`, in `file`.
void tighten(std::optional<std::uint64_t>& best, const std::filesystem::path& base, std::filesystem::path relative,
             const char* file) {
  for (;;) {
    if (const auto limit = read_limit(base / relative / file)) best = best ? std::min(*best, *limit) : *limit;
    if (relative.empty() || relative == relative.root_path() || relative == ".") break;
    relative = relative.parent_path();
  }
}

}  // namespace

std::optional<std::uint64_t> cgroup_memory_limit(const std::string& proc_self_cgroup, const std::string& cgroup_root) {
  std::optional<std::uint64_t> best;
  const std::filesystem::path root(cgroup_root);
  std::istringstream lines(proc_self_cgroup);
  std::string line;
  while (std::getline(lines, line)) {
    // "hierarchy-id:controllers:path": v2 is "0::/path", v1's memory line "N:memory:/path".
    const std::size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::filesystem::path path = std::filesystem::path(line.substr(second + 1)).relative_path();
    if (controllers.empty()) {
      tighten(best, root, path, "memory.max");
      tighten(best, root / "unified", path, "memory.max");
    }
    std::istringstream names(controllers);
    std::string name;
    while (std::getline(names, name, ',')) {
      if (name == "memory") tighten(best, root / "memory", path, "memory.limit_in_bytes");
    }
  }
  return best;
}

MemoryLimit process_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
  MemoryLimit limit{pages > 0 && page_size > 0
                        ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size)
                        : std::uint64_t{2} << 30,
                    "the machine's RAM"};
  std::ifstream stream("/proc/self/cgroup");
  std::stringstream text;
  text << stream.rdbuf();
  if (const auto container = cgroup_memory_limit(text.str(), "/sys/fs/cgroup"); container && *container < limit.bytes) {
    limit = {*container, "the container's memory limit"};
  }
  return limit;
}

std::uint64_t default_memory_budget(const MemoryLimit& limit) { return limit.bytes / 4 * 3; }

}  // namespace gpstream

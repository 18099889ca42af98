// Sizes and counts as people read them, for messages and reports.
#pragma once

#include <cstdint>
#include <string>

namespace gpstream {

// "1.5 GiB", "830.0 KiB", "12 B"
std::string format_bytes(double bytes);
// "12,345,678"
std::string format_count(std::uint64_t count);

// The path as one shell word: as it is when it has only safe characters, else single-quoted.
std::string shell_quoted(const std::string& path);

}  // namespace gpstream

#include "api/compute.h"

#include "api/memory_limit.h"
#include "engine/core/error.h"
#include "storage/column_cache/disk_column_tier.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace gpstream {

Context::Settings context_settings(const ComputeSettings& settings) {
  std::uint64_t memory = 0;
  if (settings.memory_bytes) {
    memory = *settings.memory_bytes;
  } else {
    // The ranks of an MPI job on this machine (Open MPI says how many) share its memory.
    const char* local_ranks = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const std::uint64_t sharing = local_ranks != nullptr ? std::max(1ul, std::strtoul(local_ranks, nullptr, 10)) : 1;
    memory = default_memory_budget(process_memory_limit()) / sharing;
  }
  return {.threads = settings.threads,
          .memory_budget_bytes = memory,
          .seed = settings.seed,
          .communicator = nullptr,
          .include_process_memory = true};
}

std::uint64_t parse_byte_size(const std::string& text, const std::string& what) {
  std::size_t consumed = 0;
  double number = 0;
  try {
    number = std::stod(text, &consumed);
  } catch (const std::exception&) {
    throw InvalidArgument(fmt::format("{}: \"{}\" is not a size (examples: 512M, 2G)", what, text));
  }
  std::string unit = text.substr(consumed);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("IB")) unit.resize(unit.size() - 2);
  if (unit.ends_with("B")) unit.resize(unit.size() - 1);
  double scale = 1;
  if (unit == "K")
    scale = 1024.0;
  else if (unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty())
    throw InvalidArgument(fmt::format("{}: unknown unit in \"{}\" (use K, M, G or T)", what, text));
  const double bytes = number * scale;
  if (!(bytes > 0) || !std::isfinite(bytes) || bytes > 1e18) {
    throw InvalidArgument(fmt::format("{}: \"{}\" is not a positive size", what, text));
  }
  return static_cast<std::uint64_t>(bytes);
}

std::function<std::unique_ptr<ColumnDiskTier>(std::size_t rows)> disk_tier_opener(std::string directory,
                                                                                  std::uint64_t bytes, Context& context,
                                                                                  std::string where) {
  return [directory = std::move(directory), bytes, &context, where = std::move(where)](std::size_t rows) {
    try {
      return std::unique_ptr<ColumnDiskTier>(
          std::make_unique<DiskColumnTier>(directory, rows, bytes, context.memory()));
    } catch (const MemoryBudgetExceeded&) {
      throw;
    } catch (const Error& error) {
      throw Error(fmt::format("kernel-column cache on disk ({}): {}", where, error.what()));
    }
  };
}

}  // namespace gpstream

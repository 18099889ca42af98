// What a job may use — threads, a memory budget for the whole process, a
// seed — as the command line's --threads/--memory/--seed and Python's
// n_jobs/memory/random_state give them: the settings of its Context
// (engine/core/context.h).
#pragma once

#include "engine/core/context.h"
#include "engine/kernels/column_cache_setup.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace gpstream {

struct ComputeSettings {
  // None: 3/4 of the RAM or of the container's limit (memory_limit.h), shared among the
  // ranks of an MPI job on this machine.
  std::optional<std::uint64_t> memory_bytes;
  unsigned threads = 0;  // 0: every core the process may use
  std::uint64_t seed = 1;
};

// The budget is the whole process's (Context::Settings::include_process_memory).
Context::Settings context_settings(const ComputeSettings& settings);

// How a kernel-column cache opens its disk tier (engine/kernels/column_cache_setup.h): a file in
// `directory` (`where` names it in messages) of up to `bytes` (0: half the directory's free space), its
// index held in the Context's memory budget.
std::function<std::unique_ptr<ColumnDiskTier>(std::size_t rows)> disk_tier_opener(std::string directory,
                                                                                  std::uint64_t bytes, Context& context,
                                                                                  std::string where);

// Parses "512M", "2G", "1.5GiB", "1000000" (bytes); throws InvalidArgument
// naming `what` (the option or parameter, `memory`) when it is not a positive size.
std::uint64_t parse_byte_size(const std::string& text, const std::string& what);

}  // namespace gpstream

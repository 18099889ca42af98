#include "engine/kernels/column_cache_setup.h"

#include "engine/core/error.h"
#include "engine/core/human_readable.h"
#include "engine/core/size_arithmetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

namespace gpstream {

namespace {

// What serving one kernel entry from the RAM cache costs, per core: reading
// 8 bytes at memory bandwidth (~0.8 ns) plus the first touch of the memory
// that holds it (~19 ns per entry on the reference 2-core VM, shared by the
// ~20 uses a column gets in a GBCD run on kin40k), ~1.8 ns in all. Measured
// there: kin40k (d = 8, 1.2–1.4 ns per computed entry) runs no faster with
// the cache (bench/run_scale_bench.sh). `auto` keeps columns only where an
// entry costs more than twice that (costly kernels such as hik, d ≳ 32),
// clear of the noise of the measurement.
constexpr double kCachedEntrySeconds = 4e-9;

// Seconds per kernel entry computed as products compute them, on a sample of
// the training rows: the fastest of 20 evaluations of a 64 × 512 block (the
// first ones pay for cold caches).
double measure_entry_seconds(KernelMatrix& kernel) {
  const Kernel& covariance = kernel.kernel();
  const std::size_t d = covariance.dimension();
  const std::size_t sample = std::min<std::size_t>(kernel.size(), 512);
  const std::size_t columns = std::min<std::size_t>(sample, 64);
  std::vector<double> rows(checked_multiply(sample, d));
  kernel.rows().read_rows(0, sample, rows.data(), nullptr);
  PreparedRows prepared;
  covariance.prepare(rows.data(), sample, prepared);
  std::vector<double> block(columns * sample);
  using Clock = std::chrono::steady_clock;
  double fastest = std::numeric_limits<double>::infinity();
  for (int repeat = 0; repeat < 20; ++repeat) {
    const auto start = Clock::now();
    covariance.evaluate_entrywise(prepared.view(d, 0, columns), prepared.view(d), block.data());
    fastest = std::min(fastest, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return fastest / static_cast<double>(columns * sample);
}

// A greedy basis's columns in RAM, the first ones the budget holds.
std::string configure_basis_cache(KernelMatrix& kernel, const ColumnReuse& reuse, ColumnCacheMode mode,
                                  double entry_seconds) {
  const std::size_t n = kernel.size();
  const std::size_t columns = std::min(reuse.basis_size, n);
  MemoryBudget& memory = kernel.context().memory();
  const std::size_t share = memory.available() / 2;  // as for the BCD family, below
  if (columns < 2 || share < KernelColumnCache::bytes_for(n, 2)) {
    return fmt::format("kernel-column cache off ({})", columns < 2 ? "a basis of one column is computed once"
                                                                   : "the free memory budget is too small for it");
  }
  kernel.enable_column_cache(
      memory.reserve_up_to("the kernel-column cache", KernelColumnCache::bytes_for(n, columns), 2));
  KernelColumnCache& cache = *kernel.column_cache();
  cache.set_entry_seconds(entry_seconds);
  return fmt::format("kernel-column cache in RAM{}: up to {} of the basis's {} columns{}",
                     mode == ColumnCacheMode::automatic ? " (auto: each basis column serves every later step)" : "",
                     format_count(cache.capacity()), format_count(columns),
                     mode == ColumnCacheMode::disk ? " (no disk tier: a basis evicts no column to it)" : "");
}

}  // namespace

std::string configure_column_cache(KernelMatrix& kernel, const ColumnReuse& reuse,
                                   const ColumnCacheSettings& settings) {
  const ColumnCacheMode mode = settings.mode;
  if (mode == ColumnCacheMode::off) return "kernel-column cache off";
  if (reuse.pattern == ColumnReusePattern::none)
    return fmt::format("kernel-column cache off ({} does not reuse kernel columns)", reuse.method);
  if (kernel.size() == 0) return "kernel-column cache off (no training rows here)";
  // Measured in every mode: the cache's estimate of the time it saves needs it too.
  const double entry_seconds = measure_entry_seconds(kernel);
  if (reuse.pattern == ColumnReusePattern::basis) return configure_basis_cache(kernel, reuse, mode, entry_seconds);
  const std::size_t n = kernel.size();
  const bool automatic = mode == ColumnCacheMode::automatic;
  std::string why;  // auto's reason, when it turns the cache on
  if (automatic) {
    if (entry_seconds < kCachedEntrySeconds) {
      return fmt::format(
          "kernel-column cache off (auto: a kernel entry costs {:.2g} ns to compute, about what reading it from "
          "RAM costs)",
          entry_seconds * 1e9);
    }
    why = fmt::format(" (auto: a kernel entry costs {:.2g} ns to compute, more than reading it)", entry_seconds * 1e9);
  }
  MemoryBudget& memory = kernel.context().memory();
  // Half of what is free, so that the cache never crowds out the run's
  // workspaces. GBCD selects the variables of a run about evenly (kin40k:
  // 90 % of them at least 9 times, 1 % more than 65), so an LRU cache of a fraction f of the columns hits
  // about f of the time: auto wants half of them at least, in RAM and on disk together.
  const std::size_t share = memory.available() / 2;
  if (share < KernelColumnCache::bytes_for(n, 2)) {
    return fmt::format("kernel-column cache off (the free memory budget, {}, is too small for it)",
                       format_bytes(static_cast<double>(memory.available())));
  }
  const std::size_t column_bytes = checked_multiply(n, sizeof(double));
  const bool ram_holds_all = share >= KernelColumnCache::bytes_for(n, n);
  std::unique_ptr<ColumnDiskTier> disk;
  std::string disk_why;  // auto's reason about the disk tier
  if (mode == ColumnCacheMode::disk) {
    GPSTREAM_CHECK(settings.open_disk_tier, "the kernel-column cache has no place for its disk tier");
    disk = settings.open_disk_tier(n);
  } else if (automatic && !ram_holds_all && settings.open_disk_tier) {
    // Auto tries the disk tier; a place that cannot hold it is a reason not to use it, not an error.
    try {
      disk = settings.open_disk_tier(n);
      const double read_seconds = disk->measure_read_seconds_per_value();
      // Twice, so that it pays clear of the measurements' noise.
      if (entry_seconds < 2 * read_seconds) {
        disk_why =
            fmt::format("; no disk tier (auto: reading an entry back from disk costs {:.2g} ns)", read_seconds * 1e9);
        disk.reset();
      } else {
        disk_why = fmt::format(" (auto: reading an entry back costs {:.2g} ns)", read_seconds * 1e9);
      }
    } catch (const Error& error) {  // no room on disk, or too little budget for its write queue
      disk_why = fmt::format("; no disk tier (auto: {})", error.what());
      disk.reset();
    }
  }
  const std::size_t disk_columns = disk ? disk->capacity() : 0;
  if (automatic && share < KernelColumnCache::bytes_for(n, n / 2) && disk_columns < n / 2) {
    return fmt::format(
        "kernel-column cache off (auto: half the free memory budget, {}, holds less than half of the {} columns "
        "of {}{})",
        format_bytes(static_cast<double>(share)), format_count(n), format_bytes(static_cast<double>(column_bytes)),
        disk_why);
  }
  const std::string disk_text =
      disk ? fmt::format("; on disk: up to {} columns, {}, in {}{}", format_count(disk_columns),
                         format_bytes(static_cast<double>(column_bytes) * static_cast<double>(disk_columns)),
                         disk->describe(), disk_why)
           : disk_why;
  kernel.enable_column_cache(memory.reserve_up_to("the kernel-column cache", KernelColumnCache::bytes_for(n, n), 2),
                             std::move(disk));
  KernelColumnCache& cache = *kernel.column_cache();
  cache.set_entry_seconds(entry_seconds);
  return fmt::format("kernel-column cache in RAM{}: up to {} of {} columns{}", why, format_count(cache.capacity()),
                     format_count(n), disk_text);
}

}  // namespace gpstream

// KernelColumnCache: kernel columns K(X, x_j) over all n training rows, kept
// in RAM for the products K̄[:, B]·v that use column j again.
//
// Block coordinate descent re-selects the same variables many times (GBCD on
// kin40k: every variable ~20 times over a run), and each selection costs a
// full column of kernel evaluations. The cache follows LIBSVM's kernel cache
// (svm.cpp, class Cache): whole columns, least recently used evicted first,
// with one change measured for streams of columns that are mostly used once
// (the first iterations of GBCD, a cyclic sweep): a column is admitted on its
// second request only, so one-off columns neither cost a copy nor push out
// columns that are reused.
//
// Columns are stored in double precision exactly as the product computed
// them, so a product with cached columns is the same arithmetic as without:
// results are bitwise equal with the cache on or off.
//
// A second tier on disk (ColumnDiskTier) is optional: a column evicted from
// RAM is written there in the background (unless it is there already), and a
// column asked for again is read back into RAM instead of being computed —
// one sequential read of n values, which pays where an entry costs more to
// compute than to read (high d, costly kernels). The tier verifies what it
// reads back; a column it cannot give back intact is computed again, with a
// warning through the Context, and after kMaxDiskFailures of them the disk
// tier is left unused for the rest of the run. A column is read back into a
// RAM slot, so the RAM tier should hold at least one product's columns (an
// active set); columns on disk are read back before misses are admitted.
//
// Planning (which columns hit, which are stored, which are evicted, which are
// read back from disk) runs on one thread before a pass; during the pass,
// tasks read hit columns and write the rows of stored columns they own, with
// no locks.
#pragma once

#include "engine/core/context.h"
#include "engine/kernels/column_disk_tier.h"

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpstream {

// What a run does about the cache: `ram` keeps columns in RAM, `disk` in RAM
// and on disk, where the method reuses them (the BCD family); `automatic`
// chooses by measuring what a kernel entry costs to compute against reading it.
enum class ColumnCacheMode { off, ram, disk, automatic };
// "off", "ram", "disk", "auto"; throws for anything else, naming the choices.
ColumnCacheMode parse_column_cache_mode(const std::string& text);
// "off", "ram", "disk", "auto": what parse_column_cache_mode() reads.
std::string to_string(ColumnCacheMode mode);

struct ColumnCacheStatistics {
  std::uint64_t lookups = 0;  // columns asked for
  std::uint64_t hits = 0;     // of which served from the cache (RAM or disk)
  std::uint64_t evicted = 0;  // columns evicted from RAM
  // The disk tier: columns read back (counted in hits too) and their bytes;
  // columns written (spilled) and not written because its queue was full;
  // columns that could not be read back intact and were computed again.
  std::uint64_t disk_hits = 0, disk_bytes_read = 0;
  std::uint64_t spilled = 0, spills_dropped = 0;
  std::uint64_t disk_failures = 0;
  // Time the cache saved, estimated: the hits' entries at the measured cost of
  // computing one (set_entry_seconds; core-seconds, as the product is spread
  // over the threads), less the wall time spent reading columns back from disk.
  double seconds_saved = 0;
};

class KernelColumnCache {
 public:
  // Columns of `rows` values, as many as `memory` holds (at least one). The
  // memory is allocated as columns are admitted, in chunks of ~64 MiB.
  // With `disk` (of columns of `rows` values), columns evicted from RAM go
  // there; `context` (required with `disk`) receives the warnings when they
  // cannot be read back.
  // Columns are numbered below `columns` (0: `rows`; a rank of a
  // distributed run keeps its own rows of columns numbered over all n).
  KernelColumnCache(std::size_t rows, MemoryReservation memory, std::unique_ptr<ColumnDiskTier> disk = nullptr,
                    const Context* context = nullptr, std::size_t columns = 0);

  // After this many columns that the disk tier could not give back, it is
  // no longer used.
  static constexpr std::uint64_t kMaxDiskFailures = 16;

  // The memory that holds `columns` columns of `rows` values.
  static std::size_t bytes_for(std::size_t rows, std::size_t columns);

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const { return slot_of_.size(); }
  // The disk tier, while it is in use (null without one or after kMaxDiskFailures).
  const ColumnDiskTier* disk_tier() const { return disk_.get(); }
  std::size_t disk_size() const { return disk_slot_of_.size(); }
  const ColumnCacheStatistics& statistics() const { return statistics_; }
  // What computing one kernel entry costs, measured, for statistics().seconds_saved (0 until set).
  void set_entry_seconds(double seconds) { entry_seconds_ = seconds; }

  // What one product does with each of its columns b[k]: reads it from
  // `cached[k]`, or computes it and, when `store[k]` is set, also writes it
  // there (the whole column over the pass).
  struct Plan {
    std::vector<const double*> cached;  // null: compute
    std::vector<double*> store;         // null: do not keep
    std::size_t hits = 0;
  };
  // Plans a product with columns b (a column asked for twice in b is
  // computed the second time). Columns hit are marked most recently used;
  // columns on disk are read back into RAM, and misses seen before are
  // admitted, both evicting the least recently used columns not used by this
  // plan (to disk, when it has a tier). The pointers stay valid until the next plan.
  void plan(std::span<const std::size_t> b, Plan& plan);
  // The pass of the last plan has written every stored column. Until then
  // they do not count as cached: a pass that failed leaves none half-written.
  void complete();

 private:
  struct Slot {
    double* values = nullptr;  // in one of chunks_
    std::size_t column = 0;
    std::uint64_t plan = 0;  // the last plan that used it
  };
  struct FreeChunk {
    void operator()(double* chunk) const;
  };
  // A new slot's storage, allocated a chunk of slots at a time.
  double* slot_values(std::size_t number);
  // A RAM slot for a column of plan `current`: free, new, or the least
  // recently used one not in this plan (evicted, to disk if there is one);
  // none when every slot is used by this plan.
  std::optional<std::size_t> acquire_slot(std::uint64_t current);
  // Keeps the column of RAM slot `number` on disk, unless it is there.
  void spill(std::size_t number);
  // Reads `column` back from disk slot `disk_slot` into `values`; on failure
  // forgets the disk copy, warns, and says false.
  bool read_back(std::size_t disk_slot, std::size_t column, double* values);
  void forget_disk_column(std::size_t column);

  std::size_t rows_;
  std::size_t columns_;
  MemoryReservation memory_;
  std::size_t capacity_;
  std::size_t slots_per_chunk_;
  std::vector<std::unique_ptr<double, FreeChunk>> chunks_;
  std::vector<Slot> slots_;  // grows to capacity_
  std::vector<std::size_t> free_slots_;
  std::vector<std::size_t> filling_;  // slots the last plan stores into, until complete()
  std::list<std::size_t> recency_;    // slot numbers, most recently used first
  std::unordered_map<std::size_t, std::list<std::size_t>::iterator> slot_of_;  // column -> position in recency_
  std::vector<bool> requested_;  // per column: asked for before (admission on the second request)
  // The disk tier: its slots, LRU as the RAM tier's.
  std::unique_ptr<ColumnDiskTier> disk_;
  const Context* context_;
  std::size_t disk_slots_used_ = 0;  // slots [0, disk_slots_used_) have been handed out
  std::vector<std::size_t> free_disk_slots_;
  std::vector<std::size_t> disk_column_;  // per disk slot: its column
  std::list<std::size_t> disk_recency_;   // disk slot numbers, most recently used first
  std::unordered_map<std::size_t, std::list<std::size_t>::iterator> disk_slot_of_;  // column -> position
  std::uint64_t plan_count_ = 0;
  double entry_seconds_ = 0;
  ColumnCacheStatistics statistics_;
};

}  // namespace gpstream

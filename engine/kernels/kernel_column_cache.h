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
// Planning (which columns hit, which are stored, which are evicted) runs on
// one thread before a pass; during the pass, tasks read hit columns and
// write the rows of stored columns they own, with no locks.
#pragma once

#include "engine/core/context.h"

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpstream {

// What a run does about the cache: `automatic` keeps columns in RAM where
// the method reuses them (the BCD family) and nowhere else.
enum class ColumnCacheMode { off, ram, automatic };
// "off", "ram", "auto"; throws for anything else, naming the choices.
ColumnCacheMode parse_column_cache_mode(const std::string& text);

struct ColumnCacheStatistics {
  std::uint64_t lookups = 0;  // columns asked for
  std::uint64_t hits = 0;     // of which served from the cache
  std::uint64_t evicted = 0;
};

class KernelColumnCache {
 public:
  // Columns of `rows` values, as many as `memory` holds (at least one). The
  // memory is allocated as columns are admitted, in chunks of ~64 MiB.
  KernelColumnCache(std::size_t rows, MemoryReservation memory);

  // The memory that holds `columns` columns of `rows` values.
  static std::size_t bytes_for(std::size_t rows, std::size_t columns);

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const { return slot_of_.size(); }
  const ColumnCacheStatistics& statistics() const { return statistics_; }

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
  // misses seen before are admitted, evicting the least recently used
  // columns not used by this plan. The pointers stay valid until the next plan.
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

  std::size_t rows_;
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
  std::uint64_t plan_count_ = 0;
  ColumnCacheStatistics statistics_;
};

}  // namespace gpstream

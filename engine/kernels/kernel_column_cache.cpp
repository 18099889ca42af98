#include "engine/kernels/kernel_column_cache.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>

namespace gpstream {
namespace {

// Bookkeeping per cached column besides its values: the slot, a list node
// and a hash-map entry.
constexpr std::size_t kSlotOverheadBytes = 128;
// Columns are allocated in chunks of about this size, aligned to and advised
// as transparent huge pages: touching gigabytes of 4 KiB pages for the first
// time cost more (page faults in a VM) than the kernel evaluations saved.
constexpr std::size_t kChunkBytes = std::size_t{64} << 20;
constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

}  // namespace

ColumnCacheMode parse_column_cache_mode(const std::string& text) {
  if (text == "off") return ColumnCacheMode::off;
  if (text == "ram") return ColumnCacheMode::ram;
  if (text == "auto") return ColumnCacheMode::automatic;
  GPSTREAM_THROW("unknown kernel-column cache \"{}\" (choose off, ram or auto)", text);
}

std::size_t KernelColumnCache::bytes_for(std::size_t rows, std::size_t columns) {
  const std::size_t column_bytes = checked_add(checked_multiply(rows, sizeof(double)), kSlotOverheadBytes);
  return checked_add(checked_multiply(columns, column_bytes), rows / 8 + 1);  // + requested_
}

KernelColumnCache::KernelColumnCache(std::size_t rows, MemoryReservation memory)
    : rows_(rows), memory_(std::move(memory)), requested_(rows, false) {
  const std::size_t fixed = bytes_for(rows, 0);
  const std::size_t column_bytes = bytes_for(rows, 1) - fixed;
  capacity_ = std::min(rows, memory_.bytes() > fixed ? (memory_.bytes() - fixed) / column_bytes : 0);
  GPSTREAM_CHECK(capacity_ > 0, "a kernel-column cache of {} bytes cannot hold one column of {} rows", memory_.bytes(),
                 rows);
  slots_.reserve(capacity_);
  slots_per_chunk_ = std::clamp<std::size_t>(kChunkBytes / (rows * sizeof(double)), 1, capacity_);
}

void KernelColumnCache::FreeChunk::operator()(double* chunk) const { std::free(chunk); }

double* KernelColumnCache::slot_values(std::size_t number) {
  const std::size_t chunk = number / slots_per_chunk_;
  if (chunk == chunks_.size()) {
    const std::size_t slots = std::min(slots_per_chunk_, capacity_ - number);
    std::size_t bytes = checked_multiply(slots, rows_, sizeof(double));
    bytes = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    auto* memory = static_cast<double*>(std::aligned_alloc(kHugePageBytes, bytes));
    if (memory == nullptr) throw std::bad_alloc();
    madvise(memory, bytes, MADV_HUGEPAGE);  // advice only: without it, ordinary pages
    chunks_.emplace_back(memory);
  }
  return chunks_[chunk].get() + (number % slots_per_chunk_) * rows_;
}

void KernelColumnCache::plan(std::span<const std::size_t> b, Plan& plan) {
  // Columns a pass was to store but that pass never completed.
  for (const std::size_t number : filling_) {
    const auto position = slot_of_.find(slots_[number].column);
    recency_.erase(position->second);
    slot_of_.erase(position);
    free_slots_.push_back(number);
  }
  filling_.clear();
  const std::uint64_t current = ++plan_count_;
  plan.cached.assign(b.size(), nullptr);
  plan.store.assign(b.size(), nullptr);
  plan.hits = 0;
  // Hits first, so that admissions below never evict a column this plan reads.
  for (std::size_t k = 0; k < b.size(); ++k) {
    const auto found = slot_of_.find(b[k]);
    if (found == slot_of_.end()) continue;
    Slot& slot = slots_[*found->second];
    if (slot.plan == current) continue;  // a repeat of a column this plan already uses
    slot.plan = current;
    recency_.splice(recency_.begin(), recency_, found->second);
    plan.cached[k] = slot.values;
    ++plan.hits;
  }
  for (std::size_t k = 0; k < b.size(); ++k) {
    const std::size_t column = b[k];
    GPSTREAM_CHECK(column < rows_, "kernel column {} is outside the {} rows", column, rows_);
    if (plan.cached[k] != nullptr || slot_of_.count(column) != 0) continue;
    if (!requested_[column]) {
      requested_[column] = true;
      continue;
    }
    std::size_t number;
    if (!free_slots_.empty()) {
      number = free_slots_.back();
      free_slots_.pop_back();
    } else if (slots_.size() < capacity_) {
      number = slots_.size();
      slots_.push_back(Slot{slot_values(number), 0, 0});
    } else {
      // The least recently used column that this plan does not use.
      auto victim = recency_.end();
      while (victim != recency_.begin()) {
        --victim;
        if (slots_[*victim].plan != current) break;
      }
      if (victim == recency_.end() || slots_[*victim].plan == current) continue;  // all in use: compute only
      number = *victim;
      slot_of_.erase(slots_[number].column);
      recency_.erase(victim);
      ++statistics_.evicted;
    }
    Slot& slot = slots_[number];
    slot.column = column;
    slot.plan = current;
    recency_.push_front(number);
    slot_of_[column] = recency_.begin();
    plan.store[k] = slot.values;
    filling_.push_back(number);
  }
  statistics_.lookups += b.size();
  statistics_.hits += plan.hits;
}

void KernelColumnCache::complete() { filling_.clear(); }

}  // namespace gpstream

#include "engine/kernels/kernel_column_cache.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

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
  if (text == "disk") return ColumnCacheMode::disk;
  if (text == "auto") return ColumnCacheMode::automatic;
  GPSTREAM_THROW_ARGUMENT("unknown kernel-column cache \"{}\" (choose off, ram, disk or auto)", text);
}

std::string to_string(ColumnCacheMode mode) {
  switch (mode) {
    case ColumnCacheMode::off:
      return "off";
    case ColumnCacheMode::ram:
      return "ram";
    case ColumnCacheMode::disk:
      return "disk";
    case ColumnCacheMode::automatic:
      break;
  }
  return "auto";
}

std::size_t KernelColumnCache::bytes_for(std::size_t rows, std::size_t columns) {
  const std::size_t column_bytes = checked_add(checked_multiply(rows, sizeof(double)), kSlotOverheadBytes);
  return checked_add(checked_multiply(columns, column_bytes), rows / 8 + 1);  // + requested_
}

KernelColumnCache::KernelColumnCache(std::size_t rows, MemoryReservation memory, std::unique_ptr<ColumnDiskTier> disk,
                                     const Context* context, std::size_t columns)
    : rows_(rows),
      columns_(columns > 0 ? columns : rows),
      memory_(std::move(memory)),
      requested_(columns_, false),
      disk_(std::move(disk)),
      context_(context) {
  const std::size_t fixed = bytes_for(rows, 0);
  const std::size_t column_bytes = bytes_for(rows, 1) - fixed;
  capacity_ = std::min(rows, memory_.bytes() > fixed ? (memory_.bytes() - fixed) / column_bytes : 0);
  GPSTREAM_CHECK(capacity_ > 0, "a kernel-column cache of {} bytes cannot hold one column of {} rows", memory_.bytes(),
                 rows);
  slots_.reserve(capacity_);
  slots_per_chunk_ = std::clamp<std::size_t>(kChunkBytes / (rows * sizeof(double)), 1, capacity_);
  if (disk_) {
    GPSTREAM_CHECK(disk_->rows() == rows, "a disk tier of columns of {} values cannot serve columns of {}",
                   disk_->rows(), rows);
    GPSTREAM_CHECK(context_ != nullptr, "a kernel-column cache with a disk tier needs a context for its warnings");
    disk_column_.resize(disk_->capacity());
  }
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
  for (const std::size_t column : b)
    GPSTREAM_CHECK(column < columns_, "kernel column {} is outside the {} columns", column, columns_);
  const std::uint64_t current = ++plan_count_;
  plan.cached.assign(b.size(), nullptr);
  plan.store.assign(b.size(), nullptr);
  plan.hits = 0;
  // Hits in RAM first, so that what follows never evicts a column this plan reads.
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
  // Then columns on disk, read back into RAM: before admissions, since a
  // column read back saves its computation now and an admission only later.
  const auto place = [&](std::size_t k, std::size_t number) {
    Slot& slot = slots_[number];
    slot.column = b[k];
    slot.plan = current;
    recency_.push_front(number);
    slot_of_[b[k]] = recency_.begin();
    return slot.values;
  };
  for (std::size_t k = 0; disk_ && k < b.size(); ++k) {
    const std::size_t column = b[k];
    const auto on_disk = disk_slot_of_.find(column);
    if (plan.cached[k] != nullptr || on_disk == disk_slot_of_.end() || slot_of_.count(column) != 0) continue;
    // Most recently used, so that spilling for its RAM slot does not evict it from disk.
    disk_recency_.splice(disk_recency_.begin(), disk_recency_, on_disk->second);
    const std::optional<std::size_t> number = acquire_slot(current);
    if (!number) break;  // every slot is in use by this plan
    double* values = place(k, *number);
    // Looked up again: the spill in acquire_slot may have evicted it from a disk tier of one slot.
    if (const auto still = disk_slot_of_.find(column);
        still != disk_slot_of_.end() && read_back(*still->second, column, values)) {
      plan.cached[k] = values;
      ++plan.hits;
      ++statistics_.disk_hits;
    } else {
      plan.store[k] = values;
      filling_.push_back(*number);
    }
  }
  // Then the misses seen before, admitted to be stored as computed.
  for (std::size_t k = 0; k < b.size(); ++k) {
    const std::size_t column = b[k];
    if (plan.cached[k] != nullptr || slot_of_.count(column) != 0) continue;
    if (!requested_[column]) {
      requested_[column] = true;
      continue;
    }
    const std::optional<std::size_t> number = acquire_slot(current);
    if (!number) break;  // every slot is in use by this plan: compute the rest only
    plan.store[k] = place(k, *number);
    filling_.push_back(*number);
  }
  statistics_.lookups += b.size();
  statistics_.hits += plan.hits;
  statistics_.seconds_saved += static_cast<double>(plan.hits) * static_cast<double>(rows_) * entry_seconds_;
}

std::optional<std::size_t> KernelColumnCache::acquire_slot(std::uint64_t current) {
  if (!free_slots_.empty()) {
    const std::size_t number = free_slots_.back();
    free_slots_.pop_back();
    return number;
  }
  if (slots_.size() < capacity_) {
    const std::size_t number = slots_.size();
    slots_.push_back(Slot{slot_values(number), 0, 0});
    return number;
  }
  // The least recently used column that this plan does not use.
  auto victim = recency_.end();
  while (victim != recency_.begin()) {
    --victim;
    if (slots_[*victim].plan != current) break;
  }
  if (victim == recency_.end() || slots_[*victim].plan == current) return std::nullopt;
  const std::size_t number = *victim;
  spill(number);
  slot_of_.erase(slots_[number].column);
  recency_.erase(victim);
  ++statistics_.evicted;
  return number;
}

void KernelColumnCache::spill(std::size_t number) {
  const std::size_t column = slots_[number].column;
  if (!disk_ || disk_slot_of_.count(column) != 0) return;  // kept on disk already: the values never change
  std::size_t disk_slot;
  if (!free_disk_slots_.empty()) {
    disk_slot = free_disk_slots_.back();
    free_disk_slots_.pop_back();
  } else if (disk_slots_used_ < disk_->capacity()) {
    disk_slot = disk_slots_used_++;
  } else {
    disk_slot = disk_recency_.back();
    disk_slot_of_.erase(disk_column_[disk_slot]);
    disk_recency_.pop_back();
  }
  if (!disk_->write(disk_slot, std::span<const double>(slots_[number].values, rows_))) {
    free_disk_slots_.push_back(disk_slot);
    ++statistics_.spills_dropped;
    return;
  }
  disk_column_[disk_slot] = column;
  disk_recency_.push_front(disk_slot);
  disk_slot_of_[column] = disk_recency_.begin();
  ++statistics_.spilled;
}

bool KernelColumnCache::read_back(std::size_t disk_slot, std::size_t column, double* values) {
  std::string problem;
  const auto start = std::chrono::steady_clock::now();
  const bool intact = disk_->read(disk_slot, std::span<double>(values, rows_), problem);
  statistics_.seconds_saved -= std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (intact) {
    statistics_.disk_bytes_read += rows_ * sizeof(double);
    return true;
  }
  forget_disk_column(column);
  const std::uint64_t failures = ++statistics_.disk_failures;
  std::string message =
      fmt::format("the kernel-column cache could not read column {} back from {} ({}); it is computed again", column,
                  disk_->describe(), problem);
  if (failures >= kMaxDiskFailures) {
    message += fmt::format("; after {} such columns the disk tier is no longer used in this run", failures);
    disk_.reset();
    disk_slot_of_.clear();
    disk_recency_.clear();
  }
  context_->warn(message);
  return false;
}

void KernelColumnCache::forget_disk_column(std::size_t column) {
  const auto found = disk_slot_of_.find(column);
  free_disk_slots_.push_back(*found->second);
  disk_recency_.erase(found->second);
  disk_slot_of_.erase(found);
}

void KernelColumnCache::complete() { filling_.clear(); }

}  // namespace gpstream

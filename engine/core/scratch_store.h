// ScratchStore: doubles kept outside the memory budget — K̄'s Cholesky factor
// when it does not fit in memory (engine/dense/cholesky_variances.cpp) —
// written once and read back in pieces, by offset. The engine knows no
// files: the caller opens one (storage/scratch/scratch_file.h), through a
// ScratchOpener it hands the engine, as it hands it the column cache's disk tier.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace gpstream {

class ScratchStore {
 public:
  virtual ~ScratchStore() = default;
  // Offsets and sizes count doubles. Throw an Error naming where the store is when the system fails.
  virtual void write(std::uint64_t offset, std::span<const double> values) = 0;
  virtual void read(std::uint64_t offset, std::span<double> values) = 0;
  // "a file in /tmp": for the messages.
  virtual std::string where() const = 0;
};

// Opens a store of `doubles` values (its room reserved up front), or throws saying why it cannot.
using ScratchOpener = std::function<std::unique_ptr<ScratchStore>(std::uint64_t doubles)>;
// Bytes free where an opener puts its stores, for a planner to leave out a
// store that would not fit (rather than find out after the work before it).
using ScratchRoom = std::function<std::uint64_t()>;

}  // namespace gpstream

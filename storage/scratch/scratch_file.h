// ScratchFile: a ScratchStore (engine/core/scratch_store.h) in an unlinked
// file of a directory — nothing is left behind however the process ends —
// with its room reserved when it is opened (posix_fallocate), so that a disk
// too small fails at once, naming the directory and the size, not hours later.
#pragma once

#include "engine/core/scratch_store.h"

#include <string>

namespace gpstream {

class ScratchFile final : public ScratchStore {
 public:
  ScratchFile(const std::string& directory, std::uint64_t doubles);
  ~ScratchFile() override;
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  void write(std::uint64_t offset, std::span<const double> values) override;
  void read(std::uint64_t offset, std::span<double> values) override;
  std::string where() const override { return "a file in '" + directory_ + "'"; }

 private:
  std::string directory_;
  std::uint64_t doubles_;
  int descriptor_ = -1;
};

// A ScratchOpener of ScratchFiles in `directory`.
ScratchOpener scratch_files_in(std::string directory);
// The bytes free to this user in `directory` (unknown: the largest value, and opening will say).
ScratchRoom scratch_room_in(std::string directory);

}  // namespace gpstream

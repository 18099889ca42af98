// AtomicOutputFile: an output that appears complete or not at all.
//
// Every file gpstream writes — datasets, models, checkpoints, predictions —
// is written under a temporary name in the destination's directory, flushed
// to disk, then renamed over the destination. A crash, an error or Ctrl-C at
// any instant leaves either the previous file or nothing, never a torn one.
#pragma once

#include <string>

namespace gpstream {

class AtomicOutputFile {
 public:
  // Reserves `path`. Throws if it exists and `overwrite` is false, or if a
  // file cannot be created in its directory.
  AtomicOutputFile(std::string path, bool overwrite);
  // Removes the temporary file unless commit() succeeded.
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  const std::string& path() const { return path_; }
  // Where to write the contents; the file exists (empty) from construction on.
  const std::string& temporary_path() const { return temporary_path_; }

  // Flushes the temporary file to disk and renames it to path(). The writer
  // must have closed it first.
  void commit();

 private:
  std::string path_;
  std::string temporary_path_;
  bool committed_ = false;
};

}  // namespace gpstream

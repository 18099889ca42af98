// AtomicOutputFile: an output that appears complete or not at all.
//
// Every file gpstream writes — datasets, models, checkpoints, predictions —
// is written under a temporary name in the destination's directory
// (.NAME.tmp-XXXXXX), flushed to disk, then renamed to the destination. A
// crash, an error or Ctrl-C at any instant leaves either the previous file
// or nothing, never a torn one.
//
// The temporary file carries an open-file-description lock for as long as
// its writer lives. A temporary file of the same destination whose lock can
// be taken (its writer died: SIGKILL, power loss) is stale, and the next
// AtomicOutputFile for that destination removes it.
//
// Without `overwrite` the rename does not replace: a destination that
// appeared while the result was being computed (another run writing the
// same path) is kept, and so is the result, under a name the error gives.
#pragma once

#include <string>
#include <vector>

namespace gpstream {

// What an AtomicOutputFile does about a destination that exists.
enum class ExistingOutput {
  refuse,  // an error at construction; a file that appears later is not replaced either
  keep,    // not checked at construction (the caller checked before long work): not replaced at commit
  replace  // --force
};

class AtomicOutputFile {
 public:
  // Reserves `path`. Throws if a file cannot be created in its directory, or
  // (ExistingOutput::refuse) if it exists.
  AtomicOutputFile(std::string path, ExistingOutput existing);
  // refuse, or replace when `overwrite`.
  AtomicOutputFile(std::string path, bool overwrite)
      : AtomicOutputFile(std::move(path), overwrite ? ExistingOutput::replace : ExistingOutput::refuse) {}
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
  ExistingOutput existing_;
  int lock_descriptor_ = -1;  // holds the temporary file's lock
  bool committed_ = false;
};

// Removes the stale temporary files of `path` (see above); returns how many.
std::size_t remove_stale_temporary_files(const std::string& path);

// Throws unless a file can be created in `path`'s directory: checked before
// long work, so that a run does not fail at its end on a missing directory.
// `option` names the option the path came from, for the message.
void check_output_directory(const std::string& path, const std::string& option);

// A file a command reads or writes, with what the user knows it as: the
// option it came from ("-o", "--hyper") or its role ("the model's training
// dataset").
struct CommandFile {
  std::string role;
  std::string path;
};

// The no-self-overwrite rule, with --force or without: throws unless every
// file in `writes` differs from every file in `reads` (a model's dataset, a
// hyperparameter file, a checkpoint being resumed, ...) and from every other
// file in `writes`. Files that exist are compared by identity (links
// included), others by their resolved path. Empty paths and "-" (standard
// input or output) are skipped.
void check_distinct_files(const std::vector<CommandFile>& reads, const std::vector<CommandFile>& writes);

// An exclusive claim on a path for the life of the object (a lock on the
// hidden file .NAME.lock beside it), so that two runs cannot use the same
// --checkpoint or -o at once. Throws saying the path is in use.
class PathLock {
 public:
  PathLock(const std::string& path, const std::string& option);
  ~PathLock();
  PathLock(const PathLock&) = delete;
  PathLock& operator=(const PathLock&) = delete;

 private:
  std::string lock_path_;
  int descriptor_ = -1;
};

}  // namespace gpstream

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
//
// What a destination path names is decided once (`OutputTarget`): a
// symbolic link is written through, as the shell's `>` writes through one
// (the file it points to is replaced, the link stays); a character device or
// a FIFO (`-o /dev/null`) is written in place, never replaced, and needs no
// --force since no file is lost; a standard stream (`-`, `/dev/stdout`,
// `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`) is written to its open
// descriptor, whatever it leads to (a file the shell appends to with `>>`
// is appended to, not replaced); a block device, a socket or a directory is
// refused.
//
// Beside a destination NAME this module creates only .NAME.gpstream-tmp-PID-XXXXXX
// (temporary files) and .NAME.gpstream-lock (PathLock), and removes only those.
#pragma once

#include "engine/core/error.h"

#include <string>
#include <vector>

namespace gpstream {

// What an AtomicOutputFile does about a destination that exists.
enum class ExistingOutput {
  refuse,  // an error at construction; a file that appears later is not replaced either
  keep,    // not checked at construction (the caller checked before long work): not replaced at commit
  replace  // --force
};

// The file an output path names, links resolved (see above).
struct OutputTarget {
  enum class Kind {
    absent,   // nothing there yet: created
    regular,  // an existing file: replaced only when the caller may
    in_place  // a character device, a FIFO or a standard stream: written in place, never replaced
  };
  std::string path;  // the file written: `path` itself, or what its links lead to
  Kind kind = Kind::absent;
  int descriptor = -1;  // a standard stream's open descriptor (-, /dev/stdout, /proc/self/fd/N, ...)

  bool exists() const { return kind != Kind::absent; }
  bool in_place() const { return kind == Kind::in_place; }
};

// What `path` names, for an output known as `role` (the option or parameter it came from). Throws
// for a directory, a block device, a socket, or a loop of links.
OutputTarget resolve_output(const std::string& path, const std::string& role);

// An output that exists where the caller did not allow replacing it
// (`overwrite`): Python's FileExistsError.
class OutputExists : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
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

  const std::string& path() const { return name_; }  // as given
  // Where to write the contents; the file exists (empty) from construction on.
  const std::string& temporary_path() const { return temporary_path_; }

  // Flushes the temporary file to disk and renames it to path(). The writer
  // must have closed it first.
  void commit();

 private:
  std::string name_;  // the destination as given, for messages
  std::string path_;  // the destination, links resolved
  std::string temporary_path_;
  ExistingOutput existing_;
  bool in_place_ = false;     // a device or FIFO: its contents are copied in at commit
  int lock_descriptor_ = -1;  // holds the temporary file's lock
  bool committed_ = false;
};

// Removes the stale temporary files of `path` (see above); returns how many.
std::size_t remove_stale_temporary_files(const std::string& path);

// Throws unless a file can be created in `path`'s directory: checked before
// long work, so that a run does not fail at its end on a missing directory.
// `option` names the option the path came from, for the message. A device or
// FIFO passes when it can be opened for writing.
void check_output_directory(const std::string& path, const std::string& option);

// check_output_directory, and the no-clobber rule checked before long work:
// throws when `path` names an existing file and `overwrite` is false
// (devices and FIFOs are written in place and pass).
void check_new_output(const std::string& path, const std::string& option, bool overwrite);

// Whether `a` and `b` name the same file: by identity when both exist (links
// included), else by where the file would be created (links followed, a
// dangling one too). A standard stream or an empty path is no file.
bool same_file(const std::string& a, const std::string& b);

// Whether `path` names a standard stream (-, /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N): written
// to its descriptor, once, at the end of the work (nothing to publish to, resume from or lock).
bool is_standard_stream(const std::string& path);

// A file a command reads or writes, with what the user knows it as: the
// option or parameter it came from, or its role ("the model's training
// dataset").
struct CommandFile {
  std::string role;
  std::string path;
};

// The no-self-overwrite rule, with `overwrite` or without: throws
// InvalidArgument unless every
// file in `writes` differs from every file in `reads` (a model's dataset, a
// hyperparameter file, a checkpoint being resumed, ...) and from every other
// file in `writes`. Files that exist are compared by identity (links
// included), others by their resolved path. Empty paths and "-" (standard
// input or output) are skipped.
void check_distinct_files(const std::vector<CommandFile>& reads, const std::vector<CommandFile>& writes);

// An exclusive claim on a path for the life of the object (a lock on the
// hidden file .NAME.lock beside the file its links lead to), so that two runs
// cannot use the same --checkpoint or -o at once. Throws saying the path is
// in use. A device or FIFO is not claimed: writers of /dev/null do not clash.
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

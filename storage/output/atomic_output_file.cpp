#include "storage/output/atomic_output_file.h"

#include "engine/core/error.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

namespace gpstream {
namespace {

namespace fs = std::filesystem;

std::string system_error_text() { return std::strerror(errno); }

fs::path directory_of(const std::string& path) {
  const fs::path destination(path);
  return destination.has_parent_path() ? destination.parent_path() : fs::path(".");
}

// Our own names beside a destination NAME: .NAME.gpstream-tmp-PID-XXXXXX (a writer's temporary file) and
// .NAME.gpstream-lock (a PathLock); nothing else there is ever removed.
std::string temporary_prefix(const std::string& path) {
  return fmt::format(".{}.gpstream-tmp-", fs::path(path).filename().string());
}

// Whether `name` is one of our temporary files for `prefix`: PID-XXXXXX after it.
bool is_our_temporary(const std::string& name, const std::string& prefix) {
  if (!name.starts_with(prefix)) return false;
  const std::string rest = name.substr(prefix.size());
  const std::size_t dash = rest.find('-');
  if (dash == 0 || dash == std::string::npos || rest.size() != dash + 7) return false;
  return std::all_of(rest.begin(), rest.begin() + static_cast<long>(dash), [](char c) { return c >= '0' && c <= '9'; });
}

// The descriptor a standard-stream name writes to (-, /dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N), or -1. Such an output is written to the descriptor as it is — at its offset, with
// its append flag — never opened again by name (which would write a redirected file from its start) nor
// renamed over (which would replace the file a shell's >> appends to).
int standard_stream_descriptor(const std::string& path) {
  if (path == "-" || path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string_view prefix : {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/")}) {
    if (!path.starts_with(prefix) || path.size() == prefix.size() || path.size() > prefix.size() + 6) continue;
    int descriptor = 0;
    for (const char c : path.substr(prefix.size())) {
      if (c < '0' || c > '9') return -1;
      descriptor = descriptor * 10 + (c - '0');
    }
    return descriptor;
  }
  return -1;
}

// An exclusive open-file-description lock on the whole file, not waiting.
// Unlike fcntl's process locks it survives other descriptors of the same
// file being closed (HDF5 opens and closes its own), and unlike flock it
// does not collide with the flock HDF5 takes on files it writes.
bool try_lock(int descriptor) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  return ::fcntl(descriptor, F_OFD_SETLK, &lock) == 0;
}

// fsync on a path; directories need it too for a rename to be durable.
void sync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) return;  // best effort for the directory: some file systems refuse it
  const int result = ::fsync(fd);
  const int saved_errno = errno;
  ::close(fd);
  errno = saved_errno;
  GPSTREAM_CHECK(result == 0 || directory, "cannot flush '{}' to disk: {}", path, system_error_text());
}

}  // namespace

OutputTarget resolve_output(const std::string& path, const std::string& role) {
  GPSTREAM_CHECK(!path.empty(), "{}: the path is empty", role);
  if (const int descriptor = standard_stream_descriptor(path); descriptor >= 0) {
    GPSTREAM_CHECK(::fcntl(descriptor, F_GETFL) != -1 && (::fcntl(descriptor, F_GETFL) & O_ACCMODE) != O_RDONLY,
                   "{}: '{}' is not open for writing", role, path);
    return {path, OutputTarget::Kind::in_place, descriptor};
  }
  std::error_code error;
  const fs::file_status followed = fs::status(path, error);
  if (fs::exists(followed)) {
    // Opened by its name, a device or FIFO is reached through any link (/dev/stdout's included).
    if (fs::is_character_file(followed) || fs::is_fifo(followed)) return {path, OutputTarget::Kind::in_place};
    GPSTREAM_CHECK(!fs::is_directory(followed), "{}: '{}' is a directory", role, path);
    GPSTREAM_CHECK(fs::is_regular_file(followed),
                   "{}: '{}' is a {}; gpstream writes regular files, and character devices and FIFOs in place", role,
                   path,
                   fs::is_block_file(followed) ? "block device"
                   : fs::is_socket(followed)   ? "socket"
                                               : "special file");
    const fs::path target = fs::canonical(path, error);
    GPSTREAM_CHECK(!error, "{}: cannot resolve '{}': {}", role, path, error.message());
    return {target.string(), OutputTarget::Kind::regular};
  }
  // Nothing there, or a link to nothing: what the links lead to is created, as the shell's > would.
  fs::path target = path;
  for (int depth = 0; fs::is_symlink(fs::symlink_status(target, error)); ++depth) {
    GPSTREAM_CHECK(depth < 40, "{}: '{}': too many levels of symbolic links", role, path);
    const fs::path next = fs::read_symlink(target, error);
    GPSTREAM_CHECK(!error, "{}: cannot read the link '{}': {}", role, target.string(), error.message());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return {target.string(), OutputTarget::Kind::absent};
}

std::size_t remove_stale_temporary_files(const std::string& path) {
  const std::string prefix = temporary_prefix(path);
  std::error_code error;
  std::size_t removed = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory_of(path), error)) {
    const std::string name = entry.path().filename().string();
    if (!is_our_temporary(name, prefix)) continue;
    // A writer locks its file right after creating it: skip files too new to judge.
    const auto age = fs::file_time_type::clock::now() - entry.last_write_time(error);
    if (error || age < std::chrono::seconds(5)) continue;
    const int descriptor = ::open(entry.path().c_str(), O_RDWR | O_CLOEXEC);
    if (descriptor < 0) continue;
    if (try_lock(descriptor) && ::unlink(entry.path().c_str()) == 0) ++removed;
    ::close(descriptor);
  }
  return removed;
}

bool is_standard_stream(const std::string& path) { return standard_stream_descriptor(path) >= 0; }

void check_output_directory(const std::string& path, const std::string& option) {
  const OutputTarget target = resolve_output(path, option);
  if (target.descriptor >= 0) return;  // resolve_output checked that it is open for writing
  if (target.in_place()) {
    GPSTREAM_CHECK(::access(target.path.c_str(), W_OK) == 0, "{}: cannot write '{}': {}", option, path,
                   system_error_text());
    return;
  }
  const fs::path directory = directory_of(target.path);
  std::error_code error;
  GPSTREAM_CHECK(fs::is_directory(directory, error), "{}: cannot write '{}': the directory '{}' does not exist", option,
                 path, directory.string());
  GPSTREAM_CHECK(::access(directory.c_str(), W_OK) == 0, "{}: cannot write '{}': {}", option, path,
                 system_error_text());
}

void check_new_output(const std::string& path, const std::string& option, bool overwrite) {
  check_output_directory(path, option);
  if (!overwrite && resolve_output(path, option).kind == OutputTarget::Kind::regular)
    throw OutputExists(fmt::format("{}: '{}' already exists (use `overwrite` to overwrite it)", option, path));
}

namespace {

bool names_a_file(const std::string& path) { return !path.empty() && standard_stream_descriptor(path) < 0; }

// The path a file is created at when `path` names nothing yet: its links followed, as the shell's > would.
fs::path created_at(const std::string& path) {
  std::error_code error;
  fs::path target = path;
  for (int depth = 0; depth < 40 && fs::is_symlink(fs::symlink_status(target, error)); ++depth) {
    const fs::path next = fs::read_symlink(target, error);
    if (error) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return fs::weakly_canonical(fs::absolute(target), error);
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  if (!names_a_file(a) || !names_a_file(b)) return false;
  std::error_code error;
  if (fs::exists(a, error) && fs::exists(b, error)) return fs::equivalent(a, b, error);
  return created_at(a) == created_at(b);
}

void check_distinct_files(const std::vector<CommandFile>& reads, const std::vector<CommandFile>& writes) {
  for (std::size_t k = 0; k < writes.size(); ++k) {
    const CommandFile& written = writes[k];
    if (!names_a_file(written.path)) continue;
    for (const CommandFile& read : reads) {
      if (names_a_file(read.path) && same_file(written.path, read.path)) {
        throw InvalidArgument(
            fmt::format("{}: '{}' is {} '{}', which this command reads; a command never writes over a file it "
                        "reads, even with `overwrite`",
                        written.role, written.path, read.role, read.path));
      }
    }
    for (std::size_t other = 0; other < k; ++other) {
      if (names_a_file(writes[other].path) && same_file(written.path, writes[other].path)) {
        throw InvalidArgument(
            fmt::format("{} and {} name the same file '{}'", writes[other].role, written.role, written.path));
      }
    }
  }
}

AtomicOutputFile::AtomicOutputFile(std::string path, ExistingOutput existing)
    : name_(std::move(path)), existing_(existing) {
  const OutputTarget target = resolve_output(name_, "output");
  path_ = target.path;
  in_place_ = target.in_place();
  if (existing == ExistingOutput::refuse && target.kind == OutputTarget::Kind::regular)
    throw OutputExists(fmt::format("output '{}' already exists (use `overwrite` to overwrite it)", name_));
  // A device's contents are made beside the other temporary files, not in /dev.
  const std::string directory = in_place_ ? fs::temp_directory_path().string() : directory_of(path_).string();
  const std::string temporary_name = (fs::path(directory) / fs::path(path_).filename()).string();
  remove_stale_temporary_files(temporary_name);

  const std::string pattern =
      (fs::path(directory) / fmt::format("{}{}-XXXXXX", temporary_prefix(temporary_name), ::getpid())).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  GPSTREAM_CHECK(fd >= 0, "cannot write '{}': {}", name_, system_error_text());
  temporary_path_ = name.data();
  if (!try_lock(fd)) {
    ::close(fd);
    std::remove(temporary_path_.c_str());
    GPSTREAM_THROW("cannot lock the temporary file of '{}': {}", name_, system_error_text());
  }
  lock_descriptor_ = fd;
  // mkstemp creates the file 0600; give the result the permissions a plain
  // creat() would (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
}

AtomicOutputFile::~AtomicOutputFile() {
  if (!committed_ || in_place_) std::remove(temporary_path_.c_str());
  if (lock_descriptor_ >= 0) ::close(lock_descriptor_);
}

namespace {

// Copies the file at `from` into the device or FIFO `to`, opened as it is (not created, not truncated), or
// into the standard stream's descriptor itself.
void copy_in_place(const std::string& from, const std::string& to, const std::string& name) {
  const int source = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  GPSTREAM_CHECK(source >= 0, "cannot read '{}': {}", from, system_error_text());
  const int stream = standard_stream_descriptor(to);
  const int destination = stream >= 0 ? ::dup(stream) : ::open(to.c_str(), O_WRONLY | O_CLOEXEC);
  if (destination < 0) {
    const std::string why = system_error_text();
    ::close(source);
    GPSTREAM_THROW("cannot write '{}': {}", name, why);
  }
  char buffer[1 << 16];
  bool written = true;
  for (ssize_t got; written && (got = ::read(source, buffer, sizeof buffer)) > 0;) {
    for (ssize_t done = 0; written && done < got;) {
      const ssize_t put = ::write(destination, buffer + done, static_cast<std::size_t>(got - done));
      written = put > 0;
      done += put;
    }
  }
  const std::string why = written ? std::string() : system_error_text();
  ::close(source);
  const bool closed = ::close(destination) == 0;
  GPSTREAM_CHECK(written && closed, "cannot write '{}': {}", name, written ? system_error_text() : why);
}

}  // namespace

void AtomicOutputFile::commit() {
  GPSTREAM_CHECK(!committed_, "'{}' was already committed", name_);
  if (in_place_) {
    copy_in_place(temporary_path_, path_, name_);
    committed_ = true;
    return;
  }
  sync_path(temporary_path_, false);
  if (existing_ == ExistingOutput::replace) {
    GPSTREAM_CHECK(std::rename(temporary_path_.c_str(), path_.c_str()) == 0, "cannot rename '{}' to '{}': {}",
                   temporary_path_, name_, system_error_text());
  } else if (::renameat2(AT_FDCWD, temporary_path_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE) != 0) {
    GPSTREAM_CHECK(errno == EEXIST, "cannot rename '{}' to '{}': {}", temporary_path_, name_, system_error_text());
    // Someone else wrote the destination meanwhile: keep both, say where ours is.
    const std::string kept = fmt::format("{}.{}", path_, ::getpid());
    if (::renameat2(AT_FDCWD, temporary_path_.c_str(), AT_FDCWD, kept.c_str(), RENAME_NOREPLACE) == 0) {
      committed_ = true;
      GPSTREAM_THROW(
          "output '{}' appeared while this run was working (another run writing it?) and was left as it "
          "is; this run's result is in '{}'",
          name_, kept);
    }
    GPSTREAM_THROW(
        "output '{}' appeared while this run was working (another run writing it?) and was left as it is; "
        "use `overwrite` to replace it",
        name_);
  }
  committed_ = true;
  sync_path(directory_of(path_).string(), true);
}

PathLock::PathLock(const std::string& path, const std::string& option) {
  const OutputTarget target = resolve_output(path, option);
  if (target.in_place()) return;
  lock_path_ =
      (directory_of(target.path) / fmt::format(".{}.gpstream-lock", fs::path(target.path).filename().string())).string();
  for (;;) {
    descriptor_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    GPSTREAM_CHECK(descriptor_ >= 0, "{}: cannot lock '{}': {}", option, path, system_error_text());
    if (!try_lock(descriptor_)) {
      ::close(descriptor_);
      descriptor_ = -1;
      GPSTREAM_THROW("{}: '{}' is in use by another gpstream run; give another path, or wait for that run to end",
                     option, path);
    }
    // The holder before us may have removed the lock file between our open
    // and our lock: then we hold a lock on a file nobody else sees. Retry.
    struct stat opened {
    }, named{};
    if (::fstat(descriptor_, &opened) == 0 && ::stat(lock_path_.c_str(), &named) == 0 &&
        opened.st_ino == named.st_ino && opened.st_dev == named.st_dev) {
      return;
    }
    ::close(descriptor_);
  }
}

PathLock::~PathLock() {
  if (descriptor_ < 0) return;
  ::unlink(lock_path_.c_str());
  ::close(descriptor_);
}

}  // namespace gpstream

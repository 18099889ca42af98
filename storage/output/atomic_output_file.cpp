#include "storage/output/atomic_output_file.h"

#include "engine/core/error.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace gpstream {
namespace {

std::string system_error_text() { return std::strerror(errno); }

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

AtomicOutputFile::AtomicOutputFile(std::string path, bool overwrite) : path_(std::move(path)) {
  GPSTREAM_CHECK(!path_.empty(), "the output path is empty");
  namespace fs = std::filesystem;
  std::error_code ignored;
  const fs::file_status status = fs::status(path_, ignored);
  GPSTREAM_CHECK(!fs::is_directory(status), "output '{}' is a directory", path_);
  GPSTREAM_CHECK(overwrite || !fs::exists(status), "output '{}' already exists (use --force to overwrite it)", path_);

  const fs::path destination(path_);
  const fs::path directory = destination.has_parent_path() ? destination.parent_path() : fs::path(".");
  const std::string pattern = (directory / fmt::format(".{}.tmp-XXXXXX", destination.filename().string())).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  GPSTREAM_CHECK(fd >= 0, "cannot write '{}': {}", path_, system_error_text());
  // mkstemp creates the file 0600; give the result the permissions a plain
  // creat() would (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  temporary_path_ = name.data();
}

AtomicOutputFile::~AtomicOutputFile() {
  if (!committed_) std::remove(temporary_path_.c_str());
}

void AtomicOutputFile::commit() {
  GPSTREAM_CHECK(!committed_, "'{}' was already committed", path_);
  sync_path(temporary_path_, false);
  GPSTREAM_CHECK(std::rename(temporary_path_.c_str(), path_.c_str()) == 0, "cannot rename '{}' to '{}': {}",
                 temporary_path_, path_, system_error_text());
  committed_ = true;
  const std::filesystem::path destination(path_);
  sync_path(destination.has_parent_path() ? destination.parent_path().string() : ".", true);
}

}  // namespace gpstream

#include "storage/scratch/scratch_file.h"

#include "engine/core/error.h"
#include "engine/core/human_readable.h"
#include "engine/core/size_arithmetic.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

namespace gpstream {

ScratchFile::ScratchFile(const std::string& directory, std::uint64_t doubles)
    : directory_(directory), doubles_(doubles) {
  descriptor_ = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (descriptor_ < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string name = directory + "/gpstream-scratch-XXXXXX";
    descriptor_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (descriptor_ >= 0) ::unlink(name.c_str());
  }
  GPSTREAM_CHECK(descriptor_ >= 0, "cannot create a scratch file in '{}': {}", directory, std::strerror(errno));
  const std::uint64_t bytes = checked_multiply(doubles, sizeof(double));
  const int failed = ::posix_fallocate(descriptor_, 0, static_cast<off_t>(bytes));
  if (failed != 0) {
    ::close(descriptor_);
    descriptor_ = -1;
    GPSTREAM_THROW("'{}' has no room for {} of scratch ({}): free some, or point the scratch elsewhere", directory,
                   format_bytes(static_cast<double>(bytes)), std::strerror(failed));
  }
}

ScratchFile::~ScratchFile() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void ScratchFile::write(std::uint64_t offset, std::span<const double> values) {
  GPSTREAM_CHECK(offset + values.size() <= doubles_, "scratch write past its end");
  const char* data = reinterpret_cast<const char*>(values.data());
  std::size_t bytes = values.size() * sizeof(double);
  auto at = static_cast<off_t>(offset * sizeof(double));
  while (bytes > 0) {
    const ssize_t written = ::pwrite(descriptor_, data, bytes, at);
    if (written < 0 && errno == EINTR) continue;
    GPSTREAM_CHECK(written > 0, "writing the scratch file in '{}' failed: {}", directory_, std::strerror(errno));
    data += written;
    bytes -= static_cast<std::size_t>(written);
    at += written;
  }
}

void ScratchFile::read(std::uint64_t offset, std::span<double> values) {
  GPSTREAM_CHECK(offset + values.size() <= doubles_, "scratch read past its end");
  char* data = reinterpret_cast<char*>(values.data());
  std::size_t bytes = values.size() * sizeof(double);
  auto at = static_cast<off_t>(offset * sizeof(double));
  while (bytes > 0) {
    const ssize_t got = ::pread(descriptor_, data, bytes, at);
    if (got < 0 && errno == EINTR) continue;
    GPSTREAM_CHECK(got > 0, "reading the scratch file in '{}' failed: {}", directory_,
                   got == 0 ? "it ended early" : std::strerror(errno));
    data += got;
    bytes -= static_cast<std::size_t>(got);
    at += got;
  }
}

ScratchOpener scratch_files_in(std::string directory) {
  return [directory = std::move(directory)](std::uint64_t doubles) -> std::unique_ptr<ScratchStore> {
    return std::make_unique<ScratchFile>(directory, doubles);
  };
}

ScratchRoom scratch_room_in(std::string directory) {
  return [directory = std::move(directory)]() -> std::uint64_t {
    std::error_code error;
    const std::filesystem::space_info space = std::filesystem::space(directory, error);
    return error ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(space.available);
  };
}

}  // namespace gpstream

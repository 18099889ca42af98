#include "storage/csv/csv_tokenizer.h"

#include "engine/core/error.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpstream {
namespace {

constexpr std::size_t kInitialBufferBytes = 1u << 20;
constexpr std::size_t kMaxLineBytes = 64u << 20;  // keeps memory bounded on a file with no line breaks

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view text, char delimiter) {
  std::size_t first = 0;
  std::size_t last = text.size();
  while (first < last && is_blank(text[first]) && text[first] != delimiter) ++first;
  while (last > first && is_blank(text[last - 1]) && text[last - 1] != delimiter) --last;
  return text.substr(first, last - first);
}

}  // namespace

bool is_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    char32_t code = 0;
    if (byte < 0x80) {
      ++i;
      continue;
    } else if (byte >= 0xC2 && byte <= 0xDF) {
      length = 2, code = byte & 0x1Fu;
    } else if (byte >= 0xE0 && byte <= 0xEF) {
      length = 3, code = byte & 0x0Fu;
    } else if (byte >= 0xF0 && byte <= 0xF4) {
      length = 4, code = byte & 0x07u;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0u) != 0x80u) return false;
      code = (code << 6) | (next & 0x3Fu);
    }
    const char32_t smallest = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
    if (code < smallest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

CsvTokenizer::CsvTokenizer(const std::string& path, char delimiter)
    : name_(path == "-" ? "<stdin>" : path), delimiter_(delimiter), buffer_(kInitialBufferBytes) {
  GPSTREAM_CHECK(delimiter != '"' && delimiter != '\n' && delimiter != '\r', "`delimiter`: '{}' cannot separate fields",
                 delimiter);
  if (path == "-") {
    fd_ = STDIN_FILENO;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    GPSTREAM_CHECK(fd_ >= 0, "cannot read '{}': {}", path, std::strerror(errno));
    owns_fd_ = true;
    struct stat status {};
    if (::fstat(fd_, &status) == 0 && S_ISREG(status.st_mode)) size_bytes_ = static_cast<std::uint64_t>(status.st_size);
    GPSTREAM_CHECK(!S_ISDIR(status.st_mode), "'{}' is a directory, not a CSV file", path);
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
}

CsvTokenizer::~CsvTokenizer() {
  if (owns_fd_) ::close(fd_);
}

bool CsvTokenizer::refill() {
  if (end_of_input_) return false;
  // Keep the unconsumed tail (a partial line) at the front of the buffer.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) {
    GPSTREAM_CHECK(buffer_.size() < kMaxLineBytes, "{}:{}: line is longer than {} MiB (is this a CSV file?)", name_,
                   line_number_ + 1, kMaxLineBytes >> 20);
    buffer_.resize(buffer_.size() * 2);
  }
  for (;;) {
    const ssize_t got = ::read(fd_, buffer_.data() + end_, buffer_.size() - end_);
    if (got < 0 && errno == EINTR) continue;
    GPSTREAM_CHECK(got >= 0, "cannot read '{}': {}", name_, std::strerror(errno));
    if (got == 0) end_of_input_ = true;
    end_ += static_cast<std::size_t>(got);
    return got > 0;
  }
}

bool CsvTokenizer::next(std::vector<std::string_view>& fields) {
  fields.clear();
  if (line_end_ == 0) {
    // Lines end at '\n', unless the first '\r' comes before any '\n' and is not followed by one.
    if (begin_ == end_) refill();
    const char* start = buffer_.data() + begin_;
    const auto* return_at = static_cast<const char*>(std::memchr(start, '\r', end_ - begin_));
    const auto* newline_at = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
    const bool classic = return_at != nullptr && (newline_at == nullptr || return_at < newline_at) &&
                         return_at + 1 < buffer_.data() + end_ && return_at[1] != '\n';
    line_end_ = classic ? '\r' : '\n';
  }
  for (;;) {
    const char* start = buffer_.data() + begin_;
    const void* newline = std::memchr(start, line_end_, end_ - begin_);
    std::size_t length = 0;
    std::size_t consumed = 0;
    if (newline != nullptr) {
      length = static_cast<std::size_t>(static_cast<const char*>(newline) - start);
      consumed = length + 1;
    } else if (!refill()) {
      if (begin_ == end_) return false;
      length = consumed = end_ - begin_;  // last line without a line break
      start = buffer_.data() + begin_;
    } else {
      continue;
    }
    begin_ += consumed;
    bytes_consumed_ += consumed;
    ++line_number_;

    std::string_view line(start, length);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_number_ == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    if (line_number_ == 1 && line.starts_with("\x89HDF")) {
      GPSTREAM_THROW(
          "{}: an HDF5 file (a gpstream dataset or model?), not CSV text; a dataset needs no conversion: train, "
          "predict and info read it as it is",
          name_);
    }
    if (line_number_ == 1 && (line.starts_with("\xFF\xFE") || line.starts_with("\xFE\xFF"))) {
      GPSTREAM_THROW(
          "{}: the file is UTF-16 text, which is not supported; convert it to UTF-8 (for example with "
          "iconv -f UTF-16 -t UTF-8)",
          name_);
    }
    // A NUL byte would cut every message that quotes the line short, and no
    // text CSV holds one: UTF-16 without a byte-order mark, or a binary file.
    if (const std::size_t nul = line.find('\0'); nul != std::string_view::npos) {
      GPSTREAM_THROW(
          "{}:{}:{}: a NUL byte: this is not UTF-8 text (a UTF-16 file, which is not supported, or a binary "
          "file); convert it to UTF-8",
          name_, line_number_, nul + 1);
    }
    if (line.empty()) continue;
    line_ = line;

    if (line.find('"') != std::string_view::npos) {
      split_quoted(line, fields);
      return true;
    }
    for (;;) {
      const void* found = std::memchr(line.data(), delimiter_, line.size());
      if (found == nullptr) {
        fields.push_back(trim(line, delimiter_));
        return true;
      }
      const std::size_t field_length = static_cast<std::size_t>(static_cast<const char*>(found) - line.data());
      fields.push_back(trim(line.substr(0, field_length), delimiter_));
      line.remove_prefix(field_length + 1);
    }
  }
}

void CsvTokenizer::split_quoted(std::string_view line, std::vector<std::string_view>& fields) {
  // Unquoted text never outgrows the line, so views into unquoted_ stay valid.
  unquoted_.clear();
  unquoted_.reserve(line.size());
  std::size_t position = 0;
  for (;;) {
    std::size_t field_start = position;
    while (field_start < line.size() && is_blank(line[field_start]) && line[field_start] != delimiter_) ++field_start;
    if (field_start < line.size() && line[field_start] == '"') {
      const std::size_t text_start = unquoted_.size();
      std::size_t cursor = field_start + 1;
      for (;;) {
        GPSTREAM_CHECK(cursor < line.size(),
                       "{}:{}:{}: quoted field is not closed (line breaks inside quotes are not supported): {}", name_,
                       line_number_, fields.size() + 1, line.substr(field_start, 60));
        if (line[cursor] == '"') {
          if (cursor + 1 < line.size() && line[cursor + 1] == '"') {
            unquoted_.push_back('"');
            cursor += 2;
            continue;
          }
          ++cursor;
          break;
        }
        unquoted_.push_back(line[cursor++]);
      }
      while (cursor < line.size() && is_blank(line[cursor]) && line[cursor] != delimiter_) ++cursor;
      GPSTREAM_CHECK(cursor == line.size() || line[cursor] == delimiter_,
                     "{}:{}:{}: unexpected text after a closing quote: {}", name_, line_number_, fields.size() + 1,
                     line.substr(field_start, 60));
      fields.emplace_back(unquoted_.data() + text_start, unquoted_.size() - text_start);
      if (cursor == line.size()) return;
      position = cursor + 1;
    } else {
      const std::size_t delimiter_at = line.find(delimiter_, position);
      const std::size_t field_end = delimiter_at == std::string_view::npos ? line.size() : delimiter_at;
      fields.push_back(trim(line.substr(position, field_end - position), delimiter_));
      if (delimiter_at == std::string_view::npos) return;
      position = delimiter_at + 1;
    }
  }
}

}  // namespace gpstream

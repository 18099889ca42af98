#include "storage/csv/csv_writer.h"

#include "engine/core/error.h"

#include <charconv>
#include <cerrno>
#include <cstring>

namespace gpstream {

CsvWriter::CsvWriter(const std::string& path, const std::vector<std::string>& header, bool overwrite)
    : name_(path == "-" ? "<stdout>" : path) {
  if (path == "-") {
    stream_ = stdout;
  } else {
    output_ = std::make_unique<AtomicOutputFile>(path, overwrite);
    stream_ = std::fopen(output_->temporary_path().c_str(), "wb");
    GPSTREAM_CHECK(stream_ != nullptr, "cannot write '{}': {}", path, std::strerror(errno));
  }
  std::string text;
  for (std::size_t k = 0; k < header.size(); ++k) text += (k == 0 ? "" : ",") + header[k];
  text += '\n';
  write_text(text.data(), text.size());
}

CsvWriter::~CsvWriter() {
  if (stream_ != nullptr && stream_ != stdout) std::fclose(stream_);
}

void CsvWriter::write_text(const char* text, std::size_t length) {
  GPSTREAM_CHECK(std::fwrite(text, 1, length, stream_) == length, "cannot write '{}': {}", name_, std::strerror(errno));
}

void CsvWriter::write_row(std::span<const double> values, std::size_t blank_fields) {
  constexpr std::size_t kMaxDoubleChars = 32;
  line_.resize(values.size() * kMaxDoubleChars + blank_fields + 1);
  char* cursor = line_.data();
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k > 0) *cursor++ = ',';
    cursor = std::to_chars(cursor, line_.data() + line_.size(), values[k]).ptr;
  }
  for (std::size_t k = 0; k < blank_fields; ++k) *cursor++ = ',';
  *cursor++ = '\n';
  write_text(line_.data(), static_cast<std::size_t>(cursor - line_.data()));
}

void CsvWriter::flush() {
  GPSTREAM_CHECK(std::fflush(stream_) == 0, "cannot write '{}': {}", name_, std::strerror(errno));
}

void CsvWriter::finish() {
  if (stream_ == stdout) {
    GPSTREAM_CHECK(std::fflush(stdout) == 0, "cannot write to standard output: {}", std::strerror(errno));
    return;
  }
  const int status = std::fclose(stream_);
  stream_ = nullptr;
  GPSTREAM_CHECK(status == 0, "cannot write '{}': {}", name_, std::strerror(errno));
  output_->commit();
}

}  // namespace gpstream

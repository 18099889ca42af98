// CsvTokenizer: splits a delimited text file into records of fields, reading
// it in fixed-size buffers so memory stays constant whatever the file size.
//
// Accepts LF, CRLF and CR (classic Mac) line ends, a UTF-8 byte-order mark, blank lines
// (skipped), spaces around fields, and RFC 4180 quoted fields ("a,b",
// "say ""hi"""), except line breaks inside quotes, which numeric data
// never needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpstream {

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_utf8(std::string_view text);

class CsvTokenizer {
 public:
  // `path` "-" reads standard input.
  CsvTokenizer(const std::string& path, char delimiter);
  ~CsvTokenizer();
  CsvTokenizer(const CsvTokenizer&) = delete;
  CsvTokenizer& operator=(const CsvTokenizer&) = delete;

  // Reads the next non-blank record into `fields` (views valid until the next
  // call). Returns false at the end of the input.
  bool next(std::vector<std::string_view>& fields);

  // How the input is named in messages: the path, or "<stdin>".
  const std::string& name() const { return name_; }
  // 1-based line number of the record last returned.
  std::uint64_t line_number() const { return line_number_; }
  // The raw text of the record last returned (without its line end).
  std::string_view line() const { return line_; }
  std::uint64_t bytes_consumed() const { return bytes_consumed_; }
  // The input's size when it is a regular file.
  std::optional<std::uint64_t> size_bytes() const { return size_bytes_; }

 private:
  bool refill();
  void split_quoted(std::string_view line, std::vector<std::string_view>& fields);

  std::string name_;
  char delimiter_;
  int fd_ = -1;
  bool owns_fd_ = false;
  bool end_of_input_ = false;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;  // first unconsumed byte
  std::size_t end_ = 0;    // one past the last byte read
  std::uint64_t line_number_ = 0;
  std::uint64_t bytes_consumed_ = 0;
  std::optional<std::uint64_t> size_bytes_;
  std::string_view line_;
  std::string unquoted_;  // storage for fields whose quotes were removed
  // What ends a line: '\n' (a "\r\n" loses its '\r'), or '\r' in a file of classic Mac line ends, decided
  // on the first line; 0 until then.
  char line_end_ = 0;
};

}  // namespace gpstream

// CsvWriter: writes rows of numbers as CSV, each value in the shortest form
// that reads back to the identical double (std::to_chars), atomically.
#pragma once

#include "storage/output/atomic_output_file.h"

#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gpstream {

class CsvWriter {
 public:
  // `path` "-" writes to standard output (not atomic: a stream cannot be renamed).
  CsvWriter(const std::string& path, const std::vector<std::string>& header, bool overwrite);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  // `values`, then `blank_fields` empty fields (a value not computed: the
  // variance of a row a stopped run did not reach).
  void write_row(std::span<const double> values, std::size_t blank_fields = 0);
  // Writes what is buffered to the file (still under its temporary name).
  void flush();
  // Flushes, closes and renames the file into place.
  void finish();

 private:
  void write_text(const char* text, std::size_t length);

  std::unique_ptr<AtomicOutputFile> output_;
  std::FILE* stream_ = nullptr;
  std::vector<char> line_;
  std::string name_;
};

}  // namespace gpstream

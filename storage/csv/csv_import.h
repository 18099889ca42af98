// import_csv: converts a CSV file into a gpstream dataset in one streaming
// pass with constant memory (see storage/dataset/dataset_format.h).
#pragma once

#include "engine/core/stop_flag.h"
#include "storage/dataset/dataset_writer.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpstream {

enum class HeaderMode { detect, present, absent };

struct CsvImportOptions {
  char delimiter = ',';
  // detect: the first line is a header when one of its fields is not a number.
  HeaderMode header = HeaderMode::detect;
  // Column name or 1-based column number; empty: the last column.
  std::string target;
  // Input columns by name or 1-based number, in the order wanted; empty:
  // every column but the target. Other columns are not parsed at all.
  std::vector<std::string> inputs;
  // Skip rows with an empty, NaN, infinite or out-of-range value in a used
  // column instead of failing. Text that is not a number is always an error.
  bool drop_invalid = false;
};

struct CsvImportProgress {
  std::uint64_t bytes = 0;
  std::optional<std::uint64_t> total_bytes;
  std::size_t rows = 0;
};

struct CsvImportResult {
  DatasetDescription dataset;
  bool had_header = false;
  std::size_t rows_dropped = 0;
  std::uint64_t bytes_read = 0;
};

// Column names of a file without a header: "col1", "col2", ...
std::string unnamed_column(std::size_t number);

// Reads `csv_path` ("-" for standard input) and writes `output_path`. Errors
// name the file, line and column and quote the offending text; on any error,
// and when `stop` is requested (throws Cancelled), no output file is left.
// `progress` is called every few tens of thousands of rows.
CsvImportResult import_csv(const std::string& csv_path, const std::string& output_path, const CsvImportOptions& options,
                           const DatasetWriterOptions& writer_options,
                           const std::function<void(const CsvImportProgress&)>& progress = {},
                           const StopFlag* stop = nullptr);

}  // namespace gpstream

#include "storage/csv/csv_import.h"

#include "engine/core/error.h"
#include "storage/csv/csv_number.h"
#include "storage/csv/csv_tokenizer.h"

#include <fmt/format.h>

#include <charconv>
#include <unordered_map>

namespace gpstream {
namespace {

std::string list_names(const std::vector<std::string>& names) {
  constexpr std::size_t kMax = 12;
  std::string list;
  for (std::size_t i = 0; i < names.size() && i < kMax; ++i) list += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kMax) list += fmt::format(", ... ({} in all)", names.size());
  return list;
}

// A name, or a 1-based column number when no column has that name.
std::size_t resolve_column(const std::string& spec, const std::vector<std::string>& names, const char* option,
                           const std::string& file) {
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (names[k] == spec) return k;
  }
  std::size_t number = 0;
  const auto [end, error] = std::from_chars(spec.data(), spec.data() + spec.size(), number);
  if (error == std::errc() && end == spec.data() + spec.size() && !spec.empty()) {
    GPSTREAM_CHECK(number >= 1 && number <= names.size(),
                   "{}: column {} does not exist; {} has {} columns (numbered from 1)", option, number, file,
                   names.size());
    return number - 1;
  }
  GPSTREAM_THROW("{}: no column named \"{}\" in {} (columns: {})", option, spec, file, list_names(names));
}

// The input columns: `columns` in their order, else every column but the target.
std::vector<std::size_t> input_columns(const CsvImportOptions& options, const std::vector<std::string>& names,
                                       std::size_t target, const std::string& file) {
  std::vector<std::size_t> inputs;
  if (options.inputs.empty()) {
    for (std::size_t k = 0; k < names.size(); ++k) {
      if (k != target) inputs.push_back(k);
    }
  } else {
    for (const std::string& spec : options.inputs) {
      const std::size_t column = resolve_column(spec, names, "`columns`", file);
      GPSTREAM_CHECK(column != target, "`columns`: column {} is the target; it cannot also be an input",
                     quoted(names[column]));
      for (const std::size_t chosen : inputs) {
        GPSTREAM_CHECK(chosen != column, "`columns`: column {} is listed twice", quoted(names[column]));
      }
      inputs.push_back(column);
    }
  }
  return inputs;
}

}  // namespace

std::string unnamed_column(std::size_t number) { return fmt::format("col{}", number); }

CsvImportResult import_csv(const std::string& csv_path, const std::string& output_path, const CsvImportOptions& options,
                           const DatasetWriterOptions& writer_options,
                           const std::function<void(const CsvImportProgress&)>& progress, const StopFlag* stop) {
  CsvTokenizer csv(csv_path, options.delimiter);
  const std::string& file = csv.name();
  std::vector<std::string_view> fields;
  GPSTREAM_CHECK(csv.next(fields), "{}: the file is empty", file);
  const std::size_t field_count = fields.size();

  // Header: explicit, or detected as a first line with a field that is not a number (nor a missing-value marker).
  bool has_header = options.header == HeaderMode::present;
  if (options.header == HeaderMode::detect) {
    for (const std::string_view field : fields) {
      double ignored = 0;
      if (parse_number(field, ignored) == FieldKind::not_a_number) has_header = true;
    }
  }
  std::vector<std::string> names(field_count);
  std::unordered_map<std::string, std::size_t> first_seen;
  for (std::size_t k = 0; k < field_count; ++k) {
    names[k] = has_header && !fields[k].empty() ? std::string(fields[k]) : unnamed_column(k + 1);
    // A name is stored as UTF-8 text (HDF5, JSON, Python read it so): another encoding would be garbled there.
    GPSTREAM_CHECK(is_utf8(names[k]),
                   "{}:{}:{}: the column name is not UTF-8 text (a Latin-1 or Windows-1252 file?); convert the file "
                   "to UTF-8 (for example with iconv -f LATIN1 -t UTF-8)",
                   file, csv.line_number(), k + 1);
    const auto [where, inserted] = first_seen.emplace(names[k], k);
    GPSTREAM_CHECK(inserted, "{}:{}:{}: duplicate column name {} (also column {})", file, csv.line_number(), k + 1,
                   quoted(names[k]), where->second + 1);
  }

  const std::size_t target =
      options.target.empty() ? field_count - 1 : resolve_column(options.target, names, "`target`", file);
  const std::vector<std::size_t> inputs = input_columns(options, names, target, file);
  GPSTREAM_CHECK(!inputs.empty(), "{}: no input columns: the file has only the target column {}", file,
                 quoted(names[target]));

  std::vector<std::string> feature_names;
  for (const std::size_t column : inputs) feature_names.push_back(names[column]);
  DatasetWriterOptions output_options = writer_options;
  if (output_options.source.empty()) output_options.source = "csv " + file;
  DatasetWriter writer(output_path, feature_names, names[target], output_options);

  CsvImportResult result;
  result.had_header = has_header;
  if (has_header) GPSTREAM_CHECK(csv.next(fields), "{}: the file has a header line but no data rows", file);

  std::vector<double> x(inputs.size());
  constexpr std::size_t kProgressEvery = 1u << 15;
  std::size_t rows_seen = 0;
  do {
    if (fields.size() != field_count) {
      GPSTREAM_THROW("{}:{}:{}: expected {} fields but found {}: {}", file, csv.line_number(),
                     std::min(fields.size(), field_count) + 1, field_count, fields.size(), quoted(csv.line()));
    }
    bool valid = true;
    // The target is parsed last so that x holds all inputs when it is checked.
    for (std::size_t j = 0; j <= inputs.size() && valid; ++j) {
      const std::size_t column = j < inputs.size() ? inputs[j] : target;
      double value = 0;
      switch (parse_number(fields[column], value)) {
        case FieldKind::number:
          if (j < inputs.size())
            x[j] = value;
          else
            writer.append_row(x.data(), value);
          break;
        case FieldKind::not_a_number:
          GPSTREAM_THROW("{}:{}:{}: column {}: {} is not a number", file, csv.line_number(), column + 1,
                         quoted(names[column]), quoted(fields[column]));
        case FieldKind::empty:
        case FieldKind::missing:
        case FieldKind::non_finite:
        case FieldKind::underflow:
          GPSTREAM_CHECK(options.drop_invalid, "{}:{}:{}: column {}: {} (use `drop_invalid` to skip such rows)",
                         file, csv.line_number(), column + 1, quoted(names[column]),
                         describe_field(parse_number(fields[column], value), fields[column]));
          valid = false;
          ++result.rows_dropped;
          break;
      }
    }
    if (++rows_seen % kProgressEvery == 0) {
      if (stop != nullptr && stop->requested()) throw Cancelled(fmt::format("conversion of {} interrupted", file));
      if (progress) progress({csv.bytes_consumed(), csv.size_bytes(), writer.rows_written()});
    }
  } while (csv.next(fields));

  GPSTREAM_CHECK(writer.rows_written() > 0, "{}: no valid data rows ({} dropped by `drop_invalid`)", file,
                 result.rows_dropped);
  result.bytes_read = csv.bytes_consumed();
  if (progress) progress({csv.bytes_consumed(), csv.size_bytes(), writer.rows_written()});
  result.dataset = writer.finish();
  return result;
}

}  // namespace gpstream

#include "storage/csv/csv_table.h"

#include "engine/core/error.h"
#include "storage/csv/csv_number.h"
#include "storage/csv/csv_tokenizer.h"

#include <algorithm>

namespace gpstream {

CsvInputs read_csv_inputs(const std::string& path, const std::vector<std::string>& feature_names,
                          const std::string& target_name, char delimiter) {
  CsvTokenizer csv(path, delimiter);
  const std::string& file = csv.name();
  std::vector<std::string_view> fields;
  GPSTREAM_CHECK(csv.next(fields), "{}: the file is empty", file);
  const std::size_t d = feature_names.size();
  const std::size_t field_count = fields.size();

  bool header = false;
  for (const std::string_view field : fields) {
    double ignored = 0;
    if (parse_number(field, ignored) == FieldKind::not_a_number) header = true;
  }
  std::vector<std::size_t> columns(d);  // CSV column of each input
  std::optional<std::size_t> target_column;
  if (header) {
    for (std::size_t j = 0; j < d; ++j) {
      const auto found = std::find(fields.begin(), fields.end(), feature_names[j]);
      GPSTREAM_CHECK(found != fields.end(), "{}: no column named {}, which the model needs as an input", file,
                     quoted(feature_names[j]));
      columns[j] = static_cast<std::size_t>(found - fields.begin());
    }
    const auto found = std::find(fields.begin(), fields.end(), target_name);
    if (found != fields.end()) target_column = static_cast<std::size_t>(found - fields.begin());
    GPSTREAM_CHECK(csv.next(fields), "{}: the file has a header line but no data rows", file);
  } else {
    GPSTREAM_CHECK(field_count == d || field_count == d + 1,
                   "{}: the model takes {} inputs, but the file has {} columns and no header to pick them by name",
                   file, d, field_count);
    for (std::size_t j = 0; j < d; ++j) columns[j] = j;
    if (field_count == d + 1) target_column = d;
  }

  CsvInputs inputs;
  if (target_column) inputs.y.emplace();
  do {
    GPSTREAM_CHECK(fields.size() == field_count, "{}:{}:{}: expected {} fields but found {}: {}", file,
                   csv.line_number(), std::min(fields.size(), field_count) + 1, field_count, fields.size(),
                   quoted(csv.line()));
    auto read = [&](std::size_t column) {
      double value = 0;
      const FieldKind kind = parse_number(fields[column], value);
      GPSTREAM_CHECK(kind == FieldKind::number, "{}:{}:{}: {}", file, csv.line_number(), column + 1,
                     kind == FieldKind::underflow ? describe_field(kind, fields[column])
                                                  : quoted(fields[column]) + " is not a finite number");
      return value;
    };
    for (const std::size_t column : columns) inputs.x.push_back(read(column));
    if (target_column) inputs.y->push_back(read(*target_column));
    ++inputs.rows;
  } while (csv.next(fields));
  return inputs;
}

}  // namespace gpstream

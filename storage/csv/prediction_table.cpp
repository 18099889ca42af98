#include "storage/csv/prediction_table.h"

#include "engine/core/error.h"
#include "storage/csv/csv_number.h"
#include "storage/csv/csv_tokenizer.h"

#include <string_view>

namespace gpstream {

PredictionTable read_prediction_table(const std::string& path) {
  CsvTokenizer tokenizer(path, ',');
  std::vector<std::string_view> fields;
  GPSTREAM_CHECK(tokenizer.next(fields), "'{}' is empty, not predictions from gpstream predict", path);
  PredictionTable table;
  table.has_variance_columns =
      fields.size() == 3 && fields[0] == "mean" && fields[1] == "variance" && fields[2] == "std";
  GPSTREAM_CHECK(table.has_variance_columns || (fields.size() == 1 && fields[0] == "mean"),
                 "{}:{}: the header {} is not that of gpstream predict (mean[,variance,std])", tokenizer.name(),
                 tokenizer.line_number(), quoted(tokenizer.line()));
  const std::size_t columns = fields.size();
  while (tokenizer.next(fields)) {
    GPSTREAM_CHECK(fields.size() == columns, "{}:{}: {} fields where the header has {}", tokenizer.name(),
                   tokenizer.line_number(), fields.size(), columns);
    double values[3] = {0, 0, 0};
    bool present[3] = {false, false, false};
    for (std::size_t k = 0; k < columns; ++k) {
      const FieldKind kind = parse_number(fields[k], values[k]);
      GPSTREAM_CHECK(kind == FieldKind::number || (kind == FieldKind::empty && k > 0),
                     "{}:{}: column {} ({}) is {}, not a finite number", tokenizer.name(), tokenizer.line_number(),
                     k + 1,
                     k == 0   ? "mean"
                     : k == 1 ? "variance"
                              : "std",
                     quoted(fields[k]));
      present[k] = kind == FieldKind::number;
    }
    table.mean.push_back(values[0]);
    if (columns == 1) continue;
    GPSTREAM_CHECK(present[1] == present[2], "{}:{}: a variance without its std, or the reverse", tokenizer.name(),
                   tokenizer.line_number());
    if (!present[1]) continue;
    GPSTREAM_CHECK(table.variance.size() + 1 == table.mean.size(),
                   "{}:{}: a variance after rows without one: predict writes them in order", tokenizer.name(),
                   tokenizer.line_number());
    table.variance.push_back(values[1]);
  }
  return table;
}

}  // namespace gpstream

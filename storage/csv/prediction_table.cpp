#include "storage/csv/prediction_table.h"

#include "engine/core/error.h"
#include "storage/csv/csv_number.h"
#include "storage/csv/csv_tokenizer.h"

#include <algorithm>
#include <string_view>

namespace gpstream {

std::vector<std::string> prediction_header(bool with_variance, bool latent) {
  if (!with_variance) return {"mean"};
  if (latent) return {"mean", "latent_variance", "latent_std"};
  return {"mean", "variance", "std"};
}

PredictionTable read_prediction_table(const std::string& path) {
  CsvTokenizer tokenizer(path, ',');
  std::vector<std::string_view> fields;
  GPSTREAM_CHECK(tokenizer.next(fields), "'{}' is empty, not predictions from gpstream predict", path);
  PredictionTable table;
  const auto header_is = [&](const std::vector<std::string>& header) {
    return std::equal(fields.begin(), fields.end(), header.begin(), header.end());
  };
  table.latent = header_is(prediction_header(true, true));
  table.has_variance_columns = table.latent || header_is(prediction_header(true, false));
  GPSTREAM_CHECK(table.has_variance_columns || header_is(prediction_header(false, false)),
                 "{}:{}: the header {} is not that of gpstream predict (mean[,variance,std] or "
                 "mean,latent_variance,latent_std)",
                 tokenizer.name(), tokenizer.line_number(), quoted(tokenizer.line()));
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

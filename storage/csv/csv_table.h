// Reads test inputs (and targets, when present) from a CSV file into memory,
// picking columns by the names a model was trained with.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpstream {

struct CsvInputs {
  std::size_t rows = 0;
  std::vector<double> x;                 // rows×d, in the order of the feature names
  std::optional<std::vector<double>> y;  // when the target column is present
};

// With a header, the columns named `feature_names` (and `target_name` if
// present) are read, in any order. Without one, the file must have d columns
// (inputs) or d + 1 (inputs, then the target). Errors name file, line and column.
CsvInputs read_csv_inputs(const std::string& path, const std::vector<std::string>& feature_names,
                          const std::string& target_name, char delimiter = ',');

}  // namespace gpstream

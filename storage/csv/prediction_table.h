// Reads back a predictions CSV as `gpstream predict` writes it (mean, or
// mean,variance,std), for `predict --resume`: a variance run that stopped
// leaves the variance and std of the rows it did not reach empty.
#pragma once

#include <string>
#include <vector>

namespace gpstream {

struct PredictionTable {
  std::vector<double> mean;      // every row
  std::vector<double> variance;  // the leading rows that have one
  bool has_variance_columns = false;
};

// Errors name the file, line and column: a header other than predict's, a
// field that is not a finite number, a variance after a row without one.
PredictionTable read_prediction_table(const std::string& path);

}  // namespace gpstream

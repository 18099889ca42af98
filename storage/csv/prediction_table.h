// Reads back a predictions CSV as `gpstream predict` writes it (mean;
// mean,variance,std for y*; mean,latent_variance,latent_std for f* with
// --latent), for `predict --resume`: a variance run that stopped leaves the
// variance and std of the rows it did not reach empty.
#pragma once

#include <string>
#include <vector>

namespace gpstream {

struct PredictionTable {
  std::vector<double> mean;      // every row
  std::vector<double> variance;  // the leading rows that have one
  bool has_variance_columns = false;
  bool latent = false;  // the variances are of f* (the latent_ header)
};

// The header predict writes: mean, and with variances those of y* or of f*.
std::vector<std::string> prediction_header(bool with_variance, bool latent);

// Errors name the file, line and column: a header other than predict's, a
// field that is not a finite number, a variance after a row without one.
PredictionTable read_prediction_table(const std::string& path);

}  // namespace gpstream

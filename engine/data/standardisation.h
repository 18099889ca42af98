// Standardisation of inputs and targets: x' = (x − mean) / std per column,
// y' = (y − y_mean) / y_std, as the GBCD paper §3 prescribes ("each attribute
// of the training inputs and outputs are linearly scaled to zero mean and
// unit variance and the same transformation is used for the test set").
// Models record the transformation, so predictions come back in the target's
// original units. It is affine and nothing else: the prior mean m(x) the GP
// adds to the standardised target belongs to the prior
// (engine/kernels/gaussian_process_prior.h), which is learned, where these
// statistics are the dataset's.
#pragma once

#include "engine/data/mean_function.h"
#include "engine/data/row_source.h"

#include <string>
#include <vector>

namespace gpstream {

struct Standardisation {
  std::vector<double> x_mean;  // empty: inputs are used as they are
  std::vector<double> x_std;
  double y_mean = 0.0;
  double y_std = 1.0;

  bool standardises_inputs() const { return !x_mean.empty(); }
  // Throws InvalidArgument, naming `source` (the dataset or model it came from) and the
  // column, unless every statistic is finite and the targets' variance y_std²
  // is positive and finite: targets whose squares overflow a double (|y| ≳
  // 1e154) would turn every prediction into NaN, and constant targets leave
  // nothing to learn (a test set's may be constant: `constant_target_allowed`).
  void validate(const std::string& source, const std::vector<std::string>& feature_names = {},
                const std::string& target_name = "y", bool constant_target_allowed = false) const;
  // The identity transformation for d inputs.
  static Standardisation identity();
  // Columns with zero spread keep their scale (std treated as 1).
  void apply_to_rows(double* x, std::size_t rows, std::size_t columns) const;
  void apply_to_targets(double* y, std::size_t count) const;
  double restore_target(double standardised) const { return standardised * y_std + y_mean; }
};

// A RowSource that standardises the rows and targets of another on the fly
// and, given a prior mean m (with its coefficients), takes it off the
// targets: y' = (y − y_mean)/y_std − m(x'), the residual the GP models.
class StandardisedRowSource final : public TransformedRowSource {
 public:
  StandardisedRowSource(RowSource& inner, Standardisation standardisation, MeanFunction mean = {});

 private:
  void transform(double* x, double* y, std::size_t count) const override;
  Standardisation standardisation_;
  MeanFunction mean_;
};

}  // namespace gpstream

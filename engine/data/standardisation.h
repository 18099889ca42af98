// Standardisation of inputs and targets: x' = (x − mean) / std per column,
// y' = (y − y_mean) / y_std, as the GBCD paper §3 prescribes ("each attribute
// of the training inputs and outputs are linearly scaled to zero mean and
// unit variance and the same transformation is used for the test set").
// Models record the transformation, so predictions come back in the target's
// original units.
#pragma once

#include "engine/data/row_source.h"

#include <vector>

namespace gpstream {

struct Standardisation {
  std::vector<double> x_mean;  // empty: inputs are used as they are
  std::vector<double> x_std;
  double y_mean = 0.0;
  double y_std = 1.0;

  bool standardises_inputs() const { return !x_mean.empty(); }
  // The identity transformation for d inputs.
  static Standardisation identity();
  // Columns with zero spread keep their scale (std treated as 1).
  void apply_to_rows(double* x, std::size_t rows, std::size_t columns) const;
  void apply_to_targets(double* y, std::size_t count) const;
  double restore_target(double standardised) const { return standardised * y_std + y_mean; }
};

// A RowSource that standardises the rows and targets of another on the fly.
class StandardisedRowSource final : public RowSource {
 public:
  StandardisedRowSource(RowSource& inner, Standardisation standardisation);

  std::size_t rows() const override { return inner_.rows(); }
  std::size_t columns() const override { return inner_.columns(); }
  bool has_targets() const override { return inner_.has_targets(); }
  std::size_t preferred_block_alignment() const override { return inner_.preferred_block_alignment(); }

 private:
  void do_read_rows(std::size_t first, std::size_t count, double* x, double* y) override;
  void do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) override;

  RowSource& inner_;
  Standardisation standardisation_;
};

}  // namespace gpstream

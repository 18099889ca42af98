// MeanFunction: a parametric prior mean of the standardised target,
//   m(x) = h(x)ᵀβ,  h(x) = [1 (an intercept), x_l for each chosen input l],
// in the standardised inputs: a constant, or a linear trend in chosen
// inputs [RW06 §2.7]. The GP models the residual y − m(x), so that far from
// the training rows predictions fall back to the trend — a regression on
// the covariates — instead of to zero. β is fitted by least squares before
// the kernel (below; the default of learning), or jointly with it by
// maximising the marginal likelihood (at its optimum the generalised
// least-squares estimate, HYPERPARAMETERS-AT-SCALE.md); then held fixed.
#pragma once

#include "engine/core/communicator.h"
#include "engine/data/row_partition.h"
#include "engine/data/row_source.h"

#include <cstddef>
#include <string>
#include <vector>

namespace gpstream {

struct MeanFunction {
  bool intercept = false;
  std::vector<std::size_t> inputs;   // columns of the linear part, 0-based
  std::vector<double> coefficients;  // β: basis_size() values, or empty (β = 0: not fitted yet)

  std::size_t basis_size() const { return (intercept ? 1 : 0) + inputs.size(); }
  bool empty() const { return basis_size() == 0; }
  // h(x) of one standardised row into `basis` (basis_size() values).
  void basis(const double* x, double* basis) const;
  // h(x)ᵀβ of one standardised row (0 without coefficients).
  double value(const double* x) const;
  // "none", "constant", "linear in x1, x3": for reports, with the inputs' names.
  std::string describe(const std::vector<std::string>& feature_names) const;
  // Throws naming `source` unless the inputs are below d, distinct, and the coefficients fit and are finite.
  void validate(std::size_t d, const std::string& source) const;
};

// β minimising Σᵢ (yᵢ − h(xᵢ)ᵀβ)² over `rows` (standardised; one streamed
// pass, the sums added over the ranks of `ranks`): ordinary least squares.
// Fitting β by OLS and the GP to its residual is restricted spatial
// regression [HodgesReich10]: the covariates keep the effect the data show
// at every scale, where generalised least squares under a short-range
// kernel lets the GP absorb whatever varies smoothly in space (spatial
// confounding) — and predictions far from the training rows lose it.
// Throws naming the input when HᵀH is singular (a constant input).
// The rows are read in blocks of fixed global rows (from their owners when
// `rows` are one rank's part of `partition`), so that every rank and a single
// process add the same numbers in the same order: the same bits for any
// number of ranks.
std::vector<double> least_squares_coefficients(Communicator& ranks, RowSource& rows, const RowPartition& partition,
                                               const MeanFunction& basis,
                                               const std::vector<std::string>& feature_names);

// The least-squares trend of a default basis, which must not fail where the
// data are merely redundant: an input that is constant, or a combination of
// the intercept and the inputs before it (its pivot in the Cholesky factor of
// HᵀH below 1e-10 of its diagonal), is left out instead of refused, in the
// same pass. `mean` holds the basis kept and its coefficients.
struct LeastSquaresTrend {
  MeanFunction mean;
  std::vector<std::size_t> left_out;  // the inputs left out, in order
};
LeastSquaresTrend least_squares_trend(Communicator& ranks, RowSource& rows, const RowPartition& partition,
                                      const MeanFunction& basis);

// The rows of another source with the targets' trend taken off: y − h(x)ᵀβ.
class MeanResidualRowSource final : public TransformedRowSource {
 public:
  MeanResidualRowSource(RowSource& inner, MeanFunction mean) : TransformedRowSource(inner), mean_(std::move(mean)) {}
  // X passes through unchanged: products read the inner rows in place when they are in memory.
  const double* resident_rows() const override { return inner().resident_rows(); }

 private:
  void transform(double* x, double* y, std::size_t count) const override;
  MeanFunction mean_;
};

// Parses a --mean value against the inputs' names: "none", "constant",
// "linear" (every input, with an intercept), or "linear:x3,x5" (those
// inputs by name or 1-based number, with an intercept). No coefficients.
MeanFunction parse_mean_function(const std::string& text, const std::vector<std::string>& feature_names);

}  // namespace gpstream

// MeanFunction: a parametric prior mean of the standardised target,
//   m(x) = h(x)ᵀβ,  h(x) = [1 (an intercept), x_l for each chosen input l],
// in the standardised inputs: a constant, or a linear trend in chosen
// inputs [RW06 §2.7]. The GP models the residual y − m(x), so that far from
// the training rows predictions fall back to the trend — a regression on
// the covariates — instead of to zero. β is fitted jointly with the kernel
// by maximising the marginal likelihood (at its optimum the generalised
// least-squares estimate, HYPERPARAMETERS-AT-SCALE.md), and then held fixed.
#pragma once

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

// Parses a --mean value against the inputs' names: "none", "constant",
// "linear" (every input, with an intercept), or "linear:x3,x5" (those
// inputs by name or 1-based number, with an intercept). No coefficients.
MeanFunction parse_mean_function(const std::string& text, const std::vector<std::string>& feature_names);

}  // namespace gpstream

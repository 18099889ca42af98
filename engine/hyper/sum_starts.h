// Where step 3 of learning (hyper/model_learning.h, docs/model.md) starts its sums: a sum of one family's
// terms, the shortest first (the Vecchia likelihood's conditioning sets follow the first term's lengthscales),
// made from the chosen single kernel by adding a term at a separated scale, or by splitting its inputs into a
// group of short lengthscales and one of long ones; and the two measures that decide which sums are worth
// fitting (whether the rows resolve a term).
#pragma once

#include "engine/kernels/kernel.h"

#include <cstddef>
#include <optional>
#include <vector>

namespace gpstream {

// The terms of one sum, the shortest first.
struct SumStart {
  std::vector<KernelTerm> terms;
  KernelHyperparameters with_noise(double noise) const { return KernelHyperparameters::of_terms(terms, noise); }
};

// A kernel's terms as a start.
SumStart sum_start_of(const KernelHyperparameters& h);

// `scales` with one more term at `ratio` times its longest (ratio > 1) or shortest (ratio < 1) term's
// lengthscales — no longer than twice the rows' `extent` in each input, where a term is flat — taking a third of
// the signal variance from the others.
SumStart with_term(SumStart scales, double ratio, const std::vector<double>& extent);

// Where the fit's lengthscales fall into two groups an order of magnitude apart (coordinates and covariates:
// bcef's [0.035, 0.034, 5.97]), a sum of a term over each group — the spatial term plus a covariate term — each
// term's other inputs at the longest lengthscale, where it ignores them; else nothing (fewer than 3 inputs, no
// gap of 10×, or an input already at the longest lengthscale).
std::optional<SumStart> split_by_inputs(const KernelHyperparameters& h);

// The median over up to 1,000 rows (an even spread of them) of the distance to the nearest other row, in units
// of `lengthscales` (one for all inputs, or one each); +∞ for fewer than 2 rows.
double median_neighbour_distance(const std::vector<double>& x, std::size_t d, const std::vector<double>& lengthscales);

// Each input's shortest lengthscale over a sum's terms.
std::vector<double> shortest_lengthscales(const KernelHyperparameters& h);

}  // namespace gpstream

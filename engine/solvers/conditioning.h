// Whether a tolerance on the residual g = K̄α − y can be met at all.
//
// In double precision the exact residual of row i is computed with an error
// of about u·Σ_j |K̄_ij α_j| (u = 2⁻⁵³): its rounding floor. A near-singular K̄ — duplicated
// rows with different targets under a tiny noise variance — drives ‖α‖ to
// ~Δy/σ², and then no solver can reach a tolerance below that floor, while a
// maintained gradient (the BCD family's, CG's) drifts below it and claims
// convergence that is not there. Two checks keep that from passing silently:
// a sample of rows solved exactly before an iterative run (the sample's K̄ is
// a principal submatrix, whose condition number bounds K̄'s from below), and
// the exact residual that every convergence claim is checked against
// (IterativeMethod::certify, solver_driver.h).
#pragma once

#include "engine/kernels/kernel_matrix.h"

#include <cstddef>
#include <span>
#include <string>

namespace gpstream {

// u · max_i Σ_j |K̄_ij α_j|, from `absolute_products` (K̄|α| for the rows at
// hand: every kernel here is non-negative, so |K̄_ij α_j| = K̄_ij |α_j|):
// below this a residual is rounding.
double residual_rounding_floor(std::span<const double> absolute_products);

// Solves the system of `sample_rows` random rows (all of them when n is
// smaller) exactly; throws the ill-conditioning Error (with what to do)
// when even that subsystem's residual floor exceeds `tolerance`. One
// Cholesky factorisation of the sample; collective over the ranks.
void check_tolerance_attainable(KernelMatrix& kernel, std::span<const double> y, double tolerance,
                                std::size_t sample_rows = 1000);

// The Error for a K̄ whose conditioning defeats `tolerance`, saying what to
// do: `evidence` says how it showed.
[[noreturn]] void throw_ill_conditioned(const Kernel& kernel, double tolerance, const std::string& evidence);

}  // namespace gpstream

// What a dense solver's tolerance bounds, and whether it can be met at all.
//
// The measure is the relative residual ‖K̄α − y‖₂ / ‖y‖₂. It says what a user
// sees: the means the model predicts at the training inputs, Kα, differ from
// the exact GP's, KK̄⁻¹y, by KK̄⁻¹(K̄α − y), and every eigenvalue of KK̄⁻¹ is
// λ/(λ + σ²) < 1, so their RMS error over the training rows is below
// tol × RMS(y).
//
// In double precision the exact residual of row i is computed with an error
// of about u·Σ_j |K̄_ij α_j| (u = 2⁻⁵³): its rounding floor. A near-singular K̄ — duplicated
// rows with different targets under a tiny noise variance — drives ‖α‖ to
// ~Δy/σ², and then no solver can reach a tolerance below that floor, while a
// maintained gradient (the BCD family's, CG's) drifts below it and claims
// convergence that is not there. Two checks keep that from passing silently:
// a sample of rows solved exactly before an iterative run (the sample's K̄ is
// a principal submatrix, whose condition number bounds K̄'s from below), and
// the check of every convergence claim (IterativeMethod::certify,
// solver_driver.h): by the maintained gradient's error bound, which grows
// with ‖α‖ and so fails to prove a claim there, or else by the exact residual.
#pragma once

#include "engine/kernels/kernel_matrix.h"

#include <cstddef>
#include <span>
#include <string>

namespace gpstream {

// ‖r‖₂ / ‖y‖₂ over every rank's rows of the residual r, given ‖y‖₂ as
// `target_norm` (‖r‖₂ itself when y = 0), with the same bits whatever the
// partition (linalg/reproducible_norm.h). Collective.
double relative_residual(std::span<const double> residual, double target_norm, Communicator& ranks);

// u · ‖K̄|α|‖₂ / ‖y‖₂, from `absolute_products` (every rank's rows of K̄|α|:
// every kernel here is non-negative, so |K̄_ij α_j| = K̄_ij |α_j|): below
// this a relative residual is rounding. Collective.
double residual_rounding_floor(std::span<const double> absolute_products, double target_norm, Communicator& ranks);

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

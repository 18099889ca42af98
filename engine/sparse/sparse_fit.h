// Fitting the sparse models whose basis is chosen without looking at the
// targets: subset of data, subset of regressors, the reduced-rank (Nyström)
// approximation. Each streams the training rows once or twice through the
// KernelMatrix, holding O(m² + m·tile) beyond the n targets.
//
// These fill the mathematical part of a SparseModel (basis, weights,
// variance form and factors, diagnostics); the caller adds the metadata.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/sparse/sparse_model.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpstream {

// SD: the exact GP on the training rows `subset` (Schwaighofer & Tresp
// §2 "subset of data"): β = (K_SS + σ²I)⁻¹ y_S, exact-on-subset variance.
SparseModel fit_subset_of_data(KernelMatrix& kernel, std::span<const double> y, std::span<const std::size_t> subset);

// SR on the basis rows B (m×d, standardised; need not be training rows):
// β = (σ²K_B + K_NBᵀK_NB)⁻¹ K_NBᵀ y (NOTES.md "SR"), projected-process
// variance. One streamed pass for K_NBᵀK_NB and K_NBᵀy. Rows (nearly) in the
// span of earlier ones are dropped first (basis_resolution; counted in
// diagnostics "dropped_basis_rows"); `indices`, when given, are the rows'
// training indices and are kept alongside.
SparseModel fit_subset_of_regressors(KernelMatrix& kernel, std::span<const double> y, std::vector<double> basis_rows,
                                     std::span<const std::size_t> indices = {});

// The positions of `rows` (m×d) that a pivoted Cholesky of K_B in the given
// order keeps under basis_resolution's independence floor.
std::vector<std::size_t> independent_rows(const Kernel& kernel, const std::vector<double>& rows);

// The SR model on the basis rows B, in the whitened form that stays well
// conditioned when K_B is nearly singular (smooth kernels, long
// lengthscales): with L_K = chol(K_B + jitter·I) and the whitened features
// Φ = K_NB L_K⁻ᵀ summed over one streamed pass, S = σ²I + ΦᵀΦ (eigenvalues
// ≥ σ²) and β = L_K⁻ᵀ S⁻¹ Φᵀy — never A = σ²K_B + K_NBᵀK_NB itself, whose
// condition number is K_B's squared. B must satisfy basis_resolution's floor.
// `indices`, when given, are B's training row indices: K_NB's columns then
// come from the kernel-column cache where it holds them (cross_products).
SparseModel subset_of_regressors_on(KernelMatrix& kernel, std::span<const double> y, std::vector<double> basis_rows,
                                    std::span<const std::size_t> indices = {});

// RRA / Nyström: w = (K̃ + σ²I)⁻¹ y with K̃ = K_NB K_B⁻¹ K_BN, by Woodbury
// w = σ⁻²(y − K_NB (σ²K_B + K_NBᵀK_NB)⁻¹ K_NBᵀ y) (Schwaighofer & Tresp
// §2.1), on the training rows `basis`. Two streamed passes. The weights are
// reported as the paper does (diagnostics "max_abs_weight", "rms_weight"):
// they grow large when K̃ underestimates K's spectrum, a known property of
// the method, not of this implementation.
SparseModel fit_reduced_rank(KernelMatrix& kernel, std::span<const double> y, std::span<const std::size_t> basis);

// A sparse model fitted on given training rows: fit_subset_of_data, fit_reduced_rank, …
using SubsetFit = SparseModel (*)(KernelMatrix& kernel, std::span<const double> y, std::span<const std::size_t> subset);

// `fit` (the method registry's sd, sr or nystrom, named `method`) on `m`
// training rows drawn by random_row_subset(n, m, seed), with the kernel it was fitted with.
SparseModel fit_on_random_basis(const std::string& method, SubsetFit fit, KernelMatrix& kernel,
                                std::span<const double> y, std::size_t m, std::uint64_t seed);

// chol(K(B, B) + diagonal·I) for m rows B (m×d), lower triangle row-major;
// throws naming `what` when it is not positive definite.
std::vector<double> basis_kernel_factor(const KernelMatrix& kernel, const std::vector<double>& basis_rows,
                                        std::size_t m, double diagonal, const char* what);

// The rows `indices` of the kernel's row source (m×d).
std::vector<double> gather_basis_rows(KernelMatrix& kernel, std::span<const std::size_t> indices);

}  // namespace gpstream

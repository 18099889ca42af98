// The two routes of the dense model's variances (dense_variance.h explains
// both), each an IterativeMethod for the solver driver, in a file of its own
// (gbcd_variances.cpp, cholesky_variances.cpp), and what they share.
#pragma once

#include "engine/core/context.h"
#include "engine/core/scratch_store.h"
#include "engine/dense/dense_variance.h"
#include "engine/solvers/solver_driver.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace gpstream::variance_routes {

// The first row of each batch of `batch_rows` from `first` on, and the
// rows each holds: the batches a run from `first` makes.
struct BatchCursor {
  std::size_t first = 0, count = 0, batch_rows = 1;
  bool done() const { return first >= count; }
  std::size_t rows() const { return std::min(batch_rows, count - first); }
};

// Σ_i G_ij² for each of the r columns of G (n×r, row-major), summed in a
// fixed order (blocks of rows in sequence) so that the stopping decisions do
// not depend on the thread count.
std::vector<double> column_squared_norms(const std::vector<double>& gradient, std::size_t n, std::size_t r);

// The memory of the cholesky route: the factor and the training rows read whole to form it.
std::size_t cholesky_route_bytes(std::size_t n, std::size_t d);

// The gbcd route's relative error bound of a row (dense_variance.h): with
// K** = `prior`, f = `objective` and ‖g‖₂² = `squared_norm`, b / (V̂ − b)
// for b = ‖g‖₂²/σ² and V̂ the variance written (latent, or noisy with σ²);
// infinite while V̂ ≤ b.
double relative_error_bound(double prior, double objective, double squared_norm, double noise, bool noisy);

// The gbcd route's warm start (local_warm_start.cpp): with G = −K(X, Z) on
// entry (n×r, this rank's rows), each column's solve on its `local_rows`
// training rows of highest covariance with z_j, from whichever rank holds
// them; on return G = K̄U − K(X, Z) for that U, and the result is each
// column's f_j = ½uᵀK̄u − k*ᵀu.
std::vector<double> warm_start_by_local_conditioning(KernelMatrix& training, std::vector<double>& gradient,
                                                     std::size_t r, std::size_t local_rows);

std::unique_ptr<IterativeMethod> make_gbcd_variances(KernelMatrix& training, const double* test_rows,
                                                     BatchCursor cursor, const VarianceOptions& options,
                                                     VariancePrediction& result, const VarianceBatchSink& sink);
std::unique_ptr<IterativeMethod> make_cholesky_variances(KernelMatrix& training, const double* test_rows,
                                                         BatchCursor cursor, MemoryReservation factor_memory,
                                                         VariancePrediction& result, const VarianceBatchSink& sink);

// The cholesky route with K̄'s factor in `store` (cholesky_variances.cpp), in
// panels of `panel_columns`; the store holds factor_store_doubles(n, panel_columns).
std::uint64_t factor_store_doubles(std::size_t n, std::size_t panel_columns);
std::unique_ptr<IterativeMethod> make_disk_cholesky_variances(KernelMatrix& training, const double* test_rows,
                                                              BatchCursor cursor, std::size_t panel_columns,
                                                              std::unique_ptr<ScratchStore> store,
                                                              VariancePrediction& result,
                                                              const VarianceBatchSink& sink);

}  // namespace gpstream::variance_routes

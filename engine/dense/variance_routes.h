// The routes of the dense model's variances (dense_variance.h explains
// them), each an IterativeMethod for the solver driver, in a file of its own
// (gbcd_variances.cpp, cholesky_variances.cpp, nearest_variances.cpp), and
// what they share.
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

std::unique_ptr<IterativeMethod> make_gbcd_variances(KernelMatrix& training, const double* test_rows,
                                                     BatchCursor cursor, const VarianceOptions& options,
                                                     VariancePrediction& result, const VarianceBatchSink& sink);
std::unique_ptr<IterativeMethod> make_cholesky_variances(KernelMatrix& training, const double* test_rows,
                                                         BatchCursor cursor, MemoryReservation factor_memory,
                                                         VariancePrediction& result, const VarianceBatchSink& sink);
std::unique_ptr<IterativeMethod> make_nearest_variances(KernelMatrix& training, const double* test_rows,
                                                        BatchCursor cursor, std::size_t neighbours,
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

// The routes of the dense model's variances (dense_variance.h explains
// them), each an IterativeMethod for the solver driver, in a file of its own
// (gbcd_variances.cpp, cholesky_variances.cpp, nearest_variances.cpp), and
// what they share.
#pragma once

#include "engine/core/context.h"
#include "engine/core/scratch_store.h"
#include "engine/dense/dense_variance.h"
#include "engine/linalg/column_norms.h"
#include "engine/solvers/solver_driver.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gpstream::variance_routes {

// The first row of each batch of `batch_rows` from `first` on, and the
// rows each holds: the batches a run from `first` makes.
struct BatchCursor {
  std::size_t first = 0, count = 0, batch_rows = 1;
  bool done() const { return first >= count; }
  std::size_t rows() const { return std::min(batch_rows, count - first); }
};

// What every route is as an IterativeMethod: the training and test rows, the
// batch cursor, the result and where each finished batch goes, the driver's
// counters. A route runs to completion; only the gbcd route has an
// objective and a measure to show.
class VarianceRoute : public IterativeMethod {
 public:
  RunCounters counters() const override { return counters_; }
  void set_counters(const RunCounters& counters) override { counters_ = counters; }
  double objective() const override { return 0.0; }
  double convergence_measure() const override { return 0.0; }
  std::string measure_name() const override { return ""; }
  bool converges() const override { return false; }

 protected:
  VarianceRoute(KernelMatrix& training, const double* test_rows, BatchCursor cursor, VariancePrediction& result,
                const VarianceBatchSink& sink)
      : training_(training), test_rows_(test_rows), cursor_(cursor), result_(result), sink_(sink) {}
  // The next r rows are in result_.latent from cursor_.first, solved in
  // `batches` batches: counts them, hands the rows to the sink and moves the
  // cursor past them.
  void publish_batch(std::size_t r, std::size_t batches = 1) {
    result_.batches += batches;
    if (sink_) sink_(cursor_.first, std::span<const double>(result_.latent.data() + cursor_.first, r));
    cursor_.first += r;
  }

  KernelMatrix& training_;
  const double* test_rows_;
  BatchCursor cursor_;
  VariancePrediction& result_;
  VarianceBatchSink sink_;  // a copy: a caller's temporary may not outlive the route
  RunCounters counters_;
};

// Whether the gbcd route starts each batch with the exact solve on its local
// rows (VarianceOptions::local_rows): one process, σ² > 0, n more than twice
// the local rows (else the start would be most of a dense solve), and a sum
// of kernels (a field of several scales, whose long-range term couples a test
// row with every training row) or a kernel of long reach against the rows'
// spacing — a median test row, of 16
// spread over all count (so that a resumed run decides alike), with at least 128 training rows of
// covariance ≥ half its prior variance (heaton_sim's default model: 274 to
// 3,065, median ~1,500; bcef's: 0 for 15 of 16, whose GBCD steps from zero
// on batches of 1,024 are 2.5× faster than with the start).
bool local_start_applies(KernelMatrix& training, const VarianceOptions& options, const double* test_rows,
                         std::size_t count);

// The `how_many` rows of test rows [first, first + count) (standardised, d columns) nearest row `first` in
// the scales the gbcd route tiles its batches by (the shortest lengthscale any term gives an input): a
// compact group, as that route's batches are. In increasing order.
std::vector<std::size_t> nearest_test_rows(const KernelHyperparameters& kernel, const double* test_rows, std::size_t d,
                                           std::size_t first, std::size_t count, std::size_t how_many);

// The memory of the cholesky route: the factor and the training rows read whole to form it.
std::size_t cholesky_route_bytes(std::size_t n, std::size_t d);

// `local_start`: local_start_applies.
std::unique_ptr<IterativeMethod> make_gbcd_variances(KernelMatrix& training, const double* test_rows,
                                                     BatchCursor cursor, const VarianceOptions& options,
                                                     bool local_start, VariancePrediction& result,
                                                     const VarianceBatchSink& sink);
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

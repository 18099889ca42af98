#include "engine/models/dense_variance.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/solvers/block_coordinate_descent.h"

#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpstream {
namespace {

constexpr std::size_t kMaxBatchRows = 1024;
// Beyond this many open columns the greedy selection scores a sketch G·P
// with this many columns instead of G (see the header).
constexpr std::size_t kSketchColumns = 32;

// S (n×p) = G (n×r) · P (r×p), row-major, rows spread over the cores.
void sketch(const std::vector<double>& gradient, std::size_t n, std::size_t r, const std::vector<double>& projection,
            std::size_t p, std::vector<double>& out) {
  out.resize(n * p);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 512), [&](const tbb::blocked_range<std::size_t>& rows) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows.size()), static_cast<int>(p),
                static_cast<int>(r), 1.0, gradient.data() + rows.begin() * r, static_cast<int>(r), projection.data(),
                static_cast<int>(p), 0.0, out.data() + rows.begin() * p, static_cast<int>(p));
  });
}

// max_i |G_ij| for each of the r columns of G (n×r, row-major).
std::vector<double> column_max_norms(const std::vector<double>& gradient, std::size_t n, std::size_t r) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n, 1024), std::vector<double>(r, 0.0),
      [&](const tbb::blocked_range<std::size_t>& range, std::vector<double> norms) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
          const double* row = gradient.data() + i * r;
          for (std::size_t j = 0; j < r; ++j) norms[j] = std::max(norms[j], std::abs(row[j]));
        }
        return norms;
      },
      [](std::vector<double> a, const std::vector<double>& b) {
        for (std::size_t j = 0; j < a.size(); ++j) a[j] = std::max(a[j], b[j]);
        return a;
      });
}

// Keeps the columns `keep` (increasing) of G (n×r, row-major), in place.
void keep_columns(std::vector<double>& gradient, std::size_t n, std::size_t r, const std::vector<std::size_t>& keep) {
  const std::size_t kept = keep.size();
  for (std::size_t i = 0; i < n; ++i) {
    // Row i moves to i·kept ≤ i·r, and within it column keep[j] ≥ j to j: never overwrites what is still to be read.
    for (std::size_t j = 0; j < kept; ++j) gradient[i * kept + j] = gradient[i * r + keep[j]];
  }
  gradient.resize(n * kept);
}

// Test rows per batch: as many as half the budget holds as columns of G (n×r), ≤ kMaxBatchRows.
std::size_t variance_batch_rows(const VarianceOptions& options, std::size_t n, std::size_t count) {
  std::size_t rows = options.batch_rows;
  if (rows == 0) {
    rows = std::clamp<std::size_t>(options.memory_budget_bytes / 2 / std::max<std::size_t>(1, n * sizeof(double)), 1,
                                   kMaxBatchRows);
  }
  return std::max<std::size_t>(1, std::min(rows, count));
}

}  // namespace

VariancePrediction predict_latent_variance(KernelMatrix& training, const double* test_rows, std::size_t count,
                                           const VarianceOptions& options,
                                           const std::function<void(const VarianceProgress&)>& progress,
                                           const StopFlag* stop) {
  GPSTREAM_CHECK(options.tolerance > 0.0, "the variance tolerance must be positive, not {}", options.tolerance);
  const std::size_t n = training.size();
  const std::size_t d = training.rows().columns();
  const Kernel& kernel = training.kernel();
  VariancePrediction result;
  result.latent.resize(count);
  if (count == 0) return result;
  GPSTREAM_CHECK(n > 0, "the model has no training rows");

  BlockCoordinateDescent descent(training, make_active_set_policy(options.policy, options.candidates),
                                 options.active_set_size);
  std::mt19937_64 random(options.seed);
  AuxiliaryState auxiliary;
  const std::size_t batch = variance_batch_rows(options, n, count);
  result.batch_rows = batch;
  std::vector<double> gradient, delta, gradient_on_b, projection, sketched;
  for (std::size_t first = 0; first < count; first += batch) {
    const std::size_t r_batch = std::min(batch, count - first);
    const double* z = test_rows + first * d;
    // U = 0: G = −K(X, Z), f_j = 0.
    gradient.resize(checked_multiply(n, r_batch));
    training.cross_covariance(z, r_batch, gradient.data());
    for (double& value : gradient) value = -value;
    std::vector<std::size_t> open(r_batch);  // batch column of each open column of G
    std::iota(open.begin(), open.end(), std::size_t{0});
    // P (r×p): random signs / √p, so that E ‖e P‖² = ‖e‖² (Johnson–Lindenstrauss).
    projection.resize(r_batch * kSketchColumns);
    const double sign = 1.0 / std::sqrt(static_cast<double>(kSketchColumns));
    for (double& value : projection) value = (random() & 1u) != 0 ? sign : -sign;
    std::vector<double> objective(r_batch, 0.0), final_norm(r_batch, 0.0);
    std::uint64_t iteration = 0;
    while (true) {
      // Close the columns that have converged (or all, at the iteration limit).
      const std::size_t r = open.size();
      const std::vector<double> norms = column_max_norms(gradient, n, r);
      std::vector<std::size_t> keep_positions, still_open;
      double open_norm = 0.0;
      for (std::size_t j = 0; j < r; ++j) {
        final_norm[open[j]] = norms[j];
        if (norms[j] > options.tolerance && iteration < options.max_iterations) {
          keep_positions.push_back(j);
          still_open.push_back(open[j]);
          open_norm = std::max(open_norm, norms[j]);
        } else if (norms[j] > options.tolerance) {
          ++result.unconverged_rows;
        }
      }
      if (still_open.size() != r) {
        keep_columns(gradient, n, r, keep_positions);
        // P keeps the rows of the open columns.
        for (std::size_t j = 0; j < keep_positions.size(); ++j) {
          std::copy_n(projection.begin() + static_cast<std::ptrdiff_t>(keep_positions[j] * kSketchColumns), kSketchColumns,
                      projection.begin() + static_cast<std::ptrdiff_t>(j * kSketchColumns));
        }
      }
      open = std::move(still_open);
      if (progress) progress({first, count, r_batch, open.size(), iteration, open_norm});
      if (open.empty()) break;
      if (stop != nullptr && stop->requested()) throw Cancelled("variance computation stopped");

      BlockCoordinateDescent::Columns columns{gradient.data(), open.size()};
      if (open.size() > kSketchColumns) {
        sketch(gradient, n, open.size(), projection, kSketchColumns, sketched);
        columns.scored = sketched.data();
        columns.scored_columns = kSketchColumns;
      }
      const ActiveSet& active = descent.iterate_columns(columns, random, auxiliary, delta, &gradient_on_b);
      // f_j += ½ Σ_{i∈B} (G_B)_ij Δ_ij.
      const std::size_t m = active.indices.size();
      for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < open.size(); ++j) {
          objective[open[j]] += 0.5 * gradient_on_b[i * open.size() + j] * delta[i * open.size() + j];
        }
      }
      ++iteration;
    }
    for (std::size_t j = 0; j < r_batch; ++j) {
      // K** − k*ᵀK̄⁻¹k*, with k*ᵀK̄⁻¹k* ≈ −2 f_j; never below 0, which rounding could otherwise give.
      result.latent[first + j] = std::max(0.0, kernel.self_covariance(z + j * d) + 2.0 * objective[j]);
      result.gradient_max_norm = std::max(result.gradient_max_norm, final_norm[j]);
    }
    result.iterations += iteration;
    ++result.batches;
  }
  return result;
}

}  // namespace gpstream

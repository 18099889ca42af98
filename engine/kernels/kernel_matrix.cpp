#include "engine/kernels/kernel_matrix.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/partitioned_rows.h"

#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <numeric>
#include <type_traits>
#include <utility>

namespace gpstream {

struct KernelMatrix::TileWorkspaces {
  tbb::enumerable_thread_specific<TileWorkspace> per_thread;
};

KernelMatrix::KernelMatrix(Context& context, RowSource& rows, const Kernel& kernel, const KernelMatrixOptions& options)
    : KernelMatrix(context, rows, RowPartition::whole(rows.rows()), kernel, options) {}

KernelMatrix::KernelMatrix(Context& context, RowSource& rows, const RowPartition& partition, const Kernel& kernel,
                           const KernelMatrixOptions& options)
    : context_(context),
      rows_(rows),
      partition_(partition),
      exchange_(context.communicator(), rows, partition),
      kernel_(kernel),
      options_(options),
      workspaces_(std::make_unique<TileWorkspaces>()) {
  GPSTREAM_CHECK(kernel.dimension() == rows.columns(), "the kernel expects {} inputs but the data have {}",
                 kernel.dimension(), rows.columns());
  GPSTREAM_CHECK(options_.tile_rows > 0 && options_.panel_columns > 0, "tile and panel sizes must be positive");
  GPSTREAM_CHECK(partition.count == rows.rows() && partition.first + partition.count <= partition.global_rows,
                 "a partition of rows [{}, {}) of {} for {} rows", partition.first, partition.first + partition.count,
                 partition.global_rows, rows.rows());
  if (rows.resident_rows() == nullptr && rows.rows() > 0) {
    // Up to half of what is free for row blocks in flight (two ring slots),
    // and no more than one pass needs; the rest is for tiles and the method's workspaces.
    const std::size_t row_bytes = checked_multiply(rows.columns() + 1, sizeof(double), 2);
    block_memory_ =
        context.memory().reserve_up_to("row blocks in flight", checked_multiply(rows.rows(), row_bytes), 2, row_bytes);
    const std::size_t block_rows =
        block_rows_for_budget(block_memory_.bytes(), rows.columns(), 2, rows.preferred_block_alignment(), rows.rows());
    stream_ = std::make_unique<RowBlockStream>(
        rows, RowBlockStreamOptions{.block_rows = block_rows, .prefetch_depth = 1, .with_targets = false});
  }
}

KernelMatrix::~KernelMatrix() = default;

template <typename BlockFunction>
void KernelMatrix::for_each_block(BlockFunction&& block) {
  context_.execute([&] {
    if (rows_.rows() == 0) return;  // a rank of a distributed run may own no rows
    if (const double* resident = rows_.resident_rows()) {
      block(0, rows_.rows(), resident);
      return;
    }
    stream_->rewind();
    RowCapture* capture = std::exchange(capture_, nullptr);
    while (const RowBlock* next = stream_->next()) {
      if (capture != nullptr) capture->offer(next->first, next->count, next->x);
      block(next->first, next->count, next->x);
    }
  });
}

void KernelMatrix::for_each_row_block(
    const std::function<void(std::size_t first, std::size_t count, const double* x)>& block) {
  for_each_block(block);
}

KernelMatrix::TileWorkspace& KernelMatrix::tile_workspace() { return workspaces_->per_thread.local(); }

void KernelMatrix::capture_during_next_pass(RowCapture& capture) {
  GPSTREAM_CHECK(streams_rows(), "rows are captured from streamed passes only");
  capture_ = &capture;
}

template <typename TileFunction>
void KernelMatrix::for_each_tile(TileFunction&& tile) {
  const std::size_t d = rows_.columns();
  const std::size_t tile_rows = options_.tile_rows;
  for_each_block([&](std::size_t first, std::size_t count, const double* x) {
    const std::size_t tiles = (count + tile_rows - 1) / tile_rows;
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, tiles, 1), [&](const tbb::blocked_range<std::size_t>& range) {
      for (std::size_t t = range.begin(); t != range.end(); ++t) {
        const std::size_t offset = t * tile_rows;
        tile(first + offset, std::min(tile_rows, count - offset), x + offset * d);
      }
    });
  });
}

namespace {

// out[i] (+)= Σ_k columns[k][i] v[k] for i < count, k in increasing order,
// four columns per sweep of `out` but every term added in the same order:
// the result does not depend on where a column comes from (computed in this
// tile or read from the cache), which keeps products with and without the
// column cache bitwise equal.
// out += Σ_k column_k v_k over a tile, in double (a single-precision column's values widened exactly).
template <typename Real>
void add_columns(std::size_t count, std::span<const Real* const> columns, const double* v, double* out) {
  const std::size_t m = columns.size();
  std::size_t k = 0;
  for (; k + 4 <= m; k += 4) {
    const Real *c0 = columns[k], *c1 = columns[k + 1], *c2 = columns[k + 2], *c3 = columns[k + 3];
    const double v0 = v[k], v1 = v[k + 1], v2 = v[k + 2], v3 = v[k + 3];
    for (std::size_t i = 0; i < count; ++i) {
      double sum = out[i];
      sum += c0[i] * v0;
      sum += c1[i] * v1;
      sum += c2[i] * v2;
      sum += c3[i] * v3;
      out[i] = sum;
    }
  }
  for (; k < m; ++k) {
    const Real* c = columns[k];
    const double vk = v[k];
    for (std::size_t i = 0; i < count; ++i) out[i] += c[i] * vk;
  }
}

// out (count×r) += K̄[tile, B] V from the tile's columns, by one GEMM on the block they make, column k
// at k·count: the transpose of K̄[tile, B], which the GEMM reads as it is. Columns computed in this tile
// already lie so (a strided copy into a row-major block cost more: docs/variance.md); cached or
// single-precision ones are copied in whole, so that every source gives the same GEMM and the same bits.
template <typename Real>
void add_block(std::size_t count, std::span<const Real* const> columns, const double* v, std::size_t r,
               std::vector<double>& block, double* out) {
  const std::size_t m = columns.size();
  const double* transposed = nullptr;
  if constexpr (std::is_same_v<Real, double>) {
    bool adjacent = true;
    for (std::size_t k = 1; k < m && adjacent; ++k) adjacent = columns[k] == columns[0] + k * count;
    if (adjacent) transposed = columns[0];
  }
  if (transposed == nullptr) {
    block.resize(count * m);
    for (std::size_t k = 0; k < m; ++k) std::copy_n(columns[k], count, block.data() + k * count);
    transposed = block.data();
  }
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(count), static_cast<int>(r),
              static_cast<int>(m), 1.0, transposed, static_cast<int>(count), v, static_cast<int>(r), 1.0, out,
              static_cast<int>(r));
}

}  // namespace

void KernelMatrix::plan_columns(std::span<const std::size_t> b, const double* x_b, ColumnPlan& plan,
                                Precision precision) {
  const std::size_t m = b.size();
  const std::size_t d = rows_.columns();
  plan.precision = precision;
  plan.cached = column_cache_ && precision == Precision::double_precision;
  plan.computed.clear();
  std::vector<double> x_computed;  // their rows, when the cache holds some of B
  if (plan.cached) column_cache_->plan(b, cache_plan_);
  for (std::size_t k = 0; k < m; ++k) {
    if (plan.cached && cache_plan_.cached[k] != nullptr) continue;
    plan.computed.push_back(k);
    if (plan.cached) x_computed.insert(x_computed.end(), x_b + k * d, x_b + (k + 1) * d);
  }
  kernel_.prepare(plan.cached ? x_computed.data() : x_b, plan.computed.size(), plan.prepared);
  plan.columns = m;
}

void KernelMatrix::tile_columns(const ColumnPlan& plan, std::size_t first, std::size_t count,
                                TileWorkspace& workspace) const {
  const std::size_t d = rows_.columns();
  const std::size_t c = plan.computed.size();
  const bool single = plan.precision == Precision::single_precision;
  // K(B_computed, tile): row q holds column computed[q] over the tile, in
  // the orientation the cache stores columns.
  if (single) {  // every column computed (plan_columns)
    workspace.computed_single.resize(c * count);
    if (c > 0) kernel_.evaluate_single(plan.prepared.view(d), workspace.rows.view(d), workspace.computed_single.data());
    workspace.single_columns.resize(c);
    for (std::size_t q = 0; q < c; ++q) workspace.single_columns[q] = workspace.computed_single.data() + q * count;
    return;
  }
  workspace.computed.resize(c * count);
  if (c > 0) kernel_.evaluate_entrywise(plan.prepared.view(d), workspace.rows.view(d), workspace.computed.data());
  workspace.columns.resize(plan.columns);
  for (std::size_t k = 0; k < plan.columns; ++k)
    workspace.columns[k] = plan.cached && cache_plan_.cached[k] != nullptr ? cache_plan_.cached[k] + first : nullptr;
  for (std::size_t q = 0; q < c; ++q) {
    const double* column = workspace.computed.data() + q * count;
    workspace.columns[plan.computed[q]] = column;
    if (double* store = plan.cached ? cache_plan_.store[plan.computed[q]] : nullptr)
      std::copy_n(column, count, store + first);
  }
}

void KernelMatrix::complete_columns(const ColumnPlan& plan) {
  if (plan.cached) column_cache_->complete();
  kernel_evaluations_ += checked_multiply(size(), plan.computed.size());
}

void KernelMatrix::multiply_columns(std::span<const std::size_t> b, const double* x_b, const double* v, std::size_t r,
                                    double* out, bool accumulate, Precision precision) {
  const std::size_t m = b.size();
  const std::size_t n = size();
  if (!accumulate) std::fill(out, out + checked_multiply(n, r), 0.0);
  if (m == 0) return;
  ColumnPlan plan;
  plan_columns(b, x_b, plan, precision);
  for_each_tile([&](std::size_t first, std::size_t count, const double* x) {
    TileWorkspace& workspace = workspaces_->per_thread.local();
    if (!plan.computed.empty()) kernel_.prepare(x, count, workspace.rows);
    tile_columns(plan, first, count, workspace);
    if (plan.precision == Precision::single_precision) {
      const std::span<const float* const> columns = workspace.single_columns;
      if (r == 1) return add_columns(count, columns, v, out + first);
      return add_block(count, columns, v, r, workspace.block, out + first * r);
    }
    const std::span<const double* const> columns = workspace.columns;
    if (r == 1) return add_columns(count, columns, v, out + first);
    add_block(count, columns, v, r, workspace.block, out + first * r);
  });
  complete_columns(plan);
  // The σ²I part of K̄[:, B]: row b_j of the output gains σ² V[j] (where this rank owns it).
  const double noise = kernel_.noise_variance();
  for (std::size_t j = 0; j < m; ++j) {
    if (!partition_.owns(b[j])) continue;
    const std::size_t row = partition_.local(b[j]);
    for (std::size_t col = 0; col < r; ++col) out[row * r + col] += noise * v[j * r + col];
  }
}

void KernelMatrix::enable_column_cache(MemoryReservation memory, std::unique_ptr<ColumnDiskTier> disk) {
  column_cache_ = std::make_unique<KernelColumnCache>(size(), std::move(memory), std::move(disk), &context_,
                                                      partition_.global_rows);
}

void KernelMatrix::multiply_columns_transposed(const double* z, std::size_t m, const double* u, std::size_t r,
                                               double* out) {
  std::fill(out, out + checked_multiply(m, r), 0.0);
  if (m == 0 || partition_.global_rows == 0) return;  // a rank without rows still joins the sum
  PreparedRows prepared_z;
  kernel_.prepare(z, m, prepared_z);
  const std::size_t d = rows_.columns();
  const std::size_t tile_rows = options_.tile_rows;
  // Sums over tiles are combined in a fixed tree (deterministic reduce with
  // fixed tiles) and blocks are added in order, so the result does not
  // depend on thread timing: two predictions of the same rows are identical.
  auto add_block = [&](std::size_t first, std::size_t count, const double* x) {
    const std::size_t tiles = (count + tile_rows - 1) / tile_rows;
    const std::vector<double> sums = tbb::parallel_deterministic_reduce(
        tbb::blocked_range<std::size_t>(0, tiles, 1), std::vector<double>(m * r, 0.0),
        [&](const tbb::blocked_range<std::size_t>& range, std::vector<double> partial) {
          TileWorkspace& workspace = workspaces_->per_thread.local();
          for (std::size_t t = range.begin(); t != range.end(); ++t) {
            const std::size_t offset = t * tile_rows;
            const std::size_t rows = std::min(tile_rows, count - offset);
            kernel_.prepare(x + offset * d, rows, workspace.rows);
            workspace.block.resize(rows * m);
            kernel_.evaluate(workspace.rows, prepared_z, workspace.block.data());
            cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(r),
                        static_cast<int>(rows), 1.0, workspace.block.data(), static_cast<int>(m),
                        u + (first + offset) * r, static_cast<int>(r), 1.0, partial.data(), static_cast<int>(r));
          }
          return partial;
        },
        [](std::vector<double> a, const std::vector<double>& b) {
          for (std::size_t k = 0; k < a.size(); ++k) a[k] += b[k];
          return a;
        });
    for (std::size_t k = 0; k < m * r; ++k) out[k] += sums[k];
  };
  for_each_block(add_block);
  // Distributed: every rank's rows' share, summed (the same on every rank).
  context_.communicator().sum(std::span(out, checked_multiply(m, r)));
  kernel_evaluations_ += checked_multiply(size(), m);
}

void KernelMatrix::cross_covariance(const double* z, std::size_t m, double* out, std::size_t stride) {
  GPSTREAM_CHECK(stride >= m, "cross_covariance: rows {} apart cannot hold {} columns", stride, m);
  if (m == 0 || size() == 0) return;
  PreparedRows prepared_z;
  kernel_.prepare(z, m, prepared_z);
  for_each_tile([&](std::size_t first, std::size_t count, const double* x) {
    TileWorkspace& workspace = workspaces_->per_thread.local();
    kernel_.prepare(x, count, workspace.rows);
    if (stride == m) return kernel_.evaluate(workspace.rows, prepared_z, out + first * m);
    workspace.block.resize(count * m);
    kernel_.evaluate(workspace.rows, prepared_z, workspace.block.data());
    for (std::size_t i = 0; i < count; ++i) std::copy_n(workspace.block.data() + i * m, m, out + (first + i) * stride);
  });
  kernel_evaluations_ += checked_multiply(size(), m);
}

bool KernelMatrix::multiply_panels(const double* v, std::size_t r, double* out, bool stoppable, Precision precision) {
  const std::size_t n = partition_.global_rows;
  const std::size_t d = rows_.columns();
  const std::size_t panel = std::min(options_.panel_columns, n);
  std::vector<double> x_panel(checked_multiply(panel, d));
  std::vector<std::size_t> indices(panel);
  for (std::size_t first = 0; first < n; first += panel) {
    // Every rank runs the same panels, so all see the request at the same one.
    if (stoppable && context_.communicator().any(context_.stop_requested())) return false;
    const std::size_t count = std::min(panel, n - first);
    std::iota(indices.begin(), indices.begin() + static_cast<std::ptrdiff_t>(count), first);
    exchange_.read_global_rows(first, count, x_panel.data());
    multiply_columns(std::span<const std::size_t>(indices.data(), count), x_panel.data(), v + first * r, r, out,
                     first > 0, precision);
  }
  return true;
}

void KernelMatrix::block(const double* x_a, std::size_t a, const double* x_b, std::size_t b, double* out) const {
  PreparedRows prepared_a, prepared_b;
  kernel_.prepare(x_a, a, prepared_a);
  kernel_.prepare(x_b, b, prepared_b);
  kernel_.evaluate(prepared_a, prepared_b, out);
}

void KernelMatrix::diagonal(double* out) {
  const double noise = kernel_.noise_variance();
  if (const std::optional<double> constant = kernel_.constant_self_covariance()) {
    std::fill(out, out + size(), *constant + noise);
    return;
  }
  const std::size_t d = rows_.columns();
  for_each_tile([&](std::size_t first, std::size_t count, const double* x) {
    for (std::size_t i = 0; i < count; ++i) out[first + i] = kernel_.self_covariance(x + i * d) + noise;
  });
}

}  // namespace gpstream

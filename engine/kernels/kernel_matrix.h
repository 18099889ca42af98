// KernelMatrix: products with K̄ = K + σ²I over a RowSource, without ever
// forming K̄. This is the one hot loop of every dense solver and of
// prediction: rows stream in blocks (read ahead in the background), each
// block is cut into tiles that oneTBB spreads over the cores, and each tile is
// one kernel block (GEMM + vectorised pass) followed by a GEMV/GEMM with the
// vector(s) — except K̄[:, B]·V, the BCD family's product, whose kernel values
// are computed entrywise (Kernel::evaluate_entrywise) or read from the column
// cache and summed in a fixed order, so that both give the same bits. BLAS
// runs single-threaded inside the tasks (core/blas_threads.h).
//
// Output row i is written by exactly one task, and sums over rows are reduced
// in a fixed order, so results do not depend on the thread count or
// scheduling: a resumed run repeats the same arithmetic.
//
// Its other jobs live beside it: the sums over all rows built from its passes
// (cross_products.h, parameter_gradient_contraction.h), the exchange of rows
// and values among ranks (RankExchange, data/partitioned_rows.h; exchange()),
// the kernel-column cache it reads columns from (kernel_column_cache.h).
#pragma once

#include "engine/core/context.h"
#include "engine/data/partitioned_rows.h"
#include "engine/data/row_block_stream.h"
#include "engine/data/row_capture.h"
#include "engine/data/row_partition.h"
#include "engine/kernels/kernel_column_cache.h"
#include "engine/data/row_source.h"
#include "engine/kernels/kernel.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace gpstream {

struct KernelMatrixOptions {
  std::size_t tile_rows = 256;       // rows per task
  std::size_t panel_columns = 2048;  // columns per pass in multiply()
};

class KernelMatrix {
 public:
  // `context`, `rows` and `kernel` must outlive the KernelMatrix. Streamed
  // rows take up to half of the context's free memory budget for the row
  // blocks in flight, held while the KernelMatrix lives; its parallel work
  // runs on the context's threads.
  KernelMatrix(Context& context, RowSource& rows, const Kernel& kernel, const KernelMatrixOptions& options = {});
  // One rank's part of a distributed K̄: `rows` are the rows `partition`
  // gives it (data/partitioned_rows.h), and products cover those rows of K̄
  // while columns are numbered over all n (multiply_columns' B, the cache).
  KernelMatrix(Context& context, RowSource& rows, const RowPartition& partition, const Kernel& kernel,
               const KernelMatrixOptions& options = {});
  ~KernelMatrix();

  Context& context() const { return context_; }
  // The rows this KernelMatrix covers (this rank's, all n in a single process).
  std::size_t size() const { return rows_.rows(); }
  // Which of the n rows they are.
  const RowPartition& partition() const { return partition_; }
  // Whether the rows are partitioned among the ranks of a distributed run.
  bool distributed() const { return partition_.count != partition_.global_rows; }
  // Rows and per-row values of its rows from the ranks that own them (data/partitioned_rows.h).
  RankExchange& exchange() { return exchange_; }
  RowSource& rows() { return rows_; }
  const Kernel& kernel() const { return kernel_; }

  // out (n×r, row-major) = K̄[:, B] · V (or += with `accumulate`), where B
  // lists m training row indices, x_b holds their rows (m×d) and V is m×r.
  // Distributed: this rank's rows of it, B numbered over all n.
  // With a column cache, cached columns are read instead of computed. In
  // single precision every column is Kernel::evaluate_single's, summed in
  // double, and the cache (which holds exact columns) is left alone.
  void multiply_columns(std::span<const std::size_t> b, const double* x_b, const double* v, std::size_t r, double* out,
                        bool accumulate = false, Precision precision = Precision::double_precision);

  // out (m×r) = K(X, Z)ᵀ · U for m points Z that are not training rows (no
  // noise term), U n×r: the predictive mean (U = α) in one pass over X.
  // Distributed: U is this rank's rows, and out the sum over all ranks.
  void multiply_columns_transposed(const double* z, std::size_t m, const double* u, std::size_t r, double* out);

  // out (n×m, row-major, rows `stride` ≥ m apart) = K(X, Z) for m points Z
  // that are not training rows (no noise term): the right-hand sides of
  // predictive variances. Distributed: this rank's rows of it.
  void cross_covariance(const double* z, std::size_t m, double* out) { cross_covariance(z, m, out, m); }
  void cross_covariance(const double* z, std::size_t m, double* out, std::size_t stride);

  // out = K̄ v over all n columns, in panels of columns (one pass each).
  // Distributed: v holds all n values (the same on every rank) and out this
  // rank's rows, the single process's bits for them (the same panels).
  void multiply(const double* v, double* out) { multiply(v, 1, out); }
  // The same for r vectors at once: V (all n rows × r, row-major), out this rank's rows × r.
  void multiply(const double* v, std::size_t r, double* out) { (void)multiply_panels(v, r, out, false); }
  // multiply(v, out) for a product its caller can drop whole (a CG
  // iteration, the exact residual at a convergence claim): a pass over all
  // n² entries, 13 minutes at 1M rows on two cores, which would hold a
  // Ctrl-C that long. A stop request (Context::stop_requested, on any rank;
  // every rank decides alike) ends it between panels of columns: false
  // then, and `out` partial.
  // In `precision` (multiply_columns'): single for a product inside a loop a double residual certifies.
  [[nodiscard]] bool multiply_unless_stopped(const double* v, double* out,
                                             Precision precision = Precision::double_precision) {
    return multiply_panels(v, 1, out, true, precision);
  }

  // out (a×b, row-major) = K(A, B) for rows held in memory, without noise.
  void block(const double* x_a, std::size_t a, const double* x_b, std::size_t b, double* out) const;

  // out[i] = K̄_ii for every training row.
  void diagonal(double* out);

  // Whether products stream the rows from their source (else they read
  // resident rows in place, and a gather is a copy).
  bool streams_rows() const { return stream_ != nullptr; }
  // Has the next pass over the streamed rows copy the rows `capture` asks
  // for as their blocks go by; `capture` must outlive that pass.
  void capture_during_next_pass(RowCapture& capture);

  // Keeps kernel columns that multiply_columns uses again, in `memory` and
  // on `disk` when given (kernels/kernel_column_cache.h); products are bitwise the same.
  void enable_column_cache(MemoryReservation memory, std::unique_ptr<ColumnDiskTier> disk = nullptr);
  const KernelColumnCache* column_cache() const { return column_cache_.get(); }
  KernelColumnCache* column_cache() { return column_cache_.get(); }

  // Kernel evaluations made so far (for kernel evaluations per second).
  std::uint64_t kernel_evaluations() const { return kernel_evaluations_.load(); }
  void count_kernel_evaluations(std::uint64_t count) { kernel_evaluations_ += count; }

  // ---- The passes the sums over training rows are built from, which live in
  // files of their own: the sparse models' cross products
  // (kernels/cross_products.h) and the likelihood gradient's contraction
  // (kernels/parameter_gradient_contraction.h).
  const KernelMatrixOptions& options() const { return options_; }
  // Calls block(first_row, count, x) for every block of this rank's rows in
  // order: the resident rows as one block, or the blocks of one streamed
  // pass; inside the context's arena, so that every parallel loop of a block
  // uses its threads.
  void for_each_row_block(const std::function<void(std::size_t first, std::size_t count, const double* x)>& block);

  // One thread's scratch for a tile of rows.
  struct TileWorkspace {
    PreparedRows rows;
    std::vector<double> block;
    std::vector<double> computed;        // K(B's computed columns, tile rows)
    std::vector<const double*> columns;  // each column of B over the tile: computed or cached
    std::vector<float> computed_single;  // in single precision: every column of B over the tile
    std::vector<const float*> single_columns;
  };
  // The calling thread's, reused across calls.
  TileWorkspace& tile_workspace();
  // A pass over the columns K(X, B) of training rows B: the cache's plan
  // for them (cache_plan_) and the prepared rows of those to compute.
  struct ColumnPlan {
    std::size_t columns = 0;            // m
    std::vector<std::size_t> computed;  // positions in B not read from the cache
    PreparedRows prepared;              // their rows
    // Single precision computes every column and leaves the cache, which holds exact ones, alone.
    Precision precision = Precision::double_precision;
    bool cached = false;  // whether the plan reads and fills the cache
  };
  void plan_columns(std::span<const std::size_t> b, const double* x_b, ColumnPlan& plan,
                    Precision precision = Precision::double_precision);
  // Points workspace.columns[k] at column k over rows [first, first + count)
  // (whose prepared rows are in workspace.rows, when the plan computes any): cached, or computed
  // entrywise into workspace.computed and stored when the plan says so; in single precision
  // workspace.single_columns[k], computed into workspace.computed_single.
  void tile_columns(const ColumnPlan& plan, std::size_t first, std::size_t count, TileWorkspace& workspace) const;
  // After the pass: the stored columns count as cached; evaluations counted.
  void complete_columns(const ColumnPlan& plan);

 private:
  // multiply()'s panels; with `stoppable`, false when a stop request ended them.
  bool multiply_panels(const double* v, std::size_t r, double* out, bool stoppable,
                       Precision precision = Precision::double_precision);
  // Calls block(first_row, count, x) for every block of rows in order: the
  // resident rows as one block, or the blocks of one streamed pass; inside
  // the context's arena, so that every parallel loop of a block uses its threads.
  template <typename BlockFunction>
  void for_each_block(BlockFunction&& block);
  // Calls tile(first_row, count, x) for every tile of rows, in parallel; x
  // points to the tile's rows.
  template <typename TileFunction>
  void for_each_tile(TileFunction&& tile);

  struct TileWorkspaces;  // per-thread scratch for tiles, reused across calls

  Context& context_;
  RowSource& rows_;
  RowPartition partition_;
  RankExchange exchange_;
  const Kernel& kernel_;
  KernelMatrixOptions options_;
  MemoryReservation block_memory_;
  std::unique_ptr<RowBlockStream> stream_;  // null when the rows are resident
  std::unique_ptr<TileWorkspaces> workspaces_;
  RowCapture* capture_ = nullptr;  // filled by the next streamed pass
  std::unique_ptr<KernelColumnCache> column_cache_;
  KernelColumnCache::Plan cache_plan_;
  std::atomic<std::uint64_t> kernel_evaluations_{0};
};

}  // namespace gpstream

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
#pragma once

#include "engine/core/context.h"
#include "engine/data/row_block_stream.h"
#include "engine/data/row_capture.h"
#include "engine/data/row_partition.h"
#include "engine/kernels/kernel_column_cache.h"
#include "engine/data/row_source.h"
#include "engine/kernels/kernel.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace gpstream {

// Sums over the training rows that sparse models are built from (see
// KernelMatrix::cross_products).
struct CrossProducts {
  std::vector<double> pq;               // K_Pᵀ K_Q, p×q row-major
  std::vector<double> q_squared_norms;  // ‖K_Q[:, j]‖², q values
  std::vector<double> q_times_w;        // K_Qᵀ W, q×r row-major
};

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
  // Rows `indices` (numbered over all n) of X into `out` (|indices|×d),
  // from the ranks that own them: each fills in its own, one all-reduce
  // shares them (exact: one owner per value); in a single process, a
  // gather. The owned rows come from `capture` when it holds them.
  void collect_rows(std::span<const std::size_t> indices, std::vector<double>& out, RowCapture* capture = nullptr);
  // Rows `indices` (numbered over all n) of a per-row vector of `width`
  // values a row, of which `local` holds this rank's rows: from their
  // owners, in one all-reduce (exact), as collect_rows; |indices|×width.
  std::vector<double> collect_values(std::span<const std::size_t> indices, std::span<const double> local,
                                     std::size_t width = 1);
  RowSource& rows() { return rows_; }
  const Kernel& kernel() const { return kernel_; }

  // out (n×r, row-major) = K̄[:, B] · V (or += with `accumulate`), where B
  // lists m training row indices, x_b holds their rows (m×d) and V is m×r.
  // Distributed: this rank's rows of it, B numbered over all n.
  // With a column cache, cached columns are read instead of computed.
  void multiply_columns(std::span<const std::size_t> b, const double* x_b, const double* v, std::size_t r, double* out,
                        bool accumulate = false);

  // out (m×r) = K(X, Z)ᵀ · U for m points Z that are not training rows (no
  // noise term), U n×r: the predictive mean (U = α) in one pass over X.
  // Distributed: U is this rank's rows, and out the sum over all ranks.
  void multiply_columns_transposed(const double* z, std::size_t m, const double* u, std::size_t r, double* out);

  // out (n×m, row-major) = K(X, Z) for m points Z that are not training
  // rows (no noise term): the right-hand sides of predictive variances.
  // Distributed: this rank's rows of it.
  void cross_covariance(const double* z, std::size_t m, double* out);

  // With K_P = K(X, P) and K_Q = K(X, Q) over all n training rows (no noise
  // term; P, Q not training rows), in one pass: K_Pᵀ K_Q, the squared column
  // norms of K_Q, and K_Qᵀ W for W n×r (r may be 0). Memory: a few p×q
  // partial sums (a fixed number per block, so that the result does not
  // depend on the thread count) plus one tile of K_P and K_Q per thread.
  // With `p_whitening` (a p×p lower triangular L, row-major), K_P is replaced
  // by the whitened features K_P L⁻ᵀ tile by tile (and K_Q too when Q is P):
  // sums of those are positive semi-definite to working precision, which the
  // whitening of K_Pᵀ K_P after the fact is not. With `q_projection` (W, p×q
  // row-major; Q not P), K_Q is replaced by its residual K_Q − K_P W, row by
  // row (K_P whitened or not), so that products of residuals that are small
  // against K_Q keep their digits (a greedy basis's candidates: W = K_B⁻¹K_BC).
  // Distributed: sums over every rank's rows (W is this rank's rows).
  // With `p_indices` (P are these training rows: a basis), K_P's columns are
  // computed entrywise, as multiply_columns' are, or read from the column
  // cache, which keeps them for the next pass: a greedy basis uses every
  // one of its columns again in each later step. The same bits either way.
  CrossProducts cross_products(const double* p_rows, std::size_t p, const double* q_rows, std::size_t q,
                               const double* w, std::size_t r, const double* p_whitening = nullptr,
                               const double* q_projection = nullptr, std::span<const std::size_t> p_indices = {});

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
  [[nodiscard]] bool multiply_unless_stopped(const double* v, double* out) { return multiply_panels(v, 1, out, true); }

  // The contraction every likelihood gradient over all rows needs, without
  // forming a matrix ∂K/∂θ_p: for weight blocks W_w = L_w R_wᵀ,
  //   out[w·P + p] = Σ_i Σ_j (W_w)_ij ∂k(x_i, x_j)/∂θ_p,   P = kernel().parameter_count(),
  // i over this rank's rows and j over all n (no noise term: the caller
  // adds σ²'s). `left` holds this rank's rows × c values, `right` all n
  // rows × c (the same on every rank), both row-major; block w takes the
  // next widths[w] of the c columns. Summed over the ranks (the same on
  // every rank). Panels of columns, each one pass over the rows, cut into
  // fixed chunks summed in order: the result does not depend on the
  // thread count.
  std::vector<double> contract_parameter_gradient(const double* left, const double* right, std::size_t c,
                                                  std::span<const std::size_t> widths);

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

 private:
  // multiply()'s panels; with `stoppable`, false when a stop request ended them.
  bool multiply_panels(const double* v, std::size_t r, double* out, bool stoppable);
  // Calls block(first_row, count, x) for every block of rows in order: the
  // resident rows as one block, or the blocks of one streamed pass; inside
  // the context's arena, so that every parallel loop of a block uses its threads.
  template <typename BlockFunction>
  void for_each_block(BlockFunction&& block);
  // Calls tile(first_row, count, x) for every tile of rows, in parallel; x
  // points to the tile's rows.
  template <typename TileFunction>
  void for_each_tile(TileFunction&& tile);

  struct TileWorkspace;   // one thread's scratch for tiles
  struct TileWorkspaces;  // per-thread scratch for tiles, reused across calls

  // A pass over the columns K(X, B) of training rows B: the cache's plan
  // for them (cache_plan_) and the prepared rows of those to compute.
  struct ColumnPlan {
    std::size_t columns = 0;            // m
    std::vector<std::size_t> computed;  // positions in B not read from the cache
    PreparedRows prepared;              // their rows
  };
  void plan_columns(std::span<const std::size_t> b, const double* x_b, ColumnPlan& plan);
  // Points workspace.columns[k] at column k over rows [first, first + count)
  // (whose prepared rows are in workspace.rows, when the plan computes any): cached, or computed
  // entrywise into workspace.computed and stored when the plan says so.
  void tile_columns(const ColumnPlan& plan, std::size_t first, std::size_t count, TileWorkspace& workspace) const;
  // After the pass: the stored columns count as cached; evaluations counted.
  void complete_columns(const ColumnPlan& plan);
  // Rows [first, first + count) of all n into out (count×d): read by their owners and shared when distributed.
  void read_global_rows(std::size_t first, std::size_t count, double* out);

  Context& context_;
  RowSource& rows_;
  RowPartition partition_;
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

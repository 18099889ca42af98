#include "engine/kernels/cross_products.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <cblas.h>
#include <tbb/parallel_for.h>

#include <algorithm>

namespace gpstream {
namespace {

// What every tile of a cross_products call shares: P and Q prepared (or P's column plan), the sizes, the
// whitening, the projection and W.
struct TileInputs {
  KernelMatrix& matrix;
  const KernelMatrix::ColumnPlan& plan;
  const PreparedRows &prepared_p, &prepared_q;
  std::size_t p, q, r;
  const double *p_whitening, *q_projection, *w;
  bool same, p_columns;
};

// One chunk's sums, added to tile by tile.
struct Partial {
  std::vector<double> pq, norms, qw;
};

// The tile of `rows` training rows from global row `first` (their inputs at x): its block of K_P (whitened),
// of K_Q (projected), added to the partial's K_PᵀK_Q, column norms of K_Q and K_QᵀW.
void add_tile(const TileInputs& in, std::size_t first, std::size_t rows, const double* x,
              KernelMatrix::TileWorkspace& workspace, std::vector<double>& block_q, Partial& partial) {
  const Kernel& kernel = in.matrix.kernel();
  const std::size_t p = in.p, q = in.q, r = in.r;
  kernel.prepare(x, rows, workspace.rows);
  workspace.block.resize(rows * p);
  if (in.p_columns) {
    in.matrix.tile_columns(in.plan, first, rows, workspace);
    for (std::size_t k = 0; k < p; ++k) {
      const double* column = workspace.columns[k];
      for (std::size_t i = 0; i < rows; ++i) workspace.block[i * p + k] = column[i];
    }
  } else if (p > 0) {
    kernel.evaluate(workspace.rows, in.prepared_p, workspace.block.data());
  }
  if (p > 0 && in.p_whitening != nullptr) {
    cblas_dtrsm(CblasRowMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, static_cast<int>(rows),
                static_cast<int>(p), 1.0, in.p_whitening, static_cast<int>(p), workspace.block.data(),
                static_cast<int>(p));
  }
  const double* k_q = workspace.block.data();
  if (!in.same) {
    block_q.resize(rows * q);
    kernel.evaluate(workspace.rows, in.prepared_q, block_q.data());
    if (in.q_projection != nullptr && p > 0) {  // K_Q − K_P W
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(q),
                  static_cast<int>(p), -1.0, workspace.block.data(), static_cast<int>(p), in.q_projection,
                  static_cast<int>(q), 1.0, block_q.data(), static_cast<int>(q));
    }
    k_q = block_q.data();
  }
  if (p > 0) {
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(p), static_cast<int>(q),
                static_cast<int>(rows), 1.0, workspace.block.data(), static_cast<int>(p), k_q, static_cast<int>(q), 1.0,
                partial.pq.data(), static_cast<int>(q));
  }
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < q; ++j) partial.norms[j] += k_q[i * q + j] * k_q[i * q + j];
  }
  if (r > 0) {
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(q), static_cast<int>(r),
                static_cast<int>(rows), 1.0, k_q, static_cast<int>(q), in.w + first * r, static_cast<int>(r), 1.0,
                partial.qw.data(), static_cast<int>(r));
  }
}

}  // namespace

CrossProducts cross_products(KernelMatrix& matrix, const double* p_rows, std::size_t p, const double* q_rows,
                             std::size_t q, const double* w, std::size_t r, const double* p_whitening,
                             const double* q_projection, std::span<const std::size_t> p_indices) {
  const Kernel& kernel = matrix.kernel();
  CrossProducts result{std::vector<double>(checked_multiply(p, q), 0.0), std::vector<double>(q, 0.0),
                       std::vector<double>(checked_multiply(q, r), 0.0)};
  if (q == 0 || matrix.partition().global_rows == 0) return result;  // a rank without rows still joins the sums
  const bool same = q_rows == p_rows && q == p;
  GPSTREAM_CHECK(q_projection == nullptr || !same, "cross_products: a projection of K_Q onto K_P needs another P");
  GPSTREAM_CHECK(p_indices.empty() || p_indices.size() == p, "cross_products: {} indices for {} rows of P",
                 p_indices.size(), p);
  // Training rows P: K_P's columns entrywise or from the column cache (the same bits either way).
  const bool p_columns = !p_indices.empty();
  PreparedRows prepared_p, prepared_q;
  KernelMatrix::ColumnPlan plan;
  if (p_columns) {
    matrix.plan_columns(p_indices, p_rows, plan);
  } else {
    kernel.prepare(p_rows, p, prepared_p);
  }
  kernel.prepare(q_rows, q, prepared_q);
  const std::size_t d = kernel.dimension();
  const std::size_t tile_rows = matrix.options().tile_rows;
  // A fixed number of chunks per block, each summing its tiles in order into
  // its own partial: the sums do not depend on the thread count, and there
  // are few p×q partials however many tiles there are.
  constexpr std::size_t kChunks = 8;
  std::vector<Partial> partials(kChunks);
  const TileInputs inputs{matrix, plan, prepared_p, prepared_q, p, q, r, p_whitening, q_projection, w, same, p_columns};
  auto add_block = [&](std::size_t first, std::size_t count, const double* x) {
    const std::size_t tiles = (count + tile_rows - 1) / tile_rows;
    const std::size_t chunks = std::min(kChunks, tiles);
    tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t chunk) {
      Partial& partial = partials[chunk];
      partial.pq.assign(p * q, 0.0);
      partial.norms.assign(q, 0.0);
      partial.qw.assign(q * r, 0.0);
      KernelMatrix::TileWorkspace& workspace = matrix.tile_workspace();
      std::vector<double> block_q;
      for (std::size_t t = chunk * tiles / chunks; t < (chunk + 1) * tiles / chunks; ++t) {
        const std::size_t offset = t * tile_rows;
        const std::size_t rows = std::min(tile_rows, count - offset);
        add_tile(inputs, first + offset, rows, x + offset * d, workspace, block_q, partial);
      }
    });
    for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
      const Partial& partial = partials[chunk];
      for (std::size_t k = 0; k < partial.pq.size(); ++k) result.pq[k] += partial.pq[k];
      for (std::size_t k = 0; k < q; ++k) result.q_squared_norms[k] += partial.norms[k];
      for (std::size_t k = 0; k < partial.qw.size(); ++k) result.q_times_w[k] += partial.qw[k];
    }
  };
  matrix.for_each_row_block(add_block);
  // Distributed: every rank's rows' sums, added (the same on every rank).
  Communicator& ranks = matrix.context().communicator();
  ranks.sum(result.pq);
  ranks.sum(result.q_squared_norms);
  ranks.sum(result.q_times_w);
  if (p_columns) {
    matrix.complete_columns(plan);
    matrix.count_kernel_evaluations(checked_multiply(matrix.size(), same ? 0 : q));
  } else {
    matrix.count_kernel_evaluations(checked_multiply(matrix.size(), same ? p : p + q));
  }
  return result;
}

}  // namespace gpstream

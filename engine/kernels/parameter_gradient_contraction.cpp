#include "engine/kernels/parameter_gradient_contraction.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <cblas.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <numeric>

namespace gpstream {

std::vector<double> contract_parameter_gradient(KernelMatrix& matrix, const double* left, const double* right,
                                                std::size_t c, std::span<const std::size_t> widths) {
  const Kernel& kernel = matrix.kernel();
  const std::size_t n = matrix.partition().global_rows, d = kernel.dimension();
  const std::size_t parameters = kernel.parameter_count(), blocks = widths.size();
  GPSTREAM_CHECK(std::accumulate(widths.begin(), widths.end(), std::size_t{0}) == c,
                 "contract_parameter_gradient: blocks of {} columns in all for {} columns",
                 std::accumulate(widths.begin(), widths.end(), std::size_t{0}), c);
  std::vector<double> result(checked_multiply(blocks, parameters), 0.0);
  const std::size_t panel = std::min(matrix.options().panel_columns, n);
  std::vector<double> x_panel(checked_multiply(panel, d));
  PreparedRows prepared_panel;
  // Rows of a chunk are taken this many at a time: W_w's rows × panel for every block fit in L2.
  constexpr std::size_t kChunks = 8, kSliceRows = 32;
  std::vector<std::vector<double>> partials(kChunks);
  for (std::size_t first = 0; first < n; first += panel) {  // every rank, rows or none: read_global_rows is collective
    const std::size_t count = std::min(panel, n - first);
    matrix.exchange().read_global_rows(first, count, x_panel.data());
    kernel.prepare(x_panel.data(), count, prepared_panel);
    auto add_block = [&](std::size_t block_first, std::size_t block_rows, const double* x) {
      const std::size_t slices = (block_rows + kSliceRows - 1) / kSliceRows;
      const std::size_t chunks = std::min(kChunks, slices);
      tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t chunk) {
        std::vector<double>& partial = partials[chunk];
        partial.assign(result.size(), 0.0);
        PreparedRows prepared;
        std::vector<double> weights(checked_multiply(blocks * kSliceRows, count));
        std::vector<const double*> weight_blocks(blocks);
        for (std::size_t slice = chunk * slices / chunks; slice < (chunk + 1) * slices / chunks; ++slice) {
          const std::size_t offset = slice * kSliceRows, rows = std::min(kSliceRows, block_rows - offset);
          kernel.prepare(x + offset * d, rows, prepared);
          std::size_t column = 0;
          for (std::size_t w = 0; w < blocks; ++w) {
            // W_w (rows × count) = L[slice rows, block w] · R[panel rows, block w]ᵀ.
            double* block = weights.data() + w * kSliceRows * count;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(count),
                        static_cast<int>(widths[w]), 1.0, left + (block_first + offset) * c + column,
                        static_cast<int>(c), right + first * c + column, static_cast<int>(c), 0.0, block,
                        static_cast<int>(count));
            weight_blocks[w] = block;
            column += widths[w];
          }
          kernel.add_parameter_gradients_serially(prepared.view(d), prepared_panel.view(d), weight_blocks,
                                                   partial.data());
        }
      });
      for (std::size_t chunk = 0; chunk < chunks; ++chunk)
        for (std::size_t k = 0; k < result.size(); ++k) result[k] += partials[chunk][k];
    };
    matrix.for_each_row_block(add_block);
  }
  matrix.context().communicator().sum(result);
  matrix.count_kernel_evaluations(checked_multiply(matrix.size(), n));
  return result;
}

}  // namespace gpstream

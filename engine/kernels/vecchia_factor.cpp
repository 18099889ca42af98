#include "engine/kernels/vecchia_factor.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"
#include "engine/linalg/small_cholesky.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <limits>

namespace gpstream {
namespace {

constexpr std::size_t kChunkRows = 64;  // positions a task

}  // namespace

std::size_t VecchiaFactor::bytes(std::size_t n, std::size_t neighbours, std::size_t d) {
  const std::size_t entries = checked_multiply(n, checked_add(neighbours, 1));
  const std::size_t entry_bytes = 2 * (sizeof(double) + sizeof(std::uint32_t));
  return checked_add(checked_add(checked_multiply(entries, entry_bytes), checked_multiply(2 * (n + 1), 8)),
                     checked_add(ConditioningSets::bytes(n, neighbours), checked_multiply(n, d, sizeof(double))));
}

VecchiaFactor::VecchiaFactor(Context& context, RowSource& rows, const Kernel& kernel, std::size_t neighbours,
                             std::uint64_t seed)
    : context_(context), sets_(rows.rows(), neighbours, seed) {
  const std::size_t n = rows.rows(), d = rows.columns(), m = sets_.neighbours();
  GPSTREAM_CHECK(n < std::numeric_limits<std::uint32_t>::max(), "{} rows are more than a Vecchia factor holds", n);
  memory_ = context.memory().reserve(
      fmt::format("the Vecchia factor of K̄ ({} rows, {} neighbours each)", n, m), bytes(n, m, d),
      "train with `solver` gbcd, which needs no factor");
  // The rows in the sets' order (the factor reads them once; a spatial dataset's are a few doubles each).
  std::vector<double> x(checked_multiply(n, d)), in_order(checked_multiply(n, d));
  rows.read_rows(0, n, x.data(), nullptr);
  const std::span<const std::size_t> order = sets_.order();
  for (std::size_t k = 0; k < n; ++k) std::copy_n(x.data() + order[k] * d, d, in_order.data() + k * d);
  x = {};
  sets_.find(context, in_order.data(), d, conditioning_scale(kernel.hyperparameters(), d));

  offsets_.resize(n + 1);
  for (std::size_t k = 0; k < n; ++k) offsets_[k + 1] = offsets_[k] + sets_.set(k).size() + 1;
  columns_.resize(offsets_[n]);
  weights_.resize(offsets_[n]);
  const double noise = kernel.noise_variance();
  std::atomic<bool> failed = false;
  context.execute([&] {
    tbb::parallel_for(std::size_t{0}, (n + kChunkRows - 1) / kChunkRows, [&](std::size_t chunk) {
      std::vector<double> block_rows, block;
      PreparedRows prepared;
      for (std::size_t k = chunk * kChunkRows; k < std::min(n, (chunk + 1) * kChunkRows) && !failed; ++k) {
        const std::span<const std::uint32_t> set = sets_.set(k);
        const std::size_t size = set.size() + 1;
        block_rows.resize(size * d);
        for (std::size_t j = 0; j < size; ++j) {
          const std::size_t position = j < set.size() ? set[j] : k;
          std::copy_n(in_order.data() + position * d, d, block_rows.data() + j * d);
        }
        kernel.prepare(block_rows.data(), size, prepared);
        block.resize(size * size);
        kernel.evaluate(prepared, prepared, block.data());
        for (std::size_t j = 0; j < size; ++j) block[j * size + j] += noise;
        if (!small_cholesky::factor_in_place(block.data(), size)) {
          failed = true;
          return;
        }
        // U's row: the last row of L⁻¹, L⁻ᵀ e_last.
        double* u = weights_.data() + offsets_[k];
        std::fill_n(u, size, 0.0);
        u[size - 1] = 1.0;
        small_cholesky::backward_solve(block.data(), size, u);
        for (std::size_t j = 0; j < size; ++j) {
          columns_[offsets_[k] + j] = static_cast<std::uint32_t>(order[j < set.size() ? set[j] : k]);
        }
      }
    });
  });
  if (failed) {
    throw_not_positive_definite("K̄", fmt::format("a conditioning block of its Vecchia factor (noise variance {:.3g}) "
                                                "failed to factor",
                                                noise));
  }
  // Uᵀ by rows: each row's entries in position order, so that the sums below have one order.
  transpose_offsets_.assign(n + 1, 0);
  for (const std::uint32_t column : columns_) ++transpose_offsets_[column + 1];
  for (std::size_t j = 0; j < n; ++j) transpose_offsets_[j + 1] += transpose_offsets_[j];
  transpose_positions_.resize(columns_.size());
  transpose_weights_.resize(columns_.size());
  std::vector<std::uint64_t> next(transpose_offsets_.begin(), transpose_offsets_.end() - 1);
  for (std::size_t k = 0; k < n; ++k) {
    for (std::uint64_t e = offsets_[k]; e < offsets_[k + 1]; ++e) {
      const std::uint64_t slot = next[columns_[e]]++;
      transpose_positions_[slot] = static_cast<std::uint32_t>(k);
      transpose_weights_[slot] = weights_[e];
    }
  }
}

void VecchiaFactor::apply_inverse(std::span<const double> r, std::span<double> z) const {
  const std::size_t n = size();
  GPSTREAM_CHECK(r.size() == n && z.size() == n, "the Vecchia factor has {} rows, not {} and {}", n, r.size(),
                 z.size());
  std::vector<double> s(n);  // U r, by position
  context_.execute([&] {
    tbb::parallel_for(std::size_t{0}, n, [&](std::size_t k) {
      double sum = 0.0;
      for (std::uint64_t e = offsets_[k]; e < offsets_[k + 1]; ++e) sum += weights_[e] * r[columns_[e]];
      s[k] = sum;
    });
    tbb::parallel_for(std::size_t{0}, n, [&](std::size_t j) {
      double sum = 0.0;
      for (std::uint64_t e = transpose_offsets_[j]; e < transpose_offsets_[j + 1]; ++e) {
        sum += transpose_weights_[e] * s[transpose_positions_[e]];
      }
      z[j] = sum;
    });
  });
}

}  // namespace gpstream

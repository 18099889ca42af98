#include "engine/solvers/sequential_minimal_optimization.h"

#include "engine/core/error.h"
#include "engine/linalg/cholesky.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <array>

namespace gpstream {
namespace {

struct Extremes {
  double high = -std::numeric_limits<double>::infinity();
  double low = std::numeric_limits<double>::infinity();
  std::size_t high_index = 0;
  std::size_t low_index = 0;
};

Extremes join(const Extremes& a, const Extremes& b) {
  Extremes result = a;
  if (b.high > a.high || (b.high == a.high && b.high_index < a.high_index))
    result.high = b.high, result.high_index = b.high_index;
  if (b.low < a.low || (b.low == a.low && b.low_index < a.low_index))
    result.low = b.low, result.low_index = b.low_index;
  return result;
}

}  // namespace

SequentialMinimalOptimization::SequentialMinimalOptimization(KernelMatrix& kernel)
    : kernel_(kernel), diagonal_(kernel.size()) {
  kernel_.diagonal(diagonal_.data());
}

void SequentialMinimalOptimization::iterate(SolverState& state, std::span<const double> /*y*/) {
  const std::span<const double> g = state.gradient;
  const Extremes pair = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, g.size(), 1u << 14), Extremes{},
      [&](const tbb::blocked_range<std::size_t>& range, Extremes extremes) {
        for (std::size_t k = range.begin(); k != range.end(); ++k) {
          if (g[k] > extremes.high) extremes.high = g[k], extremes.high_index = k;
          if (g[k] < extremes.low) extremes.low = g[k], extremes.low_index = k;
        }
        return extremes;
      },
      join);
  const std::size_t i = pair.high_index;
  const std::size_t j = pair.low_index;
  const std::size_t d = kernel_.rows().columns();
  std::vector<std::size_t> indices = {i};
  if (j != i) indices.push_back(j);
  std::vector<double> rows(indices.size() * d);
  kernel_.rows().gather_rows(indices, rows.data(), nullptr);

  std::array<double, 2> delta{};
  if (indices.size() == 1) {
    delta[0] = -g[i] / diagonal_[i];
  } else {
    // [K̄_ii K̄_ij; K̄_ij K̄_jj] Δ = −[g_i; g_j], solved by Cramer's rule.
    double k_ij = 0.0;
    kernel_.block(rows.data(), 1, rows.data() + d, 1, &k_ij);
    kernel_.count_kernel_evaluations(1);
    const double determinant = diagonal_[i] * diagonal_[j] - k_ij * k_ij;
    if (!(determinant > kSingularRelativeFloor * diagonal_[i] * diagonal_[j])) {
      throw_not_positive_definite(
          "K̄", fmt::format("smo's 2×2 block at rows {} and {} has determinant {:.3g}", i, j, determinant));
    }
    delta[0] = (-g[i] * diagonal_[j] + g[j] * k_ij) / determinant;
    delta[1] = (-g[j] * diagonal_[i] + g[i] * k_ij) / determinant;
  }
  for (std::size_t k = 0; k < indices.size(); ++k) state.alpha[indices[k]] += delta[k];
  kernel_.multiply_columns(indices, rows.data(), delta.data(), 1, state.gradient.data(), true);
}

}  // namespace gpstream

#include "engine/solvers/block_coordinate_descent.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"

#include <algorithm>

namespace gpstream {
namespace {

// G_B: rows `indices` of the gradient (this rank's rows × r), from their owners.
void collect_gradient(KernelMatrix& kernel, std::span<const std::size_t> indices, const double* gradient, std::size_t r,
                      std::vector<double>& out) {
  out = kernel.collect_values(indices, std::span(gradient, checked_multiply(kernel.size(), r)), r);
}

}  // namespace

BlockCoordinateDescent::BlockCoordinateDescent(KernelMatrix& kernel, std::unique_ptr<ActiveSetPolicy> policy,
                                               std::size_t active_set_size)
    : kernel_(kernel), policy_(std::move(policy)), active_set_size_(active_set_size), diagonal_(kernel.size()) {
  GPSTREAM_CHECK(active_set_size > 0, "the active set size m must be at least 1");
  kernel_.diagonal(diagonal_.data());
}

void BlockCoordinateDescent::iterate(SolverState& state, std::span<const double> /*y*/) {
  const ActiveSet& active = iterate_columns({state.gradient.data(), 1}, state.random, state.auxiliary, delta_);
  const RowPartition& partition = kernel_.partition();
  for (std::size_t j = 0; j < active.indices.size(); ++j) {
    if (partition.owns(active.indices[j])) state.alpha[partition.local(active.indices[j])] += delta_[j];
  }
}

const ActiveSet& BlockCoordinateDescent::iterate_columns(const Columns& columns, std::mt19937_64& random,
                                                         AuxiliaryState& auxiliary, std::vector<double>& delta,
                                                         std::vector<double>* gradient_on_b) {
  double* gradient = columns.gradient;
  const std::size_t r = columns.r;
  SelectionContext context{kernel_,
                           diagonal_,
                           std::min(active_set_size_, kernel_.partition().global_rows),
                           columns.scored != nullptr ? columns.scored : gradient,
                           columns.scored != nullptr ? columns.scored_columns : r,
                           random,
                           auxiliary};
  active_set_.has_cholesky = false;
  policy_->select(context, active_set_);
  const std::vector<std::size_t>& b = active_set_.indices;
  const std::size_t m = b.size();
  delta.resize(checked_multiply(m, r));
  if (m == 0) return active_set_;

  std::vector<double>& factor = active_set_.cholesky;
  if (!active_set_.has_cholesky) {
    factor.resize(m * m);
    kernel_.block(active_set_.rows.data(), m, active_set_.rows.data(), m, factor.data());
    for (std::size_t j = 0; j < m; ++j) factor[j * m + j] += kernel_.kernel().noise_variance();
    kernel_.count_kernel_evaluations(m * m);
    cholesky_factor(factor.data(), m, "the active-set block K̄_BB");
  }
  // Δ = −K̄_BB⁻¹ G_B (the sub-problem (6) solved exactly on B, per column).
  collect_gradient(kernel_, b, gradient, r, active_set_.gradient);
  for (std::size_t k = 0; k < m * r; ++k) delta[k] = -active_set_.gradient[k];
  if (gradient_on_b != nullptr) {
    gradient_on_b->resize(delta.size());
    std::transform(delta.begin(), delta.end(), gradient_on_b->begin(), [](double value) { return -value; });
  }
  cholesky_solve(factor.data(), m, delta.data(), r);
  kernel_.multiply_columns(b, active_set_.rows.data(), delta.data(), r, gradient, true);
  return active_set_;
}

std::unique_ptr<ActiveSetPolicy> make_active_set_policy(const std::string& name, std::size_t candidates) {
  if (name == "gbcd") {
    GPSTREAM_CHECK(candidates > 0, "the number of greedy candidates κ must be at least 1");
    return std::make_unique<GreedySelection>(candidates);
  }
  if (name == "bcd-cyclic") return std::make_unique<CyclicSelection>();
  if (name == "bcd-gradient") return std::make_unique<GradientSelection>();
  GPSTREAM_THROW("unknown active-set policy \"{}\" (choose gbcd, bcd-cyclic or bcd-gradient)", name);
}

}  // namespace gpstream

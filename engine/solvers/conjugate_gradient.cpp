#include "engine/solvers/conjugate_gradient.h"

#include "engine/core/error.h"
#include "engine/linalg/cholesky.h"
#include "engine/solvers/mixed_precision.h"

#include <tbb/parallel_for.h>

#include <algorithm>

namespace gpstream {

ConjugateGradient::ConjugateGradient(KernelMatrix& kernel, std::unique_ptr<VecchiaFactor> preconditioner,
                                     bool single_precision)
    : kernel_(kernel), preconditioner_(std::move(preconditioner)), single_precision_asked_(single_precision) {
  GPSTREAM_CHECK(!preconditioner_ || !kernel.distributed(), "pcg runs in one process");
  std::vector<double> diagonal(kernel.size());
  kernel.diagonal(diagonal.data());
  if (!diagonal.empty()) largest_diagonal_ = *std::max_element(diagonal.begin(), diagonal.end());
  largest_diagonal_ = kernel.context().communicator().max(largest_diagonal_);
}

std::vector<double> ConjugateGradient::every_row(std::span<const double> local) const {
  return kernel_.context().communicator().all_gather(local);
}

std::vector<double> ConjugateGradient::preconditioned_residual(std::span<const double> gradient) const {
  std::vector<double> residual(gradient.size());
  for (std::size_t i = 0; i < gradient.size(); ++i) residual[i] = -gradient[i];
  if (!preconditioner_) return residual;
  std::vector<double> z(residual.size());
  preconditioner_->apply_inverse(residual, z);
  return z;
}

std::string ConjugateGradient::plan_precision(const SolverState& state) {
  const PrecisionPlan plan =
      gpstream::plan_precision(state, single_precision_asked_, kernel_,
                               largest_diagonal_ - kernel_.kernel().noise_variance(), "the products K̄p");
  single_precision_ = plan.single;
  return plan.line;
}

void ConjugateGradient::use_double_precision(SolverState& state) {
  fall_back_to_double(state);
  state.auxiliary["cg_direction"] = preconditioned_residual(every_row(state.gradient));
}

// auxiliary["cg_direction"] = p (all n rows), auxiliary["cg_residual_norm"] = {rᵀz} (z = r for cg).
void ConjugateGradient::start(SolverState& state, std::span<const double> /*y*/) {
  start_precision(state, single_precision_);
  const std::vector<double> gradient = every_row(state.gradient);
  std::vector<double>& direction = state.auxiliary["cg_direction"];
  direction = preconditioned_residual(gradient);  // p₀ = z₀ = M r₀, r₀ = −g₀
  state.auxiliary["cg_residual_norm"] = {-deterministic_dot(gradient, direction)};
}

void ConjugateGradient::gradient_refreshed(SolverState& state) {
  const std::vector<double> gradient = every_row(state.gradient);
  state.auxiliary["cg_residual_norm"] = {-deterministic_dot(gradient, preconditioned_residual(gradient))};
}

void ConjugateGradient::iterate(SolverState& state, std::span<const double> /*y*/) {
  auto direction_entry = state.auxiliary.find("cg_direction");
  auto norm_entry = state.auxiliary.find("cg_residual_norm");
  GPSTREAM_CHECK(direction_entry != state.auxiliary.end() && norm_entry != state.auxiliary.end(),
                 "the CG state is incomplete (a checkpoint from another solver?)");
  std::vector<double>& p = direction_entry->second;
  double& residual_norm = norm_entry->second.at(0);
  const RowPartition& own = kernel_.partition();
  GPSTREAM_CHECK(p.size() == own.global_rows, "the CG direction has {} values for {} rows", p.size(), own.global_rows);
  const std::size_t n = own.count;
  product_.resize(n);
  // q = K̄p, this rank's rows: a pass over all n² entries, dropped on a stop request before anything changed.
  if (!kernel_.multiply_unless_stopped(p.data(), product_.data(), products_precision(state))) throw StopRequested();
  // The dot products over all n rows in one fixed order: the same bits on any number of ranks.
  const double curvature = deterministic_dot(p, every_row(product_));
  // pᵀK̄p ≥ σ²‖p‖²: a Rayleigh quotient below the floor means K̄ is singular to working precision.
  const double squared_norm = deterministic_dot(p, p);
  if (!(curvature > kSingularRelativeFloor * largest_diagonal_ * squared_norm)) {
    throw_not_positive_definite("K̄", fmt::format("{} found pᵀK̄p / pᵀp = {:.3g}", name(), curvature / squared_norm));
  }
  const double step = residual_norm / curvature;
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) {
    state.alpha[i] += step * p[own.first + i];
    state.gradient[i] += step * product_[i];
  });
  const std::vector<double> gradient = every_row(state.gradient);
  const std::vector<double> z = preconditioned_residual(gradient);
  const double new_norm = -deterministic_dot(gradient, z);
  const double ratio = new_norm / residual_norm;
  tbb::parallel_for(std::size_t{0}, p.size(), [&](std::size_t i) { p[i] = z[i] + ratio * p[i]; });
  residual_norm = new_norm;
}

}  // namespace gpstream

#include "engine/solvers/conjugate_gradient.h"

#include "engine/core/error.h"
#include "engine/linalg/cholesky.h"

#include <tbb/parallel_for.h>

#include <algorithm>

namespace gpstream {

ConjugateGradient::ConjugateGradient(KernelMatrix& kernel) : kernel_(kernel) {
  std::vector<double> diagonal(kernel.size());
  kernel.diagonal(diagonal.data());
  if (!diagonal.empty()) largest_diagonal_ = *std::max_element(diagonal.begin(), diagonal.end());
}

// auxiliary["cg_direction"] = p, auxiliary["cg_residual_norm"] = {rᵀr}.
void ConjugateGradient::start(SolverState& state, std::span<const double> /*y*/) {
  std::vector<double>& direction = state.auxiliary["cg_direction"];
  direction.resize(state.gradient.size());
  for (std::size_t i = 0; i < direction.size(); ++i) direction[i] = -state.gradient[i];  // p₀ = r₀ = −g₀
  state.auxiliary["cg_residual_norm"] = {deterministic_dot(state.gradient, state.gradient)};
}

void ConjugateGradient::gradient_refreshed(SolverState& state) {
  state.auxiliary["cg_residual_norm"] = {deterministic_dot(state.gradient, state.gradient)};
}

void ConjugateGradient::iterate(SolverState& state, std::span<const double> /*y*/) {
  auto direction_entry = state.auxiliary.find("cg_direction");
  auto norm_entry = state.auxiliary.find("cg_residual_norm");
  GPSTREAM_CHECK(direction_entry != state.auxiliary.end() && norm_entry != state.auxiliary.end(),
                 "the CG state is incomplete (a checkpoint from another solver?)");
  std::vector<double>& p = direction_entry->second;
  double& residual_norm = norm_entry->second.at(0);
  const std::size_t n = p.size();
  product_.resize(n);
  kernel_.multiply(p.data(), product_.data());  // q = K̄p
  const double curvature = deterministic_dot(p, product_);
  // pᵀK̄p ≥ σ²‖p‖²: a Rayleigh quotient below the floor means K̄ is singular to working precision.
  const double squared_norm = deterministic_dot(p, p);
  if (!(curvature > kSingularRelativeFloor * largest_diagonal_ * squared_norm)) {
    throw_not_positive_definite("K̄", fmt::format("cg found pᵀK̄p / pᵀp = {:.3g}", curvature / squared_norm));
  }
  const double step = residual_norm / curvature;
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) {
    state.alpha[i] += step * p[i];
    state.gradient[i] += step * product_[i];
  });
  const double new_norm = deterministic_dot(state.gradient, state.gradient);
  const double ratio = new_norm / residual_norm;
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) { p[i] = -state.gradient[i] + ratio * p[i]; });
  residual_norm = new_norm;
}

}  // namespace gpstream

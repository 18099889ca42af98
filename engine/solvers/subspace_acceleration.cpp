#include "engine/solvers/subspace_acceleration.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpstream {
namespace {

// The history in SolverState::auxiliary: D_j and K̄D_j (all n rows, step j
// at offset j·n, a ring of k slots), their Gram matrix D_iᵀK̄D_j (k×k), and
// how many steps were ever pushed (the newest is in slot (count − 1) mod k).
constexpr const char* kSteps = "subspace_steps";
constexpr const char* kProducts = "subspace_products";
constexpr const char* kGram = "subspace_gram";
constexpr const char* kCount = "subspace_count";
// The gradient's error bound (subspace_acceleration.h): {β ≥ max_i |g_i − (K̂α − y)_i|, A ≥ ‖α‖₁}, and per
// slot {E_j ≥ max_i |(K̄D_j)_i − (K̂D_j)_i|, L_j ≥ ‖D_j‖₁} (2k values), for the stored D_j and K̄D_j.
constexpr const char* kErrorBound = "gradient_error_bound";
constexpr const char* kStepBounds = "subspace_step_bounds";

constexpr double kUnitRoundoff = std::numeric_limits<double>::epsilon() / 2;
// γ_k = ku/(1 − ku): a sum of k products is within γ_k Σ|terms| of its exact value [Higham02 Lemma 3.1].
double gamma(std::size_t k) {
  const double ku = static_cast<double>(k) * kUnitRoundoff;
  return ku / (1.0 - ku);
}

// A past step whose part outside the span of p and the newer steps holds
// less than this fraction of its K̄-norm² is left out: its weight would be
// rounding amplified (the steps of a converging run grow nearly parallel).
constexpr double kIndependenceFloor = 1e-8;

std::vector<double>& saved_values(SolverState& state, const char* name, std::size_t size) {
  const auto found = state.auxiliary.find(name);
  GPSTREAM_CHECK(found != state.auxiliary.end(), "checkpoint: the subspace acceleration has no '{}'", name);
  std::vector<double>& values = found->second;
  GPSTREAM_CHECK(values.size() == size, "checkpoint: the subspace acceleration's '{}' holds {} values, not {}", name,
                 values.size(), size);
  return values;
}

}  // namespace

SubspaceAcceleration::SubspaceAcceleration(KernelMatrix& kernel, std::size_t steps)
    : kernel_(kernel), steps_(steps), factor_(steps + 1) {
  GPSTREAM_CHECK_ARGUMENT(steps > 0, "the subspace acceleration needs at least one past step");
  // |K̂_ij| ≤ s² for a stationary family (the computed k(x, z) exceeds its value at 0 by a few ulps at most:
  // the margin is 1e-10) and ≤ s² + σ² with the noise on the diagonal.
  if (const std::optional<double> diagonal = kernel.kernel().constant_self_covariance())
    entry_bound_ = *diagonal * (1.0 + 1e-10) + kernel.kernel().noise_variance();
}

void SubspaceAcceleration::start(SolverState& state, bool exact_gradient) const {
  const std::size_t n = kernel_.partition().global_rows;
  state.auxiliary[kSteps].assign(checked_multiply(steps_, n), 0.0);
  state.auxiliary[kProducts].assign(checked_multiply(steps_, n), 0.0);
  state.auxiliary[kGram].assign(steps_ * steps_, 0.0);
  state.auxiliary[kCount] = {0.0};
  forget_error_bound(state);
  if (exact_gradient && entry_bound_) {
    state.auxiliary[kErrorBound] = {0.0, 0.0};
    state.auxiliary[kStepBounds].assign(2 * steps_, 0.0);
  }
}

std::optional<double> SubspaceAcceleration::gradient_error_bound(const SolverState& state) const {
  const auto found = state.auxiliary.find(kErrorBound);
  if (found == state.auxiliary.end() || found->second.size() != 2) return std::nullopt;
  return found->second[0];
}

void SubspaceAcceleration::forget_error_bound(SolverState& state) const {
  state.auxiliary.erase(kErrorBound);
  state.auxiliary.erase(kStepBounds);
}

// With p = Δα on B, q = fl(K̂p), the step s = fl(w₀p + Σ w_j D_j) and its product P = fl(w₀q + Σ w_j K̄D_j):
//   |q − K̂p| ≤ c_q = γ_{m+1} k̄ ‖p‖₁  (m products and the σ² term, k̄ ≥ every |K̂_ij|),
//   P − K̂s = w₀(q − K̂p) + Σ w_j (K̄D_j − K̂D_j) + (P's rounding) − K̂(s's rounding), both roundings
//   within γ_{k+2} of their terms, so with T = |w₀|‖p‖₁ + Σ|w_j|L_j:
//   E_new = (1 + γ)(|w₀|c_q + Σ|w_j|E_j) + 2γ k̄ T,  L_new = (1 + γ) T;
// then α += s and g += P, each sum rounded once: α's roundings δ (|δ_i| ≤ u|α_i|) move K̂α by ≤ k̄ u ‖α‖₁ and
// g's by ≤ u max|g_i|, so β_new = β + E_new + u G + k̄ u A_new, A_new = (1 + u)(A + L_new).
void SubspaceAcceleration::bound_step(SolverState& state, std::span<const double> delta, std::uint64_t count,
                                      std::size_t held, double gradient_bound) const {
  const auto bound = state.auxiliary.find(kErrorBound);
  const auto step_bounds = state.auxiliary.find(kStepBounds);
  if (bound == state.auxiliary.end() || step_bounds == state.auxiliary.end() || bound->second.size() != 2 ||
      step_bounds->second.size() != 2 * steps_ || !entry_bound_) {
    forget_error_bound(state);  // a state without a (whole) bound keeps none
    return;
  }
  const double entry = *entry_bound_, combination = gamma(held + 2);
  double delta_norm = 0.0;
  for (const double value : delta) delta_norm += std::abs(value);
  delta_norm *= 1.0 + gamma(delta.size());
  std::vector<double>& slots = step_bounds->second;
  double carried = std::abs(weights_[0]) * gamma(delta.size() + 1) * entry * delta_norm;
  double spread = std::abs(weights_[0]) * delta_norm;
  for (std::size_t j = 1; j <= held; ++j) {
    const std::size_t slot = static_cast<std::size_t>((count - j) % steps_);
    carried += std::abs(weights_[j]) * slots[2 * slot];
    spread += std::abs(weights_[j]) * slots[2 * slot + 1];
  }
  const double product_error = (1.0 + combination) * carried + 2.0 * combination * entry * spread;
  const double step_norm = (1.0 + combination) * spread;
  const std::size_t target = static_cast<std::size_t>(count % steps_);
  slots[2 * target] = product_error;
  slots[2 * target + 1] = step_norm;
  double& error = bound->second[0];
  double& alpha_norm = bound->second[1];
  alpha_norm = (1.0 + kUnitRoundoff) * (alpha_norm + step_norm);
  error += product_error + kUnitRoundoff * gradient_bound + entry * kUnitRoundoff * alpha_norm;
}

void SubspaceAcceleration::step(SolverState& state, std::span<const std::size_t> b, std::span<const double> delta,
                                std::span<const double> block_product) {
  if (state.auxiliary.find(kCount) == state.auxiliary.end()) start(state, /*exact_gradient=*/false);
  const RowPartition& own = kernel_.partition();
  const std::size_t n = own.global_rows;
  Communicator& ranks = kernel_.context().communicator();
  const std::size_t k = steps_;
  std::vector<double>& past = saved_values(state, kSteps, k * n);
  std::vector<double>& products = saved_values(state, kProducts, k * n);
  std::vector<double>& gram = saved_values(state, kGram, k * k);
  std::vector<double>& count_entry = saved_values(state, kCount, 1);
  const auto count = static_cast<std::uint64_t>(count_entry[0]);
  const std::size_t held = static_cast<std::size_t>(std::min<std::uint64_t>(count, k));

  // g and K̄p over all n rows.
  const double* g = state.gradient.data();
  const double* q = block_product.data();
  if (ranks.size() > 1) {
    every_gradient_ = ranks.all_gather(state.gradient);
    every_product_ = ranks.all_gather(block_product);
    g = every_gradient_.data();
    q = every_product_.data();
  }
  // Direction 0 is p; direction j ≥ 1 the j-th newest past step, in slot(j).
  auto slot = [&](std::size_t j) { return static_cast<std::size_t>((count - j) % k); };
  offsets_.resize(held + 1);
  for (std::size_t j = 1; j <= held; ++j) offsets_[j] = slot(j) * n;
  auto on_b = [&](const double* values) {
    double sum = 0.0;
    for (std::size_t t = 0; t < b.size(); ++t) sum += delta[t] * values[b[t]];
    return sum;
  };
  auto curvature = [&](std::size_t i, std::size_t j) {  // (SᵀK̄S)_ij
    if (i > j) std::swap(i, j);
    if (i == 0) return j == 0 ? on_b(q) : on_b(products.data() + offsets_[j]);
    return gram[slot(i) * k + slot(j)];
  };
  right_side_.assign(held + 1, 0.0);  // −Sᵀg
  right_side_[0] = -on_b(g);
  for (std::size_t j = 1; j <= held; ++j)
    right_side_[j] = -deterministic_dot(std::span(past.data() + offsets_[j], n), std::span(g, n));

  // SᵀK̄S c = −Sᵀg on the directions that are independent enough, p first.
  factor_.clear();
  kept_.clear();
  for (std::size_t j = 0; j <= held; ++j) {
    column_.resize(kept_.size());
    for (std::size_t t = 0; t < kept_.size(); ++t) column_[t] = curvature(kept_[t], j);
    if (factor_.append(column_.data(), curvature(j, j), j == 0 ? kSingularRelativeFloor : kIndependenceFloor))
      kept_.push_back(j);
  }
  weights_.assign(held + 1, 0.0);
  column_.resize(kept_.size());
  for (std::size_t t = 0; t < kept_.size(); ++t) column_[t] = right_side_[kept_[t]];
  factor_.solve_columns(column_.data(), 1, false);
  factor_.solve_columns(column_.data(), 1, true);
  for (std::size_t t = 0; t < kept_.size(); ++t) weights_[kept_[t]] = column_[t];

  // The new step S c and K̄S c into the oldest slot, row by row (each row
  // reads every slot before it writes one), then α and g on this rank's rows.
  const std::size_t target = static_cast<std::size_t>(count % k);
  double* new_step = past.data() + target * n;
  double* new_product = products.data() + target * n;
  // Also max_i (|g_i| + |P_i|) over all n, ≥ every |g_i| after the step but for its rounding (a maximum:
  // the same bits in any order).
  const double gradient_bound = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n), 0.0,
      [&](const tbb::blocked_range<std::size_t>& range, double largest) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
          double step = 0.0, product = weights_[0] * q[i];
          for (std::size_t j = 1; j <= held; ++j) {
            step += weights_[j] * past[offsets_[j] + i];
            product += weights_[j] * products[offsets_[j] + i];
          }
          new_step[i] = step;
          new_product[i] = product;
          largest = std::max(largest, std::abs(g[i]) + std::abs(product));
        }
        return largest;
      },
      [](double left, double right) { return std::max(left, right); });
  for (std::size_t t = 0; t < b.size(); ++t) new_step[b[t]] += weights_[0] * delta[t];
  tbb::parallel_for(std::size_t{0}, own.count, [&](std::size_t i) {
    state.alpha[i] += new_step[own.first + i];
    state.gradient[i] += new_product[own.first + i];
  });

  // Its row of the Gram matrix, against every step now held.
  count_entry[0] = static_cast<double>(count + 1);
  bound_step(state, delta, count, held, (1.0 + kUnitRoundoff) * gradient_bound);
  const std::size_t now_held = std::min<std::size_t>(held + 1, k);
  for (std::size_t s = 0; s < now_held; ++s) {
    const double value = deterministic_dot(std::span(new_step, n), std::span(products.data() + s * n, n));
    gram[target * k + s] = value;
    gram[s * k + target] = value;
  }
}

}  // namespace gpstream

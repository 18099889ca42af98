#include "engine/solvers/block_coordinate_descent.h"

#include "engine/core/error.h"
#include "engine/core/human_readable.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"
#include "engine/solvers/mixed_precision.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpstream {
namespace {

// G_B: rows `indices` of the gradient (this rank's rows × r), from their owners.
void collect_gradient(KernelMatrix& kernel, std::span<const std::size_t> indices, const double* gradient, std::size_t r,
                      std::vector<double>& out) {
  out = kernel.exchange().collect_values(indices, std::span(gradient, checked_multiply(kernel.size(), r)), r);
}

}  // namespace

BlockCoordinateDescent::BlockCoordinateDescent(KernelMatrix& kernel, std::unique_ptr<ActiveSetPolicy> policy,
                                               std::size_t active_set_size, std::size_t subspace_steps,
                                               bool single_precision)
    : kernel_(kernel),
      policy_(std::move(policy)),
      active_set_size_(active_set_size),
      single_precision_asked_(single_precision),
      diagonal_(kernel.size()) {
  GPSTREAM_CHECK_ARGUMENT(active_set_size > 0, "the active set size m must be at least 1");
  // A solver's fixed workspace is outside the memory budget (docs/reliability.md: gbcd holds about 30 MiB at
  // m = 500 on ten inputs); what grows past it with the inputs' width is reserved, so that wide data are refused
  // up front rather than running out of memory late (300 rows of 100,000 inputs: 72 GB of candidate rows).
  constexpr std::size_t kFixedWorkspaceBytes = std::size_t{32} << 20;
  const std::size_t m = std::min(active_set_size, kernel.partition().global_rows), d = kernel.rows().columns();
  const std::size_t rows = policy_->rows_held(m), bytes = checked_multiply(rows, d, sizeof(double));
  if (bytes > kFixedWorkspaceBytes) {
    workspace_ = kernel.context().memory().reserve(
        fmt::format("the {} selection's {} copies of rows of {} inputs (beyond its fixed {})", policy_->name(),
                    format_count(rows), format_count(d), format_bytes(static_cast<double>(kFixedWorkspaceBytes))),
        bytes - kFixedWorkspaceBytes, "use fewer candidates or a smaller active set");
  }
  if (subspace_steps > 0) subspace_ = std::make_unique<SubspaceAcceleration>(kernel, subspace_steps);
  kernel_.diagonal(diagonal_.data());
}

std::string BlockCoordinateDescent::plan_precision(const SolverState& state) {
  const double noise = kernel_.kernel().noise_variance();
  const double signal = kernel_.context().communicator().max(
      diagonal_.empty() ? 0.0 : *std::max_element(diagonal_.begin(), diagonal_.end()) - noise);
  const PrecisionPlan plan =
      gpstream::plan_precision(state, single_precision_asked_, kernel_, signal, "the block products and greedy scores");
  single_precision_ = plan.single;
  return plan.line;
}

void BlockCoordinateDescent::start(SolverState& state, std::span<const double> y) {
  start_precision(state, single_precision_);
  if (!subspace_) return;
  // The error bound starts at 0 only from the state start() promises, checked, and in double precision.
  bool exact = state.alpha.size() == y.size() && state.gradient.size() == y.size() && !single_precision(state);
  for (std::size_t i = 0; exact && i < y.size(); ++i) exact = state.alpha[i] == 0.0 && state.gradient[i] == -y[i];
  subspace_->start(state, !kernel_.context().communicator().any(!exact));
}

void BlockCoordinateDescent::use_double_precision(SolverState& state) { fall_back_to_double(state); }

void BlockCoordinateDescent::gradient_refreshed(SolverState& state) {
  if (subspace_) subspace_->forget_error_bound(state);
}

std::optional<double> BlockCoordinateDescent::gradient_error_bound(const SolverState& state) const {
  return subspace_ ? subspace_->gradient_error_bound(state) : std::nullopt;
}

void BlockCoordinateDescent::iterate(SolverState& state, std::span<const double> /*y*/) {
  const Columns columns{state.gradient.data(), 1};
  PhaseTimes* times = kernel_.context().phase_times();
  const Precision precision = products_precision(state);
  if (subspace_) {
    const ActiveSet& active = solve_on_active_set(columns, state.random, state.auxiliary, delta_, nullptr, precision);
    block_product_.resize(kernel_.size());
    if (active.indices.empty()) return;
    {
      const ScopedPhase phase(times, Phase::block_product);
      kernel_.multiply_columns(active.indices, active.rows.data(), delta_.data(), 1, block_product_.data(), false,
                               precision);
    }
    const ScopedPhase phase(times, Phase::subspace_step);
    subspace_->step(state, active.indices, delta_, block_product_);
    return;
  }
  const ActiveSet& active = iterate_columns(columns, state.random, state.auxiliary, delta_, nullptr, precision);
  const RowPartition& partition = kernel_.partition();
  for (std::size_t j = 0; j < active.indices.size(); ++j) {
    if (partition.owns(active.indices[j])) state.alpha[partition.local(active.indices[j])] += delta_[j];
  }
}

const ActiveSet& BlockCoordinateDescent::iterate_columns(const Columns& columns, std::mt19937_64& random,
                                                         AuxiliaryState& auxiliary, std::vector<double>& delta,
                                                         std::vector<double>* gradient_on_b, Precision precision) {
  const ActiveSet& active = solve_on_active_set(columns, random, auxiliary, delta, gradient_on_b, precision);
  if (!active.indices.empty()) {
    const ScopedPhase phase(kernel_.context().phase_times(), Phase::block_product);
    kernel_.multiply_columns(active.indices, active.rows.data(), delta.data(), columns.r, columns.gradient, true,
                             precision);
  }
  return active;
}

const ActiveSet& BlockCoordinateDescent::solve_on_active_set(const Columns& columns, std::mt19937_64& random,
                                                             AuxiliaryState& auxiliary, std::vector<double>& delta,
                                                             std::vector<double>* gradient_on_b, Precision precision) {
  double* gradient = columns.gradient;
  const std::size_t r = columns.r;
  SelectionContext context{kernel_,
                           diagonal_,
                           std::min(active_set_size_, kernel_.partition().global_rows),
                           columns.scored != nullptr ? columns.scored : gradient,
                           columns.scored != nullptr ? columns.scored_columns : r,
                           random,
                           auxiliary,
                           precision};
  active_set_.has_cholesky = false;
  policy_->select(context, active_set_);
  const ScopedPhase phase(kernel_.context().phase_times(), Phase::block_solve);
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
  return active_set_;
}

namespace {

std::unique_ptr<ActiveSetPolicy> make_greedy(std::size_t candidates) {
  GPSTREAM_CHECK_ARGUMENT(candidates > 0, "the number of greedy candidates κ must be at least 1");
  return std::make_unique<GreedySelection>(candidates);
}
template <class Policy>
std::unique_ptr<ActiveSetPolicy> make_policy(std::size_t) {
  return std::make_unique<Policy>();
}

// The policies, by the names of their solvers in the method registry (engine/training/training_method.cpp).
struct PolicyEntry {
  const char* name;
  std::unique_ptr<ActiveSetPolicy> (*make)(std::size_t candidates);
};
constexpr PolicyEntry kPolicies[] = {
    {"gbcd", make_greedy},
    {"bcd-cyclic", make_policy<CyclicSelection>},
    {"bcd-gradient", make_policy<GradientSelection>},
};

}  // namespace

std::unique_ptr<ActiveSetPolicy> make_active_set_policy(const std::string& name, std::size_t candidates) {
  for (const PolicyEntry& policy : kPolicies) {
    if (name == policy.name) return policy.make(candidates);
  }
  GPSTREAM_THROW_ARGUMENT("unknown active-set policy \"{}\" (choose gbcd, bcd-cyclic or bcd-gradient)", name);
}

}  // namespace gpstream

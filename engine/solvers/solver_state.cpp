#include "engine/solvers/solver_state.h"

#include "engine/core/error.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

namespace gpstream {

SolverState initial_solver_state(std::span<const double> y, std::uint64_t seed) {
  SolverState state;
  state.alpha.assign(y.size(), 0.0);
  state.gradient.resize(y.size());
  std::transform(y.begin(), y.end(), state.gradient.begin(), std::negate<>());
  state.random.seed(seed);
  return state;
}

double deterministic_dot(std::span<const double> a, std::span<const double> b) {
  GPSTREAM_CHECK(a.size() == b.size(), "dot product of {} and {} values", a.size(), b.size());
  constexpr std::size_t kGrain = 1u << 14;
  return tbb::parallel_deterministic_reduce(
      tbb::blocked_range<std::size_t>(0, a.size(), kGrain), 0.0,
      [&](const tbb::blocked_range<std::size_t>& range, double sum) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) sum += a[i] * b[i];
        return sum;
      },
      std::plus<>());
}

namespace {
// [single (0 or 1), exact residuals, iteration of the fall-back]; absent: double throughout.
constexpr const char* kPrecisionRecord = "precision";
}  // namespace

PrecisionRecord precision_record(const SolverState& state) {
  const auto found = state.auxiliary.find(kPrecisionRecord);
  if (found == state.auxiliary.end()) return {};
  GPSTREAM_CHECK(found->second.size() == 3, "the solver state's precision record holds {} values, not 3",
                 found->second.size());
  return {found->second[0] != 0.0, static_cast<std::uint64_t>(found->second[1]),
          static_cast<std::uint64_t>(found->second[2])};
}

bool has_precision_record(const SolverState& state) { return state.auxiliary.contains(kPrecisionRecord); }

void set_precision_record(SolverState& state, const PrecisionRecord& record) {
  state.auxiliary[kPrecisionRecord] = {record.single ? 1.0 : 0.0, static_cast<double>(record.exact_residuals),
                                       static_cast<double>(record.fell_back_at)};
}

std::string precision_name(const PrecisionRecord& record) {
  if (record.fell_back_at > 0) return "single, then double from iteration " + std::to_string(record.fell_back_at);
  return record.single ? "single" : "double";
}

std::string describe_precision(const std::string& precision_name, std::uint64_t exact_residuals) {
  if (exact_residuals == 0) return precision_name;
  return precision_name + ", " + std::to_string(exact_residuals) + " exact residual" +
         (exact_residuals == 1 ? "" : "s") + " in double";
}

double objective(const SolverState& state, std::span<const double> y) {
  return 0.5 * (deterministic_dot(state.alpha, state.gradient) - deterministic_dot(state.alpha, y));
}

namespace {

// max(a, b), NaN when either is: std::max(a, NaN) is a, which would hide a diverged gradient.
double nan_propagating_max(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b);
}

}  // namespace

double gradient_max_norm(const SolverState& state) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, state.gradient.size(), 1u << 14), 0.0,
      [&](const tbb::blocked_range<std::size_t>& range, double best) {
        for (std::size_t i = range.begin(); i != range.end(); ++i)
          best = nan_propagating_max(best, std::abs(state.gradient[i]));
        return best;
      },
      nan_propagating_max);
}

std::string serialise_random(const std::mt19937_64& random) {
  std::ostringstream text;
  text << random;
  return text.str();
}

std::mt19937_64 deserialise_random(const std::string& text) {
  std::istringstream stream(text);
  std::mt19937_64 random;
  stream >> random;
  GPSTREAM_CHECK(!stream.fail(), "the saved random-number state is damaged");
  return random;
}

const std::vector<double>& saved_entry(const SolverState& state, const std::string& name, const char* owner) {
  const auto found = state.auxiliary.find(name);
  GPSTREAM_CHECK(found != state.auxiliary.end(), "checkpoint: {} has no '{}'", owner, name);
  return found->second;
}

std::vector<std::size_t> saved_row_indices(const SolverState& state, const std::string& name, std::size_t n,
                                           const char* owner) {
  std::vector<std::size_t> indices;
  for (const double value : saved_entry(state, name, owner)) {
    GPSTREAM_CHECK(value >= 0 && value < static_cast<double>(n) && value == std::floor(value),
                   "checkpoint: {}'s '{}' holds {}, not a row index below {}", owner, name, value, n);
    indices.push_back(static_cast<std::size_t>(value));
  }
  return indices;
}

}  // namespace gpstream

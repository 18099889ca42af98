#include "engine/training/training_method.h"

#include "engine/core/error.h"
#include "engine/sparse/greedy_basis_selection.h"
#include "engine/sparse/sparse_fit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpstream {
namespace {

constexpr TrainingMethod kMethods[] = {
    {"gbcd", true, ToleranceMeaning::gradient_norm, 4, ColumnReusePattern::reselected, true},
    {"bcd-cyclic", true, ToleranceMeaning::gradient_norm, 5, ColumnReusePattern::reselected, true},
    {"bcd-gradient", true, ToleranceMeaning::gradient_norm, 6, ColumnReusePattern::reselected, true},
    {"cg", true, ToleranceMeaning::gradient_norm, 5, ColumnReusePattern::none, true},
    {"smo", true, ToleranceMeaning::gradient_norm, 4, ColumnReusePattern::none, false},
    {"cholesky", true, ToleranceMeaning::gradient_norm, 3, ColumnReusePattern::none, false},
    {"sd", false, ToleranceMeaning::direct, 2, ColumnReusePattern::none, true},
    {"sr", false, ToleranceMeaning::direct, 2, ColumnReusePattern::none, true},
    {"sgma", false, ToleranceMeaning::none, 2, ColumnReusePattern::basis, true},
    {"mpgp", false, ToleranceMeaning::none, 2, ColumnReusePattern::basis, true},
    {"sggp", false, ToleranceMeaning::gap, 2, ColumnReusePattern::basis, true},
    {"nystrom", false, ToleranceMeaning::direct, 2, ColumnReusePattern::none, true},
    {"cholqr", false, ToleranceMeaning::relative_decrease, 2, ColumnReusePattern::none, false},
    {"online", false, ToleranceMeaning::none, 2, ColumnReusePattern::none, false},
};

void check_basis_size(const SparseMethodOptions& options, const KernelMatrix& kernel) {
  GPSTREAM_CHECK(options.basis_size > 0, "the basis size of {} must be at least 1", options.name);
  const std::size_t n = kernel.partition().global_rows;
  GPSTREAM_CHECK(options.basis_size <= n,
                 "the basis size {} of {} is larger than the {} training rows; give at most {}", options.basis_size,
                 options.name, n, n);
}

}  // namespace

std::span<const TrainingMethod> training_methods() { return kMethods; }

const TrainingMethod* find_training_method(const std::string& name) {
  const auto found = std::find_if(std::begin(kMethods), std::end(kMethods),
                                  [&](const TrainingMethod& method) { return name == method.name; });
  return found == std::end(kMethods) ? nullptr : found;
}

std::string describe_stopping_rule(const StoppingRule& rule, const std::string& method) {
  const TrainingMethod* found = find_training_method(method);
  const ToleranceMeaning meaning = found != nullptr ? found->tolerance : ToleranceMeaning::gradient_norm;
  std::string text = meaning == ToleranceMeaning::gap ? fmt::format("gap {:g}", rule.tolerance)
                     : meaning == ToleranceMeaning::gradient_norm || meaning == ToleranceMeaning::relative_decrease
                         ? fmt::format("tol {:g}", rule.tolerance)
                         : std::string("to the basis size");
  text += rule.max_iterations == std::numeric_limits<std::uint64_t>::max()
              ? ", no iteration limit"
              : fmt::format(", at most {} iterations in all", rule.max_iterations);
  text += std::isinf(rule.time_limit_seconds)
              ? ", no time limit"
              : fmt::format(", at most {:g} s of training in all", rule.time_limit_seconds);
  return text;
}

std::string training_method_names(bool dense) {
  std::vector<std::string> names;
  for (const TrainingMethod& method : kMethods) {
    if (method.dense == dense) names.emplace_back(method.name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::unique_ptr<SparseTrainingMethod> make_sparse_training_method(const SparseMethodOptions& options,
                                                                  KernelMatrix& kernel, std::span<const double> y,
                                                                  SolverState& state) {
  const TrainingMethod* method = find_training_method(options.name);
  GPSTREAM_CHECK(method != nullptr && !method->dense && method->iterative(), "'{}' is not an iterative sparse model",
                 options.name);
  GPSTREAM_CHECK(method->runs_on_ranks || !kernel.distributed(), "{} does not run on rows partitioned among ranks yet",
                 options.name);
  check_basis_size(options, kernel);
  if (options.name == "cholqr") {
    CholQrOptions cholqr = options.cholqr;
    cholqr.basis_size = options.basis_size;
    cholqr.seed = options.seed;
    return std::make_unique<CholQrSelection>(kernel, y, cholqr, state);
  }
  if (options.name == "online") {
    OnlineGpOptions online = options.online;
    online.basis_size = options.basis_size;
    return std::make_unique<OnlineGp>(kernel, y, online, state);
  }
  const GreedyBasisOptions greedy{parse_basis_criterion(options.name), options.basis_size, options.candidates};
  return std::make_unique<GreedyBasisSelection>(kernel, y, greedy, state);
}

SparseModel fit_direct_sparse_model(const SparseMethodOptions& options, KernelMatrix& kernel,
                                    std::span<const double> y) {
  check_basis_size(options, kernel);
  return kernel.context().execute(
      [&] { return fit_on_random_basis(options.name, kernel, y, options.basis_size, options.seed); });
}

}  // namespace gpstream

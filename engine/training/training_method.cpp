#include "engine/training/training_method.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/solvers/block_coordinate_descent.h"
#include "engine/solvers/cholesky_solver.h"
#include "engine/solvers/conjugate_gradient.h"
#include "engine/solvers/sequential_minimal_optimization.h"
#include "engine/sparse/greedy_basis_selection.h"
#include "engine/sparse/sparse_fit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpstream {
namespace {

// The factories of the entries below.

std::unique_ptr<DenseSolver> make_block_coordinate_descent(const SolverOptions& options, KernelMatrix& kernel) {
  GPSTREAM_CHECK_ARGUMENT(options.active_set_size > 0, "the active set size m of {} must be at least 1", options.name);
  return std::make_unique<BlockCoordinateDescent>(kernel, make_active_set_policy(options.name, options.candidates),
                                                  options.active_set_size, options.subspace_steps,
                                                  single_precision_wanted(options.precision));
}
template <class Solver>
std::unique_ptr<DenseSolver> make_dense(const SolverOptions&, KernelMatrix& kernel) {
  return std::make_unique<Solver>(kernel);
}
std::unique_ptr<DenseSolver> make_conjugate_gradient(const SolverOptions& options, KernelMatrix& kernel) {
  return std::make_unique<ConjugateGradient>(kernel, nullptr, single_precision_wanted(options.precision));
}
std::unique_ptr<DenseSolver> make_preconditioned_conjugate_gradient(const SolverOptions& options,
                                                                    KernelMatrix& kernel) {
  auto factor = std::make_unique<VecchiaFactor>(kernel.context(), kernel.rows(), kernel.kernel(),
                                                kPreconditionerNeighbours, kPreconditionerSeed);
  return std::make_unique<ConjugateGradient>(kernel, std::move(factor), single_precision_wanted(options.precision));
}

template <BasisCriterion criterion>
std::unique_ptr<SparseTrainingMethod> make_greedy_basis(const SparseMethodOptions& options, KernelMatrix& kernel,
                                                        std::span<const double> y, SolverState& state) {
  const GreedyBasisOptions greedy{criterion, options.basis_size, options.candidates};
  return std::make_unique<GreedyBasisSelection>(kernel, y, greedy, state);
}
std::unique_ptr<SparseTrainingMethod> make_cholqr(const SparseMethodOptions& options, KernelMatrix& kernel,
                                                  std::span<const double> y, SolverState& state) {
  CholQrOptions cholqr = options.cholqr;
  cholqr.basis_size = options.basis_size;
  cholqr.seed = options.seed;
  return std::make_unique<CholQrSelection>(kernel, y, cholqr, state);
}
std::unique_ptr<SparseTrainingMethod> make_online(const SparseMethodOptions& options, KernelMatrix& kernel,
                                                  std::span<const double> y, SolverState& state) {
  OnlineGpOptions online = options.online;
  online.basis_size = options.basis_size;
  return std::make_unique<OnlineGp>(kernel, y, online, state);
}
SparseModel regressors_on(KernelMatrix& kernel, std::span<const double> y, std::span<const std::size_t> subset) {
  return fit_subset_of_regressors(kernel, y, gather_basis_rows(kernel, subset), subset);
}
template <SubsetFit fit>
SparseModel fit_random_basis(const SparseMethodOptions& options, KernelMatrix& kernel, std::span<const double> y) {
  return fit_on_random_basis(options.name, fit, kernel, y, options.basis_size, options.seed);
}

// The summaries of the entries below (TrainingMethod::summarise).
std::vector<std::string> summarise_trace(const SparseModel& model, const SparseMethodOptions&) {
  if (!model.diagnostics.contains("relative_trace_residual")) return {};
  return {fmt::format("{:.3g} of the kernel's trace is left unexplained by the basis",
                      model.diagnostics.at("relative_trace_residual"))};
}
std::vector<std::string> summarise_nystrom(const SparseModel& model, const SparseMethodOptions&) {
  return {fmt::format(
      "nystrom weights: max |w| {:.4g}, rms {:.4g} (large weights mean the rank-{} approximation underestimates K; "
      "Schwaighofer & Tresp 2003 section 4.2)",
      model.diagnostics.at("max_abs_weight"), model.diagnostics.at("rms_weight"), model.basis_size())};
}
std::vector<std::string> summarise_cholqr(const SparseModel& model, const SparseMethodOptions&) {
  const KernelHyperparameters& h = model.prior.kernel;
  return {fmt::format("cholqr kernel: lengthscales [{:.4g}], signal variance {:.4g}, noise variance {:.4g}",
                      fmt::join(h.lengthscales, ", "), h.signal_variance, h.noise_variance)};
}
std::vector<std::string> summarise_online(const SparseModel& model, const SparseMethodOptions& options) {
  if (model.basis_size() >= options.basis_size) return {};
  return {fmt::format("{} of {} basis vectors used: no other row's novelty exceeded `novelty` {} of its prior variance",
                      model.basis_size(), options.basis_size, options.online.novelty)};
}

// The parameters of one method alone (TrainingMethod::parameters).
constexpr const char* kCholQrParameters[] = {"info_pivots", "objective", "fixed_hyper"};
constexpr const char* kOnlineParameters[] = {"novelty", "passes"};

using enum MethodFamily;
using enum ToleranceMeaning;
constexpr ColumnReusePattern no_reuse = ColumnReusePattern::none, reselected = ColumnReusePattern::reselected,
                             basis = ColumnReusePattern::basis;

// The registry, in the order the help lists it.
constexpr TrainingMethod kMethods[] = {
    {"auto",
     "pcg for a sum of kernels on at most 3 inputs (a field of several scales) in one process, gbcd otherwise; "
     "train says which and why",
     dense_solver, relative_residual, 4, reselected, true, nullptr},
    {"gbcd",
     "greedy block coordinate descent: each iteration the m rows whose update lowers the objective most, "
     "scored among kappa candidates [BoSminchisescu08]",
     dense_solver, relative_residual, 4, reselected, true, make_block_coordinate_descent},
    {"bcd-cyclic", "block coordinate descent over consecutive blocks of m rows [BoSminchisescu08 §3]", dense_solver,
     relative_residual, 5, reselected, true, make_block_coordinate_descent},
    {"bcd-gradient", "block coordinate descent on the m rows of largest |g| [BoSminchisescu08 §3]", dense_solver,
     relative_residual, 6, reselected, true, make_block_coordinate_descent},
    {"cg", "conjugate gradient, the reference iterative solver", dense_solver, relative_residual, 5, no_reuse, true,
     make_conjugate_gradient},
    {"pcg",
     "conjugate gradient preconditioned by the Vecchia factor of K-bar, each row conditioned on its 30 nearest "
     "earlier rows [Vecchia88; Guinness18]: a few passes over K-bar for spatial fields of several scales",
     dense_solver, relative_residual, 7, no_reuse, false, make_preconditioned_conjugate_gradient},
    {"smo", "sequential minimal optimisation: two coordinates a step [Platt98]", dense_solver, relative_residual, 4,
     no_reuse, false, make_dense<SequentialMinimalOptimization>},
    {"cholesky", "a Cholesky factor of K-bar (n^2 doubles in memory): the exact reference", dense_solver,
     relative_residual, 3, no_reuse, false, make_dense<CholeskySolver>},
    {"sd", "subset of data: the exact GP on m random rows [RW06 §8.3.1]", sparse_direct, direct, 2, no_reuse, true,
     nullptr, nullptr, fit_random_basis<fit_subset_of_data>},
    {"sr", "subset of regressors on m random basis rows [RW06 §8.3.2]", sparse_direct, direct, 2, no_reuse, true,
     nullptr, nullptr, fit_random_basis<regressors_on>},
    {"sgma",
     "subset of regressors on a basis chosen by sparse greedy matrix approximation [SmolaScholkopf00]",
     sparse_iterative,
     none,
     2,
     basis,
     true,
     nullptr,
     make_greedy_basis<BasisCriterion::sgma>,
     nullptr,
     {},
     true,
     summarise_trace},
    {"mpgp",
     "subset of regressors on a matching-pursuit basis [KeerthiChu06]",
     sparse_iterative,
     none,
     2,
     basis,
     true,
     nullptr,
     make_greedy_basis<BasisCriterion::mpgp>,
     nullptr,
     {},
     true,
     summarise_trace},
    {"sggp",
     "sparse greedy GP, until the relative gap of its bounds is below `gap` [SmolaBartlett01]",
     sparse_iterative,
     gap,
     2,
     basis,
     true,
     nullptr,
     make_greedy_basis<BasisCriterion::sggp>,
     nullptr,
     {},
     true},
    {"nystrom",
     "the Nystrom reduced-rank approximation, for comparison [WilliamsSeeger01; SchwaighoferTresp03 §2.1]",
     sparse_direct,
     direct,
     2,
     no_reuse,
     true,
     nullptr,
     nullptr,
     fit_random_basis<fit_reduced_rank>,
     {},
     false,
     summarise_nystrom},
    {"cholqr", "inducing set and kernel optimised together [Cao15]", sparse_iterative, relative_decrease, 2, no_reuse,
     false, nullptr, make_cholqr, nullptr, kCholQrParameters, true, summarise_cholqr},
    {"online", "the sparse online GP, one streamed pass [CsatoOpper02]", sparse_iterative, none, 2, no_reuse, false,
     nullptr, make_online, nullptr, kOnlineParameters, false, summarise_online},
};

void check_basis_size(const SparseMethodOptions& options, const KernelMatrix& kernel) {
  GPSTREAM_CHECK_ARGUMENT(options.basis_size > 0, "the basis size of {} must be at least 1", options.name);
  const std::size_t n = kernel.partition().global_rows;
  GPSTREAM_CHECK(options.basis_size <= n,
                 "the basis size {} of {} is larger than the {} training rows; give at most {}", options.basis_size,
                 options.name, n, n);
}

}  // namespace

std::span<const TrainingMethod> training_methods() { return kMethods; }

HeldVectors vectors_held(const TrainingMethod& method, const SolverOptions& options) {
  HeldVectors held{.of_own_rows = method.vectors};
  // A solver chosen at prepare() (auto: gbcd, or pcg with 3 vectors more than gbcd's own): the larger of the
  // two is reserved until it has chosen.
  if (method.dense() && method.make_dense == nullptr) {
    held.of_every_row = options.subspace_steps > 0 ? checked_add(checked_multiply(2, options.subspace_steps), 2) : 0;
    held.of_every_row = std::max<std::size_t>(held.of_every_row, 3);
    return held;
  }
  if (method.make_dense == make_block_coordinate_descent && options.subspace_steps > 0) {
    held.of_every_row = checked_add(checked_multiply(2, options.subspace_steps), 2);
  }
  return held;
}

double default_tolerance(ToleranceMeaning meaning) {
  switch (meaning) {
    case ToleranceMeaning::relative_decrease:
      return 1e-4;
    case ToleranceMeaning::gap:
      return 0.025;
    default:
      return StoppingRule{}.tolerance;
  }
}

const TrainingMethod* find_training_method(const std::string& name) {
  const auto found = std::find_if(std::begin(kMethods), std::end(kMethods),
                                  [&](const TrainingMethod& method) { return name == method.name; });
  return found == std::end(kMethods) ? nullptr : found;
}

std::string describe_stopping_rule(const StoppingRule& rule, const std::string& method) {
  const TrainingMethod* found = find_training_method(method);
  GPSTREAM_CHECK_ARGUMENT(found != nullptr, "unknown training method \"{}\"", method);
  std::string text = found->tolerance == ToleranceMeaning::gap ? fmt::format("gap {:g}", rule.tolerance)
                     : found->stops_at_tolerance()             ? fmt::format("tol {:g}", rule.tolerance)
                                                               : std::string("to the basis size");
  text += rule.max_iterations == std::numeric_limits<std::uint64_t>::max()
              ? ", no iteration limit"
              : fmt::format(", at most {} iterations in all", rule.max_iterations);
  text += std::isinf(rule.time_limit_seconds)
              ? ", no time limit"
              : fmt::format(", at most {:g} s of training in all", rule.time_limit_seconds);
  return text;
}

std::string methods_taking(std::string_view parameter) {
  std::vector<std::string> names;
  for (const TrainingMethod& method : kMethods) {
    if (std::find(method.parameters.begin(), method.parameters.end(), parameter) != method.parameters.end())
      names.emplace_back(method.name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

std::vector<std::string> training_method_list(bool dense) {
  std::vector<std::string> names;
  for (const TrainingMethod& method : kMethods) {
    if (method.dense() == dense) names.emplace_back(method.name);
  }
  return names;
}

std::string training_method_names(bool dense) {
  return fmt::format("{}", fmt::join(training_method_list(dense), ", "));
}

std::string training_method_help(bool dense) {
  std::string help;
  for (const TrainingMethod& method : kMethods) {
    if (method.dense() == dense) help += fmt::format("{}{}: {}", help.empty() ? "" : "; ", method.name, method.help);
  }
  return help;
}

SolverChoice choose_dense_solver(const KernelHyperparameters& kernel, std::size_t rows, std::size_t inputs,
                                 bool distributed) {
  constexpr std::size_t kLowDimension = 3, kSmallProblem = 2000;
  const bool several_scales = kernel.term_count() > 1;
  if (several_scales && is_stationary(kernel) && inputs <= kLowDimension && rows > kSmallProblem && !distributed) {
    return {*find_training_method("pcg"),
            fmt::format("solver auto: pcg, conjugate gradient preconditioned by K-bar's Vecchia factor: the kernel is "
                        "a sum of {} terms on {} inputs, whose long-range term couples every row with every other "
                        "(gbcd's local blocks make slow progress on it); --solver gbcd forces the other",
                        kernel.term_count(), inputs)};
  }
  const std::string why = distributed       ? "the rows are partitioned among ranks (pcg runs in one process)"
                          : !several_scales ? "a single kernel, where gbcd's local blocks are as fast or faster"
                          : inputs > kLowDimension
                              ? fmt::format("{} inputs, where the Vecchia factor is not accurate", inputs)
                              : "a small or non-stationary problem";
  return {*find_training_method("gbcd"), fmt::format("solver auto: gbcd, greedy block coordinate descent: {}", why)};
}

bool single_precision_wanted(const std::string& precision) {
  GPSTREAM_CHECK_ARGUMENT(precision == "auto" || precision == "double", "precision: \"{}\" is not one of auto, double",
                          precision);
  return precision == "auto";
}

std::unique_ptr<DenseSolver> make_solver(const SolverOptions& options, KernelMatrix& kernel) {
  const TrainingMethod* method = find_training_method(options.name);
  GPSTREAM_CHECK_ARGUMENT(method != nullptr && method->dense(), "unknown solver \"{}\" (choose {})", options.name,
                          training_method_names(/*dense=*/true));
  GPSTREAM_CHECK(method->runs_on_ranks || !kernel.distributed(), "{} does not run on rows partitioned among ranks yet",
                 options.name);
  GPSTREAM_CHECK(method->make_dense != nullptr, "solver {} is chosen before a solver is made (choose_dense_solver)",
                 options.name);
  return method->make_dense(options, kernel);
}

std::unique_ptr<SparseTrainingMethod> make_sparse_training_method(const SparseMethodOptions& options,
                                                                  KernelMatrix& kernel, std::span<const double> y,
                                                                  SolverState& state) {
  const TrainingMethod* method = find_training_method(options.name);
  GPSTREAM_CHECK(method != nullptr && method->family == MethodFamily::sparse_iterative,
                 "'{}' is not an iterative sparse model", options.name);
  GPSTREAM_CHECK(method->runs_on_ranks || !kernel.distributed(), "{} does not run on rows partitioned among ranks yet",
                 options.name);
  check_basis_size(options, kernel);
  return method->make_sparse(options, kernel, y, state);
}

SparseModel fit_direct_sparse_model(const SparseMethodOptions& options, KernelMatrix& kernel,
                                    std::span<const double> y) {
  const TrainingMethod* method = find_training_method(options.name);
  GPSTREAM_CHECK(method != nullptr && method->family == MethodFamily::sparse_direct,
                 "'{}' is not a direct sparse model", options.name);
  check_basis_size(options, kernel);
  return kernel.context().execute([&] { return method->fit_direct(options, kernel, y); });
}

}  // namespace gpstream

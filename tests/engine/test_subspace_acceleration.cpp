// The subspace acceleration of block coordinate descent
// (solvers/subspace_acceleration.h) against plain BCD and the Cholesky solve.
#include "engine/core/error.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/block_coordinate_descent.h"
#include "engine/solvers/solver_driver.h"
#include "engine/training/training_method.h"
#include "problems.h"

#include <doctest/doctest.h>

#include <cstring>

using namespace gpstream;
using namespace gpstream::testing;

namespace {

// A problem on which plain BCD converges slowly: short lengthscales and a
// small noise variance, blocks of 50 of 1,200 rows.
struct Setup {
  Problem problem = make_problem(1200, 3, 31);
  KernelHyperparameters h = se_ard(3, 0.5, 1e-2);
  std::size_t active_set_size = 50;
};

// Setup's K̄ over resident rows, for driving a solver by hand.
struct System {
  Setup setup;
  InMemoryRowSource rows = setup.problem.source();
  std::unique_ptr<Kernel> kernel = make_kernel(setup.h, setup.problem.d);
  Context context;
  KernelMatrix matrix{context, rows, *kernel};
  std::span<const double> y{setup.problem.y};
};

struct Run {
  SolverState state;
  SolverRun run;
};

Run solve(const Setup& setup, const SolverOptions& options, double tolerance, std::uint64_t max_iterations = 100000) {
  InMemoryRowSource rows = setup.problem.source();
  const auto kernel = make_kernel(setup.h, setup.problem.d);
  Context context({.memory_budget_bytes = 64u << 20});
  KernelMatrix matrix(context, rows, *kernel);
  auto solver = make_solver(options, matrix);
  Run result{initial_solver_state(setup.problem.y, 5), {}};
  StoppingRule rule;
  rule.tolerance = tolerance;
  rule.max_iterations = max_iterations;
  result.run = run_solver(*solver, matrix, result.state, setup.problem.y, rule, true);
  return result;
}

}  // namespace

TEST_CASE("with past steps, BCD reaches the Cholesky solution, in fewer iterations than plain BCD") {
  const Setup setup;
  const Run exact = solve(setup, {.name = "cholesky"}, 1e-9);
  auto options = [&](const char* name, std::size_t steps) {
    return SolverOptions{.name = name, .active_set_size = setup.active_set_size, .subspace_steps = steps};
  };
  // gbcd, measured on this problem: 2,105 iterations plain, 1,605 with one past step, 1,079 with four.
  const Run plain = solve(setup, options("gbcd", 0), 1e-8);
  REQUIRE(plain.run.reason == StopReason::converged);
  CHECK(relative_difference(plain.state.alpha, exact.state.alpha) <= 1e-5);
  std::uint64_t one_step = 0;
  for (std::size_t steps : {1, 4}) {
    CAPTURE(steps);
    const Run accelerated = solve(setup, options("gbcd", steps), 1e-8);
    REQUIRE(accelerated.run.reason == StopReason::converged);
    CHECK(relative_difference(accelerated.state.alpha, exact.state.alpha) <= 1e-5);
    CHECK(accelerated.run.last.iteration < plain.run.last.iteration);
    if (steps == 1) one_step = accelerated.run.last.iteration;
    if (steps == 4) {
      CHECK(accelerated.run.last.iteration < one_step);
      CHECK(4 * accelerated.run.last.iteration < 3 * plain.run.last.iteration);
    }
  }
  // bcd-gradient: 3,817 iterations with four past steps, 65,691 plain.
  const Run gradient = solve(setup, options("bcd-gradient", 4), 1e-8);
  REQUIRE(gradient.run.reason == StopReason::converged);
  CHECK(relative_difference(gradient.state.alpha, exact.state.alpha) <= 1e-5);
  const Run gradient_plain = solve(setup, options("bcd-gradient", 0), 1e-8, 3 * gradient.run.last.iteration);
  CHECK(gradient_plain.run.reason == StopReason::iteration_limit);
}

TEST_CASE("each subspace step lowers f at least as much as the plain block step from the same state") {
  // Largest-|g| blocks: the same B from the same state, whatever the solver's history.
  System system;
  auto& [setup, rows, kernel, context, matrix, y] = system;
  BlockCoordinateDescent accelerated(matrix, make_active_set_policy("bcd-gradient", 1), setup.active_set_size, 4);
  BlockCoordinateDescent plain(matrix, make_active_set_policy("bcd-gradient", 1), setup.active_set_size, 0);
  SolverState state = initial_solver_state(y, 3);
  accelerated.start(state, y);
  double gained = 0.0;  // Σ over the steps of f(plain step) − f(subspace step)
  context.execute([&] {
    for (int t = 0; t < 40; ++t) {
      CAPTURE(t);
      SolverState plain_state = state;
      plain.iterate(plain_state, y);
      accelerated.iterate(state, y);
      const double f_plain = objective(plain_state, y), f_accelerated = objective(state, y);
      CHECK(f_accelerated <= f_plain + 1e-12 * std::abs(f_plain));
      gained += f_plain - f_accelerated;
    }
  });
  CHECK(gained > 0.0);
  // The maintained gradient is still K̄α − y.
  SolverState exact = state;
  CHECK(refresh_gradient(matrix, exact, y) <= 1e-10 * (1.0 + gradient_max_norm(state)));
}

TEST_CASE("the past steps are in the state a checkpoint holds, and a state that lacks them is refused or started") {
  System system;
  auto& [setup, rows, kernel, context, matrix, y] = system;
  const std::size_t n = y.size();
  BlockCoordinateDescent solver(matrix, make_active_set_policy("gbcd", 20), setup.active_set_size, 3);
  SolverState state = initial_solver_state(y, 1);
  solver.start(state, y);
  CHECK(state.auxiliary.at("subspace_steps").size() == 3 * n);
  CHECK(state.auxiliary.at("subspace_products").size() == 3 * n);
  CHECK(state.auxiliary.at("subspace_gram").size() == 9);
  context.execute([&] {
    for (int t = 0; t < 5; ++t) solver.iterate(state, y);
  });
  CHECK(state.auxiliary.at("subspace_count").at(0) == 5.0);
  // A checkpoint of a run with another k is refused, naming what is wrong.
  BlockCoordinateDescent other(matrix, make_active_set_policy("gbcd", 20), setup.active_set_size, 2);
  SolverState copy = state;
  CHECK_THROWS_WITH_AS(context.execute([&] { other.iterate(copy, y); }),
                       doctest::Contains("the subspace acceleration's 'subspace_steps' holds"), Error);
  // A state made for plain BCD starts an empty history and converges.
  SolverState plain = initial_solver_state(y, 1);
  context.execute([&] { solver.iterate(plain, y); });
  CHECK(plain.auxiliary.at("subspace_count").at(0) == 1.0);
}

TEST_CASE(
    "the subspace step's error bound covers the maintained gradient's drift, and a claim it proves needs no "
    "product") {
  // A small noise variance makes α large (‖α‖∞ ~ 1e3 here), so that rounding accumulates in g.
  Setup setup;
  setup.h = se_ard(3, 0.5, 1e-5);
  InMemoryRowSource rows = setup.problem.source();
  const std::size_t n = setup.problem.rows(), d = setup.problem.d;
  const auto kernel = make_kernel(setup.h, d);
  Context context;
  KernelMatrix matrix(context, rows, *kernel);
  const std::span<const double> y(setup.problem.y);
  // K̂: the kernel values as the block products compute them (entrywise), for residuals summed in long double.
  PreparedRows prepared;
  kernel->prepare(setup.problem.x.data(), n, prepared);
  std::vector<double> entries(n * n);
  kernel->evaluate_entrywise(prepared.view(d), prepared.view(d), entries.data());
  auto drift = [&](const SolverState& state) {
    double largest = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      long double residual = static_cast<long double>(setup.h.noise_variance) * state.alpha[i] - y[i];
      for (std::size_t j = 0; j < n; ++j) residual += static_cast<long double>(entries[i * n + j]) * state.alpha[j];
      largest = std::max(largest, static_cast<double>(std::abs(residual - state.gradient[i])));
    }
    return largest;
  };
  BlockCoordinateDescent solver(matrix, make_active_set_policy("gbcd", 20), setup.active_set_size, 4);
  SolverState state = initial_solver_state(y, 2);
  solver.start(state, y);
  REQUIRE(solver.gradient_error_bound(state) == 0.0);
  double largest_alpha = 0.0;
  context.execute([&] {
    for (int t = 1; t <= 300; ++t) {
      solver.iterate(state, y);
      if (t % 100 != 0 && t != 10) continue;
      CAPTURE(t);
      const std::optional<double> bound = solver.gradient_error_bound(state);
      REQUIRE(bound.has_value());
      const double measured = drift(state);
      CHECK(measured > 0.0);  // rounding did accumulate
      CHECK(measured <= *bound);
      // and the bound stays far below what a tolerance needs (‖y‖∞ ≈ 1.6): useful, not vacuous
      CHECK(*bound < 1e-8);
    }
  });
  for (const double value : state.alpha) largest_alpha = std::max(largest_alpha, std::abs(value));
  CHECK(largest_alpha > 100.0);

  // A claim the bound proves is certified without a product; once g is recomputed (by other bits) there is no
  // bound, and the claim costs one product over all n² entries.
  DenseSolverRun run(solver, matrix, state, y);
  const double measure = run.convergence_measure();
  const std::uint64_t before = matrix.kernel_evaluations();
  std::optional<Certificate> certificate = run.certify(2.0 * measure);
  REQUIRE(certificate.has_value());
  CHECK(certificate->measure == measure);
  CHECK(certificate->error_bound >= 0.0);
  CHECK(certificate->error_bound < 1e-6 * measure);
  CHECK(matrix.kernel_evaluations() == before);
  // Met but not yet proved (the measure is the tolerance itself): the driver goes on iterating, still no product.
  certificate = run.certify(measure);
  CHECK(certificate->error_bound > 0.0);
  CHECK(certificate->measure + certificate->error_bound > measure);
  CHECK(matrix.kernel_evaluations() == before);
  solver.gradient_refreshed(state);
  CHECK_FALSE(solver.gradient_error_bound(state).has_value());
  certificate = context.execute([&] { return run.certify(2.0 * measure); });
  CHECK(certificate->error_bound == -1.0);
  CHECK(certificate->measure == doctest::Approx(measure).epsilon(1e-6));
  CHECK(matrix.kernel_evaluations() == before + n * n);
  // Plain BCD keeps no bound; nor does a state that did not start at α = 0, g = −y.
  BlockCoordinateDescent plain(matrix, make_active_set_policy("gbcd", 20), setup.active_set_size, 0);
  CHECK_FALSE(plain.gradient_error_bound(state).has_value());
  SolverState started = initial_solver_state(y, 2);
  started.gradient[0] += 1.0;
  solver.start(started, y);
  CHECK_FALSE(solver.gradient_error_bound(started).has_value());
}

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

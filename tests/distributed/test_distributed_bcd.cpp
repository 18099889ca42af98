// Rows partitioned among the ranks of `mpirun -np P`: the collectives; the
// BCD family and CG, whose α must not depend on P — bitwise, since every
// value a rank takes from another comes from exactly one owner and every sum
// over rows runs over all of them in one order; the greedy bases, whose
// sums over rows are added over the ranks (equal to rounding).
#include "engine/core/context.h"
#include "engine/data/partitioned_rows.h"
#include "engine/data/standardisation.h"
#include "engine/distributed/mpi_communicator.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/dense/dense_prediction.h"
#include "engine/solvers/solver_driver.h"
#include "engine/training/training_method.h"
#include "engine/solvers/solver_state.h"
#include "engine/training/training_method.h"
#include "../engine/problems.h"
#include "../engine/stop_inside.h"

#include <doctest/doctest.h>

#include <numeric>

using namespace gpstream;
using namespace gpstream::testing;

TEST_CASE("the collectives combine every rank's values alike on every rank") {
  MpiCommunicator world;
  const std::size_t p = world.size(), rank = world.rank();
  std::vector<double> values = {static_cast<double>(rank), 1.0};
  world.sum(values);
  CHECK(values[0] == static_cast<double>(p * (p - 1) / 2));
  CHECK(values[1] == static_cast<double>(p));
  std::vector<std::uint64_t> counts = {rank + 1};
  world.sum(counts);
  CHECK(counts[0] == p * (p + 1) / 2);
  CHECK(world.max(static_cast<double>(rank)) == static_cast<double>(p - 1));
  // Ties go to the smallest index, wherever it lives.
  CHECK(world.max_location(1.0, 10 * (p - rank)) == std::pair<double, std::size_t>{1.0, 10});
  CHECK(world.max_location(static_cast<double>(rank), rank).second == p - 1);
  CHECK(world.any(rank == p - 1));
  CHECK(!world.any(false));
  std::vector<double> mine(rank + 1, static_cast<double>(rank));
  const std::vector<double> all = world.all_gather(mine);
  REQUIRE(all.size() == p * (p + 1) / 2);
  for (std::size_t r = 0, k = 0; r < p; ++r) {
    for (std::size_t j = 0; j <= r; ++j) CHECK(all[k++] == static_cast<double>(r));
  }
  std::vector<double> shared = {static_cast<double>(rank), 2.0};
  world.broadcast(shared, p - 1);
  CHECK(shared == std::vector<double>{static_cast<double>(p - 1), 2.0});
}

TEST_CASE("the ranks' partitions cover the rows once, in order, cut at the alignment, and leave no rank idle") {
  MpiCommunicator world;
  for (const std::size_t n : {0, 5, 300, 1001}) {
    const RowPartition mine = partition_rows(n, 16, world.rank(), world.size());
    std::vector<double> range = {static_cast<double>(mine.first), static_cast<double>(mine.count)};
    const std::vector<double> all = world.all_gather(range);
    std::size_t next = 0;
    for (std::size_t k = 0; k < all.size(); k += 2) {
      CHECK(static_cast<std::size_t>(all[k]) == next);
      // Whole 16-row chunks, unless there are fewer of them than ranks.
      if (n / 16 >= world.size()) CHECK(next % 16 == 0);
      if (n >= world.size()) CHECK(all[k + 1] > 0);  // no rank idle
      next += static_cast<std::size_t>(all[k + 1]);
    }
    CHECK(next == n);
  }
}

namespace {

// α of `iterations` iterations of `solver` on the problem, this rank's rows
// of it (all of them with `alone`), gathered over the ranks; g refreshed by
// an exact K̄α every `refresh_every` iterations (0: never). With
// `last_rank_stops`, the last rank alone requests a stop inside the
// iteration after them (as a Ctrl-C to one process would), and every rank
// must stop there.
std::vector<double> solve(const Problem& problem, const KernelHyperparameters& h, const char* solver, bool streamed,
                          std::size_t iterations, bool alone, MpiCommunicator& world, std::size_t refresh_every = 0,
                          bool last_rank_stops = false) {
  SingleProcess single;
  Communicator& ranks = alone ? static_cast<Communicator&>(single) : world;
  Context context({.threads = 1, .memory_budget_bytes = 64u << 10, .seed = 1, .communicator = &ranks});
  StopFlag stop;
  context.set_stop_flag(&stop);
  InMemoryRowSource resident = problem.source();
  StandardisedRowSource streaming(resident, Standardisation::identity());  // no resident copy: streams
  RowSource& all = streamed ? static_cast<RowSource&>(streaming) : resident;
  const RowPartition partition = partition_rows(problem.rows(), 16, ranks.rank(), ranks.size());
  PartitionedRows rows(all, partition);
  const auto kernel = make_kernel(h, problem.d);
  // Small tiles and panels: K̄v in several panels, each cut among the ranks.
  KernelMatrix matrix(context, rows, partition, *kernel, {.tile_rows = 32, .panel_columns = 64});
  auto chosen = make_solver({.name = solver, .active_set_size = 40, .candidates = 30}, matrix);
  const bool stopping = last_rank_stops && ranks.rank() + 1 == ranks.size();
  StopInside method(*chosen, stop, stopping ? iterations : StopInside::kNever);
  const std::vector<double> y(problem.y.begin() + static_cast<std::ptrdiff_t>(partition.first),
                              problem.y.begin() + static_cast<std::ptrdiff_t>(partition.first + partition.count));
  SolverState state = initial_solver_state(y, 7);
  StoppingRule rule;
  rule.tolerance = 1e-12;
  rule.max_iterations = last_rank_stops ? iterations + 1 : iterations;
  rule.refresh_every = refresh_every;
  const SolverRun run = run_solver(method, matrix, state, y, rule, true);
  CHECK(run.reason == (last_rank_stops ? StopReason::interrupted : StopReason::iteration_limit));
  CHECK(run.last.iteration == iterations);
  return ranks.all_gather(state.alpha);
}

}  // namespace

TEST_CASE(
    "a stop requested on one rank inside CG's product over all of K̄ drops it on every rank: all stop after the "
    "same iteration, with the alpha of a run of that many") {
  MpiCommunicator world;
  const Problem problem = make_problem(300, 3, 12);
  const KernelHyperparameters h = se_ard(3, 0.7, 0.2);
  for (const bool streamed : {false, true}) {
    CAPTURE(streamed);
    const std::vector<double> limited = solve(problem, h, "cg", streamed, 6, false, world);
    const std::vector<double> stopped = solve(problem, h, "cg", streamed, 6, false, world, 0, true);
    CHECK(stopped == limited);
  }
}

TEST_CASE(
    "GBCD, cyclic and gradient BCD and CG on rows partitioned among the ranks give the single process's alpha, "
    "bitwise, with and without refreshes of g") {
  MpiCommunicator world;
  const Problem problem = make_problem(300, 3, 12);
  const KernelHyperparameters h = se_ard(3, 0.7, 0.2);
  for (const char* solver : {"gbcd", "bcd-cyclic", "bcd-gradient", "cg"}) {
    for (const bool streamed : {false, true}) {
      for (const std::size_t refresh_every : {0, 4}) {
        CAPTURE(solver);
        CAPTURE(streamed);
        CAPTURE(refresh_every);
        const std::vector<double> alone = solve(problem, h, solver, streamed, 15, true, world, refresh_every);
        const std::vector<double> distributed = solve(problem, h, solver, streamed, 15, false, world, refresh_every);
        REQUIRE(distributed.size() == problem.rows());
        CHECK(distributed == alone);
        CHECK(std::any_of(alone.begin(), alone.end(), [](double value) { return value != 0.0; }));
      }
    }
  }
}

TEST_CASE("predictive means from rows partitioned among the ranks equal the single process's") {
  MpiCommunicator world;
  const Problem problem = make_problem(300, 3, 12);
  const Problem test = make_problem(50, 3, 13);
  const KernelHyperparameters h = se_ard(3, 0.7, 0.2);
  const auto kernel = make_kernel(h, problem.d);
  std::vector<double> alpha(problem.rows());
  for (std::size_t i = 0; i < alpha.size(); ++i) alpha[i] = std::sin(static_cast<double>(i));
  for (const bool streamed : {false, true}) {
    CAPTURE(streamed);
    InMemoryRowSource resident = problem.source();
    StandardisedRowSource streaming(resident, Standardisation::identity());
    RowSource& all = streamed ? static_cast<RowSource&>(streaming) : resident;
    Context alone({.threads = 1, .memory_budget_bytes = 64u << 10});
    KernelMatrix whole(alone, all, *kernel);
    const std::vector<double> expected = predict_mean(whole, alpha, test.x.data(), test.rows(), 16);

    Context context({.threads = 1, .memory_budget_bytes = 64u << 10, .seed = 1, .communicator = &world});
    const RowPartition partition = partition_rows(problem.rows(), 16, world.rank(), world.size());
    PartitionedRows rows(all, partition);
    KernelMatrix part(context, rows, partition, *kernel);
    const std::vector<double> own(alpha.begin() + static_cast<std::ptrdiff_t>(partition.first),
                                  alpha.begin() + static_cast<std::ptrdiff_t>(partition.first + partition.count));
    const std::vector<double> mean = predict_mean(part, own, test.x.data(), test.rows(), 16);
    REQUIRE(mean.size() == expected.size());
    for (std::size_t j = 0; j < mean.size(); ++j) CHECK(mean[j] == doctest::Approx(expected[j]).epsilon(1e-12));
    // The same bits on every rank.
    const std::vector<double> everyone = world.all_gather(mean);
    for (std::size_t k = 0; k < everyone.size(); ++k) CHECK(everyone[k] == mean[k % mean.size()]);
  }
}

namespace {

// The sggp model of `basis` greedy steps on the problem's rows (this rank's
// of them unless `alone`), streamed, with its basis columns cached.
SparseModel select_basis(const Problem& problem, const KernelHyperparameters& h, std::size_t basis, bool alone,
                         MpiCommunicator& world) {
  SingleProcess single;
  Communicator& ranks = alone ? static_cast<Communicator&>(single) : world;
  Context context({.threads = 1, .memory_budget_bytes = 8u << 20, .seed = 1, .communicator = &ranks});
  InMemoryRowSource resident = problem.source();
  StandardisedRowSource streaming(resident, Standardisation::identity());
  const RowPartition partition = partition_rows(problem.rows(), 16, ranks.rank(), ranks.size());
  PartitionedRows rows(streaming, partition);
  const auto kernel = make_kernel(h, problem.d);
  KernelMatrix matrix(context, rows, partition, *kernel, {.tile_rows = 32, .panel_columns = 64});
  matrix.enable_column_cache(context.memory().reserve("cache", KernelColumnCache::bytes_for(partition.count, basis)));
  const std::vector<double> y(problem.y.begin() + static_cast<std::ptrdiff_t>(partition.first),
                              problem.y.begin() + static_cast<std::ptrdiff_t>(partition.first + partition.count));
  SolverState state;
  state.random.seed(5);
  SparseMethodOptions options;
  options.basis_size = basis;
  options.candidates = 20;
  auto method = make_sparse_training_method(options, matrix, y, state);
  StoppingRule rule;
  rule.tolerance = 0.0;
  rule.max_iterations = basis;
  run_iterations(*method, matrix, rule, true);
  return method->model();
}

}  // namespace

TEST_CASE("a greedy basis (sggp) on streamed rows partitioned among the ranks is the single process's") {
  MpiCommunicator world;
  const Problem problem = make_problem(300, 3, 12);
  const KernelHyperparameters h = se_ard(3, 0.7, 0.2);
  const SparseModel alone = select_basis(problem, h, 25, true, world);
  const SparseModel distributed = select_basis(problem, h, 25, false, world);
  REQUIRE(alone.basis_indices.size() == 25);
  CHECK(distributed.basis_indices == alone.basis_indices);
  REQUIRE(distributed.weights.size() == alone.weights.size());
  for (std::size_t k = 0; k < alone.weights.size(); ++k)
    CHECK(distributed.weights[k] == doctest::Approx(alone.weights[k]).epsilon(1e-8));
  CHECK(distributed.diagnostics.at("gap") == doctest::Approx(alone.diagnostics.at("gap")).epsilon(1e-8));
}

// Sparse models against their closed forms computed densely, and against the
// exact GP when the basis is every training row.
#include "engine/core/error.h"
#include "engine/data/k_means.h"
#include "engine/data/row_source_utilities.h"
#include "engine/data/standardisation.h"
#include "engine/hyper/marginal_likelihood.h"
#include "engine/kernels/kernel_column_cache.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/linalg/cholesky.h"
#include "engine/solvers/solver_driver.h"
#include "engine/sparse/committee_machine.h"
#include "engine/sparse/greedy_basis_selection.h"
#include "engine/sparse/online_gp.h"
#include "engine/sparse/sparse_fit.h"
#include "engine/sparse/sparse_prediction.h"
#include "engine/training/training_method.h"
#include "dense_reference.h"
#include "problems.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace gpstream;
using namespace gpstream::testing;

namespace {

std::vector<double> rows_of(const Problem& problem, const std::vector<std::size_t>& indices) {
  std::vector<double> rows;
  for (const std::size_t i : indices)
    rows.insert(rows.end(), &problem.x[i * problem.d], &problem.x[(i + 1) * problem.d]);
  return rows;
}

std::vector<std::size_t> first_rows(std::size_t m) {
  std::vector<std::size_t> indices(m);
  std::iota(indices.begin(), indices.end(), 0);
  return indices;
}

// The exact GP: mean k*ᵀK̄⁻¹y and latent variance K** − k*ᵀK̄⁻¹k*.
SparsePrediction exact_gp(const KernelHyperparameters& h, const Problem& training, const std::vector<double>& test) {
  const std::size_t n = training.rows(), t = test.size() / training.d;
  const std::vector<double> k_nz = kernel_block(h, training.x, test, training.d);  // n×t
  const std::vector<double> alpha = spd_solve(reference_kernel_matrix(h, training), n, training.y, 1);
  const std::vector<double> solved = spd_solve(reference_kernel_matrix(h, training), n, k_nz, t);
  SparsePrediction exact;
  exact.mean = multiply(k_nz, alpha, t, n, 1, true);
  for (std::size_t j = 0; j < t; ++j) {
    double quadratic = 0.0;
    for (std::size_t i = 0; i < n; ++i) quadratic += k_nz[i * t + j] * solved[i * t + j];
    const double* z = &test[j * training.d];
    exact.latent.push_back(reference_kernel(h, z, z, training.d) - quadratic);
  }
  return exact;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double largest = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::abs(a[i] - b[i]));
  return largest;
}

// A KernelMatrix over the problem's rows, resident or streamed in small blocks.
struct Fixture {
  Fixture(const Problem& problem, const KernelHyperparameters& h, bool streamed, std::size_t budget = 1u << 15)
      : resident(problem.source()),
        wrapped(resident, Standardisation::identity()),
        kernel(make_kernel(h, problem.d)),
        context({.memory_budget_bytes = budget}),
        matrix(context, streamed ? static_cast<RowSource&>(wrapped) : resident, *kernel) {}
  InMemoryRowSource resident;
  StandardisedRowSource wrapped;
  std::unique_ptr<Kernel> kernel;
  Context context;
  KernelMatrix matrix;
};

// tr(K − K_NB K_B⁻¹ K_BN), densely.
double nystrom_trace_residual(const KernelHyperparameters& h, const Problem& problem, const std::vector<double>& x_b) {
  const std::size_t n = problem.rows(), m = x_b.size() / problem.d;
  const std::vector<double> k_nb = kernel_block(h, problem.x, x_b, problem.d);
  std::vector<double> k_bn(m * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) k_bn[j * n + i] = k_nb[i * m + j];
  const std::vector<double> solved = spd_solve(kernel_block(h, x_b, x_b, problem.d), m, k_bn, n);
  double trace = h.signal_variance * static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) trace -= k_nb[i * m + j] * solved[j * n + i];
  return trace;
}

GreedyBasisOptions greedy(BasisCriterion criterion, std::size_t m) { return {criterion, m, 59}; }

}  // namespace

TEST_CASE(
    "SR weights and projected-process variances equal the dense normal-equation solution, resident and streamed") {
  const Problem problem = make_problem(700, 3, 5);
  const Problem test = make_problem(30, 3, 6);
  const KernelHyperparameters h = se_ard(3, 0.9, 0.05);
  const std::vector<std::size_t> basis = {3, 17, 41, 99, 150, 233, 301, 377, 420, 512, 600, 650, 699};
  const std::size_t m = basis.size(), n = problem.rows(), t = test.rows();
  const std::vector<double> x_b = rows_of(problem, basis);
  // β = (σ²K_B + K_NBᵀK_NB)⁻¹ K_NBᵀ y.
  const std::vector<double> k_nb = kernel_block(h, problem.x, x_b, 3);
  const std::vector<double> k_b = kernel_block(h, x_b, x_b, 3);
  std::vector<double> a = multiply(k_nb, k_nb, m, n, m, true);
  for (std::size_t k = 0; k < m * m; ++k) a[k] += h.noise_variance * k_b[k];
  for (std::size_t i = 0; i < m; ++i)
    a[i * m + i] += h.noise_variance * basis_resolution(h).jitter;  // as K_B's factor has it
  const std::vector<double> beta = spd_solve(a, m, multiply(k_nb, problem.y, m, n, 1, true), m == 0 ? 0 : 1);
  // Latent variance K** − k_BᵀK_B⁻¹k_B + σ²k_BᵀA⁻¹k_B.
  const std::vector<double> k_bz = kernel_block(h, x_b, test.x, 3);
  std::vector<double> k_b_jittered = k_b;
  for (std::size_t i = 0; i < m; ++i) k_b_jittered[i * m + i] += basis_resolution(h).jitter;
  const std::vector<double> by_kernel = spd_solve(k_b_jittered, m, k_bz, t), by_system = spd_solve(a, m, k_bz, t);
  std::vector<double> variance(t, 1.0), mean = multiply(k_bz, beta, t, m, 1, true);
  for (std::size_t j = 0; j < t; ++j)
    for (std::size_t i = 0; i < m; ++i)
      variance[j] += k_bz[i * t + j] * (h.noise_variance * by_system[i * t + j] - by_kernel[i * t + j]);

  for (const bool streamed : {false, true}) {
    CAPTURE(streamed);
    Fixture fixture(problem, h, streamed);
    const SparseModel model = fit_subset_of_regressors(fixture.matrix, problem.y, x_b);
    CHECK(relative_difference(model.weights, beta) < 1e-9);
    SparseModel with_columns = model;
    with_columns.columns = 3;
    const SparsePrediction prediction = predict_sparse(with_columns, *fixture.kernel, test.x.data(), t, true);
    CHECK(max_difference(prediction.mean, mean) < 1e-9);
    CHECK(max_difference(prediction.latent, variance) < 1e-9);
    for (const double v : prediction.latent) CHECK(v >= 0.0);
  }
}

TEST_CASE("Nystrom (RRA) weights and predictions equal the explicit (K~ + sigma^2 I)^-1 solution") {
  const Problem problem = make_problem(300, 2, 8);
  const Problem test = make_problem(20, 2, 9);
  const KernelHyperparameters h = se_ard(2, 0.8, 0.1);
  const std::vector<std::size_t> basis = {0, 10, 20, 40, 80, 120, 160, 200, 250, 299};
  const std::size_t m = basis.size(), n = problem.rows(), t = test.rows();
  const std::vector<double> x_b = rows_of(problem, basis);
  const std::vector<double> k_nb = kernel_block(h, problem.x, x_b, 2);
  const std::vector<double> k_b = kernel_block(h, x_b, x_b, 2);
  // K̃ = K_NB K_B⁻¹ K_BN, formed explicitly.
  std::vector<double> k_bn(m * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) k_bn[j * n + i] = k_nb[i * m + j];
  std::vector<double> k_tilde = multiply(k_nb, spd_solve(k_b, m, k_bn, n), n, m, n);
  for (std::size_t i = 0; i < n; ++i) k_tilde[i * n + i] += h.noise_variance;
  const std::vector<double> w = spd_solve(k_tilde, n, problem.y, 1);
  const std::vector<double> k_nz = kernel_block(h, problem.x, test.x, 2);
  const std::vector<double> mean = multiply(k_nz, w, t, n, 1, true);
  const std::vector<double> solved = spd_solve(k_tilde, n, k_nz, t);
  std::vector<double> variance(t, 1.0);
  for (std::size_t j = 0; j < t; ++j)
    for (std::size_t i = 0; i < n; ++i) variance[j] -= k_nz[i * t + j] * solved[i * t + j];

  for (const bool streamed : {false, true}) {
    CAPTURE(streamed);
    Fixture fixture(problem, h, streamed);
    SparseModel model = fit_reduced_rank(fixture.matrix, problem.y, basis);
    model.columns = 2;
    CHECK(relative_difference(model.training_weights, w) < 1e-7);
    double largest = 0.0;
    for (const double v : w) largest = std::max(largest, std::abs(v));
    CHECK(model.diagnostics.at("max_abs_weight") == doctest::Approx(largest).epsilon(1e-7));
    const SparsePrediction prediction = predict_sparse(model, *fixture.kernel, test.x.data(), t, true, &fixture.matrix);
    CHECK(max_difference(prediction.mean, mean) < 1e-7);
    // The RRA variance formula goes negative where K~ underestimates K: those rows are reported and set to 0.
    std::vector<double> clamped = variance;
    std::size_t negative = 0;
    for (double& v : clamped) {
      if (v < 0) ++negative, v = 0.0;
    }
    CHECK(max_difference(prediction.latent, clamped) < 1e-7);
    CHECK(prediction.negative_variances == negative);
  }
}

TEST_CASE("subset of data is the exact GP on its rows") {
  const Problem problem = make_problem(200, 2, 3);
  const Problem test = make_problem(15, 2, 4);
  const KernelHyperparameters h = se_ard(2, 0.7, 0.05);
  const std::vector<std::size_t> subset = {5, 9, 33, 60, 61, 100, 150, 199};
  Problem part;
  part.d = 2;
  part.x = rows_of(problem, subset);
  for (const std::size_t i : subset) part.y.push_back(problem.y[i]);
  const SparsePrediction exact = exact_gp(h, part, test.x);
  Fixture fixture(problem, h, false);
  SparseModel model = fit_subset_of_data(fixture.matrix, problem.y, subset);
  model.columns = 2;
  const SparsePrediction prediction = predict_sparse(model, *fixture.kernel, test.x.data(), test.rows(), true);
  CHECK(max_difference(prediction.mean, exact.mean) < 1e-10);
  CHECK(max_difference(prediction.latent, exact.latent) < 1e-10);
}

TEST_CASE("with every training row in the basis, SR, Nystrom and SGGP give the exact GP") {
  const Problem problem = make_problem(60, 2, 21);
  const Problem test = make_problem(12, 2, 22);
  for (const KernelHyperparameters& h :
       {se_ard(2, 0.6, 0.1), KernelHyperparameters{KernelType::histogram_intersection, {}, 1.0, 0.1}}) {
    CAPTURE(kernel_type_name(h.type));
    const std::size_t n = problem.rows();
    const SparsePrediction exact = exact_gp(h, problem, test.x);
    Fixture fixture(problem, h, false);

    SparseModel sr = fit_subset_of_regressors(fixture.matrix, problem.y, problem.x);
    sr.columns = 2;
    const SparsePrediction by_sr = predict_sparse(sr, *fixture.kernel, test.x.data(), test.rows(), true);
    CHECK(max_difference(by_sr.mean, exact.mean) < 1e-6);
    CHECK(max_difference(by_sr.latent, exact.latent) < 1e-5);  // up to the jitter on K_B

    SparseModel nystrom = fit_reduced_rank(fixture.matrix, problem.y, first_rows(n));
    nystrom.columns = 2;
    const SparsePrediction by_nystrom =
        predict_sparse(nystrom, *fixture.kernel, test.x.data(), test.rows(), true, &fixture.matrix);
    CHECK(max_difference(by_nystrom.mean, exact.mean) < 1e-6);
    CHECK(max_difference(by_nystrom.latent, exact.latent) < 1e-5);

    // Driven step by step to the full basis: under the driver a gap that
    // rounds to ≤ 0 one step early is convergence (tested below), and which
    // step that happens at depends on the CPU's rounding.
    SolverState state;
    GreedyBasisSelection selection(fixture.matrix, problem.y, greedy(BasisCriterion::sggp, n), state);
    while (!selection.complete()) selection.iterate();
    CHECK(selection.basis_size() == n);
    SparseModel sggp = selection.model();
    sggp.columns = 2;
    const SparsePrediction by_sggp = predict_sparse(sggp, *fixture.kernel, test.x.data(), test.rows(), true);
    CHECK(max_difference(by_sggp.mean, exact.mean) < 1e-6);
    CHECK(max_difference(by_sggp.latent, exact.latent) < 1e-10);  // error bars on B = all rows are exact
    CHECK(selection.gap() < 1e-6);

    // Under the driver with tolerance 0 the run ends when the bounds meet
    // (gap ≤ 0: converged) or when the basis is full, whichever comes first.
    SolverState driven_state;
    GreedyBasisSelection driven(fixture.matrix, problem.y, greedy(BasisCriterion::sggp, n), driven_state);
    StoppingRule rule;
    rule.tolerance = 0.0;
    const SolverRun run = run_iterations(driven, fixture.matrix, rule, true);
    CAPTURE(describe(run.reason));
    CHECK((run.reason == StopReason::complete || (run.reason == StopReason::converged && driven.gap() <= 0.0)));
    SparseModel driven_model = driven.model();
    driven_model.columns = 2;
    const SparsePrediction by_driven = predict_sparse(driven_model, *fixture.kernel, test.x.data(), test.rows(), true);
    CHECK(max_difference(by_driven.mean, exact.mean) < 1e-6);
  }
}

TEST_CASE("the SGGP bounds hold at every step: Q(alpha) >= Q_min >= -|y|^2/2 - sigma^2 Q*(alpha*)") {
  const Problem problem = make_problem(400, 3, 31);
  const KernelHyperparameters h = se_ard(3, 1.0, 0.05);
  const std::size_t n = problem.rows();
  // Q_min = −½ yᵀK(K + σ²I)⁻¹y (Smola & Bartlett eq. 9).
  std::vector<double> k = reference_kernel_matrix(h, problem);
  const std::vector<double> solved = spd_solve(k, n, problem.y, 1);
  for (std::size_t i = 0; i < n; ++i) k[i * n + i] -= h.noise_variance;
  const std::vector<double> k_solved = multiply(k, solved, n, n, 1);
  double q_min = 0.0, half_y = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    q_min -= 0.5 * problem.y[i] * k_solved[i];
    half_y += 0.5 * problem.y[i] * problem.y[i];
  }
  Fixture fixture(problem, h, true);
  SolverState state;
  GreedyBasisSelection selection(fixture.matrix, problem.y, greedy(BasisCriterion::sggp, 80), state);
  double previous = 0.0;
  std::size_t steps = 0;
  while (!selection.complete()) {
    selection.iterate();
    ++steps;
    CAPTURE(steps);
    const double upper = selection.objective();
    const double lower = -half_y - h.noise_variance * selection.dual_objective();
    CHECK(upper >= q_min - 1e-9);
    CHECK(q_min >= lower - 1e-9);
    CHECK(upper <= previous + 1e-12);  // greedy steps only lower Q
    CHECK(selection.gap() >= -1e-12);  // the bounds hold up to rounding
    previous = upper;
  }
  CHECK(selection.basis_size() == 80);
  CHECK(selection.gap() < 0.2);
  // Q(α) at the end is the SR objective of the selected basis: β equals the normal-equation fit.
  const SparseModel model = selection.model();
  const SparseModel refit = fit_subset_of_regressors(fixture.matrix, problem.y, model.basis_rows);
  CHECK(relative_difference(selection.weights(), refit.weights) < 1e-6);
}

TEST_CASE("every greedy criterion yields the SR fit of its basis, and SGMA tracks the Nystrom residual trace") {
  const Problem problem = make_problem(500, 3, 41);
  const KernelHyperparameters h = se_ard(3, 0.8, 0.05);
  for (const BasisCriterion criterion : {BasisCriterion::sgma, BasisCriterion::mpgp, BasisCriterion::sggp}) {
    CAPTURE(basis_criterion_name(criterion));
    Fixture fixture(problem, h, true);
    SolverState state;
    GreedyBasisSelection selection(fixture.matrix, problem.y, greedy(criterion, 40), state);
    StoppingRule rule;
    rule.tolerance = 0.0;
    run_iterations(selection, fixture.matrix, rule, true);
    REQUIRE(selection.basis_size() == 40);
    const SparseModel model = selection.model();
    const SparseModel refit = fit_subset_of_regressors(fixture.matrix, problem.y, model.basis_rows);
    CHECK(relative_difference(model.weights, refit.weights) < 1e-6);
    CHECK(relative_difference(selection.weights(), refit.weights) < 1e-6);  // the incremental factor agrees
    std::vector<std::size_t> sorted = model.basis_indices;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    CHECK(model.diagnostics.at("trace_residual") ==
          doctest::Approx(nystrom_trace_residual(h, problem, model.basis_rows)).epsilon(1e-5));
  }
  // SGMA minimises that trace: far below a basis of the same size drawn at random.
  Fixture fixture(problem, h, false);
  SolverState state;
  GreedyBasisSelection sgma(fixture.matrix, problem.y, greedy(BasisCriterion::sgma, 40), state);
  StoppingRule rule;
  rule.tolerance = 0.0;
  run_iterations(sgma, fixture.matrix, rule, true);
  const double random_trace = nystrom_trace_residual(h, problem, rows_of(problem, first_rows(40)));
  CHECK(sgma.trace_residual() < 0.7 * random_trace);
}

TEST_CASE("greedy bases chosen from rows streamed in small blocks equal those from resident rows, bitwise") {
  // The candidates' rows are gathered and the cross products summed over passes of X: how the rows
  // arrive must not change a bit of the result.
  const Problem problem = make_problem(400, 3, 42);
  const KernelHyperparameters h = se_ard(3, 0.8, 0.05);
  for (const BasisCriterion criterion : {BasisCriterion::sgma, BasisCriterion::mpgp, BasisCriterion::sggp}) {
    CAPTURE(basis_criterion_name(criterion));
    std::vector<SparseModel> models;
    for (const bool streamed : {false, true}) {
      Fixture fixture(problem, h, streamed);
      SolverState state;
      GreedyBasisSelection selection(fixture.matrix, problem.y, greedy(criterion, 30), state);
      while (!selection.complete()) selection.iterate();
      models.push_back(selection.model());
    }
    CHECK(models[0].basis_indices == models[1].basis_indices);
    CHECK(models[0].weights == models[1].weights);
    CHECK(models[0].variance_factor == models[1].variance_factor);
  }
}

TEST_CASE("greedy bases with their columns in the kernel-column cache give the same bits, with fewer evaluations") {
  // Every step's pass uses each basis column again: cached, they are read instead of computed. A column
  // is admitted on its second request, so column j (requested by steps j + 1, …, m − 1 and the final fit)
  // hits m − 2 − j times when the cache holds every column; with room for 8, the first 8 stay and the
  // others are computed in every pass (none is evicted: every pass uses all of them).
  const Problem problem = make_problem(400, 3, 42);
  const KernelHyperparameters h = se_ard(3, 0.8, 0.05);
  const std::size_t n = problem.rows(), m = 30;
  for (const BasisCriterion criterion : {BasisCriterion::sgma, BasisCriterion::mpgp, BasisCriterion::sggp}) {
    for (const bool streamed : {false, true}) {
      CAPTURE(basis_criterion_name(criterion));
      CAPTURE(streamed);
      Fixture plain(problem, h, streamed);
      SolverState plain_state;
      GreedyBasisSelection reference(plain.matrix, problem.y, greedy(criterion, m), plain_state);
      while (!reference.complete()) reference.iterate();
      const SparseModel expected = reference.model();
      REQUIRE(expected.basis_indices.size() == m);
      for (const std::size_t capacity : {m, std::size_t{8}}) {
        CAPTURE(capacity);
        Fixture cached(problem, h, streamed, 1u << 20);
        cached.matrix.enable_column_cache(
            cached.context.memory().reserve("cache", KernelColumnCache::bytes_for(n, capacity)));
        SolverState state;
        GreedyBasisSelection selection(cached.matrix, problem.y, greedy(criterion, m), state);
        while (!selection.complete()) selection.iterate();
        const SparseModel model = selection.model();
        CHECK(model.basis_indices == expected.basis_indices);
        CHECK(model.weights == expected.weights);
        CHECK(model.variance_factor == expected.variance_factor);
        CHECK(selection.objective() == reference.objective());
        const std::uint64_t hits = cached.matrix.column_cache()->statistics().hits;
        std::uint64_t expected_hits = 0;
        for (std::size_t j = 0; j < std::min(capacity, m - 2); ++j) expected_hits += m - 2 - j;
        CHECK(hits == expected_hits);
        CHECK(cached.matrix.kernel_evaluations() == plain.matrix.kernel_evaluations() - hits * n);
      }
    }
  }
}

TEST_CASE("a greedy selection resumed from its stored state repeats the uninterrupted run") {
  const Problem problem = make_problem(300, 2, 51);
  const KernelHyperparameters h = se_ard(2, 0.7, 0.05);
  for (const BasisCriterion criterion : {BasisCriterion::sgma, BasisCriterion::mpgp, BasisCriterion::sggp}) {
    CAPTURE(basis_criterion_name(criterion));
    Fixture fixture(problem, h, false);
    SolverState whole = initial_solver_state({}, 9);
    GreedyBasisSelection uninterrupted(fixture.matrix, problem.y, greedy(criterion, 30), whole);
    for (int i = 0; i < 30; ++i) uninterrupted.iterate();

    SolverState first_half = initial_solver_state({}, 9);
    GreedyBasisSelection interrupted(fixture.matrix, problem.y, greedy(criterion, 30), first_half);
    for (int i = 0; i < 12; ++i) interrupted.iterate();
    interrupted.store_state();
    SolverState saved = first_half;  // what a checkpoint holds
    GreedyBasisSelection resumed(fixture.matrix, problem.y, greedy(criterion, 30), saved);
    for (int i = 12; i < 30; ++i) resumed.iterate();

    const SparseModel a = uninterrupted.model(), b = resumed.model();
    CHECK(a.basis_indices == b.basis_indices);
    CHECK(a.weights == b.weights);
    CHECK(uninterrupted.objective() == resumed.objective());
    if (criterion == BasisCriterion::sggp) CHECK(uninterrupted.gap() == resumed.gap());
  }
}

TEST_CASE("sparse fits reject an empty basis or one larger than the data") {
  const Problem problem = make_problem(50, 2, 61);
  const KernelHyperparameters h = se_ard(2);
  Fixture fixture(problem, h, false);
  SolverState state;
  CHECK_THROWS_WITH_AS(GreedyBasisSelection(fixture.matrix, problem.y, greedy(BasisCriterion::sggp, 0), state),
                       doctest::Contains("at least 1"), Error);
  CHECK_THROWS_WITH_AS(GreedyBasisSelection(fixture.matrix, problem.y, greedy(BasisCriterion::mpgp, 51), state),
                       doctest::Contains("51 rows is larger than the 50 training rows"), Error);
  CHECK_THROWS_WITH_AS(fit_subset_of_data(fixture.matrix, problem.y, {}), doctest::Contains("empty"), Error);
  CHECK_THROWS_WITH_AS(fit_reduced_rank(fixture.matrix, problem.y, first_rows(51)),
                       doctest::Contains("larger than the 50 training rows"), Error);
  CHECK_THROWS_WITH_AS(fit_subset_of_regressors(fixture.matrix, problem.y, {}), doctest::Contains("empty"), Error);
}

namespace {

SolverRun run_online(Fixture& fixture, const Problem& problem, const OnlineGpOptions& options, SolverState& state,
                     std::uint64_t max_iterations = std::numeric_limits<std::uint64_t>::max()) {
  OnlineGp online(fixture.matrix, problem.y, options, state);
  StoppingRule rule;
  rule.tolerance = 0.0;
  rule.max_iterations = max_iterations;
  const SolverRun run = run_iterations(online, fixture.matrix, rule, state.auxiliary.empty());
  online.store_state();
  return run;
}

}  // namespace

TEST_CASE("the online GP with an unbounded basis and zero novelty threshold is the exact GP") {
  const Problem problem = make_problem(60, 2, 23);
  const Problem test = make_problem(12, 2, 24);
  for (const KernelHyperparameters& h :
       {se_ard(2, 0.6, 0.1), KernelHyperparameters{KernelType::matern12, {0.8}, 1.0, 0.1}}) {
    CAPTURE(kernel_type_name(h.type));
    Fixture fixture(problem, h, true);
    SolverState state;
    const SolverRun run =
        run_online(fixture, problem, {.basis_size = 60, .novelty = 0.0, .rows_per_iteration = 7}, state);
    CHECK(run.reason == StopReason::complete);
    OnlineGp online(fixture.matrix, problem.y, {.basis_size = 60, .novelty = 0.0}, state);
    SparseModel model = online.model();
    model.columns = 2;
    CHECK(model.basis_size() == 60);
    const SparsePrediction exact = exact_gp(h, problem, test.x);
    const SparsePrediction ours = predict_sparse(model, *fixture.kernel, test.x.data(), test.rows(), true);
    CHECK(max_difference(ours.mean, exact.mean) < 1e-8);
    CHECK(max_difference(ours.latent, exact.latent) < 1e-8);
    // The sequential likelihood of a GP is its marginal likelihood (chain rule of p(y)).
    CHECK(online.objective() ==
          doctest::Approx(negative_log_marginal_likelihood(h, problem.x.data(), problem.y, 2).value).epsilon(1e-9));
  }
}

TEST_CASE("the online GP with a budget keeps Q = K_BV^-1 through deletions and resumes exactly") {
  const Problem problem = make_problem(300, 3, 25);
  const Problem test = make_problem(50, 3, 26);
  const KernelHyperparameters h = se_ard(3, 0.9, 0.05);
  Fixture fixture(problem, h, false);
  const OnlineGpOptions options{.basis_size = 25, .novelty = 1e-6, .passes = 2, .rows_per_iteration = 40};
  SolverState whole;
  run_online(fixture, problem, options, whole);
  const std::vector<double>& basis_values = whole.auxiliary.at("basis");
  REQUIRE(basis_values.size() == 25);
  CHECK(whole.auxiliary.at("progress")[1] > 0);  // deletions happened
  // Q = K_BV⁻¹ after every deletion: Q K_BV = I.
  const std::vector<std::size_t> basis(basis_values.begin(), basis_values.end());
  const std::vector<double> k_bv = kernel_block(h, rows_of(problem, basis), rows_of(problem, basis), 3);
  const std::vector<double> product = multiply(whole.auxiliary.at("Q"), k_bv, 25, 25, 25);
  double largest = 0.0;
  for (std::size_t i = 0; i < 25; ++i)
    for (std::size_t j = 0; j < 25; ++j)
      largest = std::max(largest, std::abs(product[i * 25 + j] - (i == j ? 1.0 : 0.0)));
  CHECK(largest < 1e-6);
  // The variances stay between 0 and the prior, and the mean predicts the test targets.
  OnlineGp online(fixture.matrix, problem.y, options, whole);
  SparseModel model = online.model();
  model.columns = 3;
  const SparsePrediction prediction = predict_sparse(model, *fixture.kernel, test.x.data(), test.rows(), true);
  CHECK(prediction.negative_variances == 0);
  double squared_error = 0.0, squared_target = 0.0;
  for (std::size_t j = 0; j < test.rows(); ++j) {
    CHECK(prediction.latent[j] <= h.signal_variance);
    squared_error += (prediction.mean[j] - test.y[j]) * (prediction.mean[j] - test.y[j]);
    squared_target += test.y[j] * test.y[j];
  }
  CHECK(squared_error < 0.1 * squared_target);
  // Interrupted after 5 blocks and resumed: the same state, bit for bit.
  SolverState part;
  run_online(fixture, problem, options, part, 5);
  CHECK(part.auxiliary.at("progress")[0] == 200);
  run_online(fixture, problem, options, part);
  CHECK(part.auxiliary == whole.auxiliary);
}

TEST_CASE("the online GP rejects an empty budget, no passes and a negative novelty threshold") {
  const Problem problem = make_problem(20, 2, 27);
  Fixture fixture(problem, se_ard(2), false);
  SolverState state;
  CHECK_THROWS_WITH_AS(OnlineGp(fixture.matrix, problem.y, {.basis_size = 0}, state),
                       doctest::Contains("budget of at least 1"), Error);
  CHECK_THROWS_WITH_AS(OnlineGp(fixture.matrix, problem.y, {.passes = 0}, state),
                       doctest::Contains("at least one pass"), Error);
  CHECK_THROWS_WITH_AS(OnlineGp(fixture.matrix, problem.y, {.novelty = -1}, state), doctest::Contains("non-negative"),
                       Error);
}

TEST_CASE("the committee machine with one module is the exact GP, and with k-means modules stays close to it") {
  const Problem problem = make_problem(240, 2, 28);
  const Problem test = make_problem(30, 2, 29);
  const KernelHyperparameters h = se_ard(2, 0.7, 0.05);
  Fixture fixture(problem, h, true);
  const SparsePrediction exact = exact_gp(h, problem, test.x);
  const CommitteePrediction one =
      predict_committee(fixture.matrix, problem.y, {first_rows(problem.rows())}, test.x.data(), test.rows(), 7, true);
  CHECK(max_difference(one.mean, exact.mean) < 1e-6);
  CHECK(max_difference(one.latent, exact.latent) < 1e-6);

  const KMeansResult clusters =
      k_means(fixture.context, fixture.resident, {.clusters = 4, .max_passes = 20, .seed = 3});
  const auto modules = clusters_as_modules(clusters.labels, 4, 60);
  REQUIRE(modules.size() == 4);
  std::size_t covered = 0;
  for (const auto& module : modules) covered += module.size();
  CHECK(covered == problem.rows());
  const CommitteePrediction committee =
      predict_committee(fixture.matrix, problem.y, modules, test.x.data(), test.rows(), 10, true);
  CHECK(committee.modules == 4);
  CHECK(max_difference(committee.mean, exact.mean) < 0.05);
  CHECK(committee.negative_variances == 0);
  for (std::size_t j = 0; j < test.rows(); ++j) CHECK(committee.latent[j] <= h.signal_variance);
}

TEST_CASE("subset of data, the online GP and the committee machine give the same bits streamed as resident") {
  // The gather paths besides the greedy bases' (tested above): SD's subset, the online GP's basis, the
  // committee's modules.
  const Problem problem = make_problem(240, 2, 30);
  const Problem test = make_problem(20, 2, 31);
  const KernelHyperparameters h = se_ard(2, 0.7, 0.05);
  const std::vector<std::size_t> subset = {5, 17, 40, 77, 120, 121, 199, 230};
  const std::vector<std::vector<std::size_t>> modules = {first_rows(120), {120, 150, 180, 200, 239}};
  std::vector<SparseModel> sd, online;
  std::vector<CommitteePrediction> committee;
  for (const bool streamed : {false, true}) {
    Fixture fixture(problem, h, streamed);
    sd.push_back(fit_subset_of_data(fixture.matrix, problem.y, subset));
    SolverState state;
    OnlineGp online_gp(fixture.matrix, problem.y,
                       {.basis_size = 30, .novelty = 1e-6, .passes = 2, .rows_per_iteration = 50}, state);
    StoppingRule rule;
    rule.tolerance = 0.0;
    run_iterations(online_gp, fixture.matrix, rule, true);
    online.push_back(online_gp.model());
    committee.push_back(predict_committee(fixture.matrix, problem.y, modules, test.x.data(), test.rows(), 7, true));
  }
  CHECK(sd[0].weights == sd[1].weights);
  CHECK(online[0].basis_indices == online[1].basis_indices);
  CHECK(online[0].weights == online[1].weights);
  CHECK(committee[0].mean == committee[1].mean);
  CHECK(committee[0].latent == committee[1].latent);
}

TEST_CASE("k-means separates well-separated blobs, its passes lower the inertia, and large clusters are cut") {
  Problem blobs;
  blobs.d = 2;
  std::mt19937_64 random(4);
  std::normal_distribution<double> spread(0.0, 0.1);
  const double centres[3][2] = {{-5, 0}, {5, 0}, {0, 8}};
  for (std::size_t i = 0; i < 300; ++i) {
    for (std::size_t l = 0; l < 2; ++l) blobs.x.push_back(centres[i % 3][l] + spread(random));
    blobs.y.push_back(0.0);
  }
  InMemoryRowSource rows = blobs.source();
  Context context;
  const KMeansResult one_pass = k_means(context, rows, {.clusters = 3, .max_passes = 1, .seed = 1});
  const KMeansResult result = k_means(context, rows, {.clusters = 3, .max_passes = 20, .seed = 1});
  CHECK(result.inertia <= one_pass.inertia);
  for (std::size_t i = 3; i < 300; ++i) CHECK(result.labels[i] == result.labels[i % 3]);
  CHECK(result.labels[0] != result.labels[1]);
  CHECK(result.labels[1] != result.labels[2]);
  const auto modules = clusters_as_modules(result.labels, 3, 40);  // 100-row clusters > 2·40: cut into 3 parts
  CHECK(modules.size() == 9);
  for (const auto& module : modules) CHECK(module.size() <= 80);
  CHECK_THROWS_WITH_AS(k_means(context, rows, {.clusters = 301}), doctest::Contains("k-means needs 1 to 300 clusters"),
                       Error);
}

TEST_CASE("on a smooth kernel every greedy basis reaches the kernel's numerical rank, and the SGGP bounds still hold") {
  // Long lengthscales and a small noise: K has few directions above kBasisIndependenceFloor, and
  // A = σ²K_B + K_NBᵀK_NB (condition number κ(K_B)²) lost its pivots long before K_B did.
  const Problem problem = make_problem(600, 3, 71);
  const KernelHyperparameters h = se_ard(3, 3.0, 1e-4);
  Fixture fixture(problem, h, false);
  // The rank: how many of 300 random rows a pivoted Cholesky of K_B keeps under the floor.
  const std::vector<std::size_t> random_rows = random_row_subset(problem.rows(), 300, 5);
  const std::size_t rank = independent_rows(*fixture.kernel, rows_of(problem, random_rows)).size();
  CAPTURE(rank);
  REQUIRE(rank < 200);  // the kernel is smooth enough for this test to mean something
  for (const BasisCriterion criterion : {BasisCriterion::sgma, BasisCriterion::mpgp, BasisCriterion::sggp}) {
    CAPTURE(basis_criterion_name(criterion));
    SolverState state;
    GreedyBasisSelection selection(fixture.matrix, problem.y, greedy(criterion, 300), state);
    while (!selection.complete()) selection.iterate();
    CHECK(selection.basis_size() >= rank * 9 / 10);
    if (criterion == BasisCriterion::sggp) CHECK(selection.gap() >= -1e-9);
    const SparseModel model = selection.model();
    const SparseModel refit = fit_subset_of_regressors(fixture.matrix, problem.y, model.basis_rows);
    CHECK(relative_difference(selection.weights(), refit.weights) < 1e-4);
  }
}

TEST_CASE("with s² ≫ σ² a greedy basis keeps the rows that matter down to the noise, and SR nears the exact GP") {
  // The regime: a smooth target (long lengthscales, s² = 1000) with σ² = 1e-6. The old floors, fixed
  // fractions of s² (1e-6 for the residual, 1e-8 for the jitter), were 1000σ² and 10σ²: this basis stopped at
  // 133 rows with the means 4.9e-3 (of their range) from the exact GP's; now 300 rows and 8.9e-4.
  const std::size_t d = 4;
  std::mt19937_64 random(17);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  auto make = [&](std::size_t n) {
    Problem problem;
    problem.d = d;
    for (std::size_t i = 0; i < n; ++i) {
      double linear = 0.0, projection = 0.0;
      for (std::size_t l = 0; l < d; ++l) {
        const double x = uniform(random);
        problem.x.push_back(x);
        linear += (1.0 + 0.3 * static_cast<double>(l)) * x;
        projection += (l % 2 == 0 ? 0.5 : -0.4) * x;
      }
      problem.y.push_back(linear + 0.3 * projection * projection + 0.2 * std::sin(3.0 * projection));
    }
    return problem;
  };
  const Problem problem = make(800), test = make(200);
  const KernelHyperparameters h = {KernelType::squared_exponential_ard, {2.0, 2.5, 3.0, 2.2}, 1000.0, 1e-6};
  const BasisResolution resolution = basis_resolution(h);
  CHECK(resolution.independence_floor * h.signal_variance <= h.noise_variance * (1 + 1e-12));
  CHECK(resolution.jitter <= 1e-2 * h.noise_variance * (1 + 1e-12));
  // The reference sets' noise (σ²/s² ≥ 4e-3) keeps the floors they were measured with.
  const BasisResolution kin40k = basis_resolution({KernelType::squared_exponential_ard, {1.0}, 1.69, 0.0105});
  CHECK(kin40k.independence_floor == 1e-6);
  CHECK(kin40k.jitter == 1e-8 * 1.69);

  Fixture fixture(problem, h, false);
  const SparsePrediction exact = exact_gp(h, problem, test.x);
  double spread = 0.0;
  for (const double value : exact.mean) spread = std::max(spread, std::abs(value));
  SolverState state;
  GreedyBasisSelection selection(fixture.matrix, problem.y, greedy(BasisCriterion::sgma, 400), state);
  while (!selection.complete()) selection.iterate();
  CAPTURE(selection.basis_size());
  CHECK(selection.basis_size() >= 250);
  SparseModel model = selection.model();
  model.columns = d;
  const SparsePrediction sparse = predict_sparse(model, *fixture.kernel, test.x.data(), test.rows(), false);
  const double error = max_difference(sparse.mean, exact.mean) / spread;
  CAPTURE(error);
  CHECK(error < 2e-3);
}

TEST_CASE("every iterative sparse method's declared tolerance agrees with the method the factory makes") {
  // The CLI decides --tol/--gap from the table (training_method.h); the driver
  // from the method's converges(). The two must not disagree.
  const Problem problem = make_problem(120, 2, 71);
  InMemoryRowSource rows = problem.source();
  const auto kernel = make_kernel(se_ard(2, 0.8, 0.05), 2);
  Context context;
  KernelMatrix matrix(context, rows, *kernel);
  std::size_t iterative = 0;
  for (const TrainingMethod& method : training_methods()) {
    if (method.dense() || !method.iterative()) continue;
    const std::string name = method.name;
    CAPTURE(name);
    SparseMethodOptions options;
    options.name = method.name;
    options.basis_size = 20;
    SolverState state = initial_solver_state({}, 1);
    const std::unique_ptr<SparseTrainingMethod> made = make_sparse_training_method(options, matrix, problem.y, state);
    CHECK(made->converges() == (method.tolerance != ToleranceMeaning::none));
    ++iterative;
  }
  CHECK(iterative == 5);  // sgma, mpgp, sggp, cholqr, online
  for (const char* direct : {"sd", "sr", "nystrom"}) CHECK_FALSE(find_training_method(direct)->iterative());
  CHECK(find_training_method("newton") == nullptr);
}

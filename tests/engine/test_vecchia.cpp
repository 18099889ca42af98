// The Vecchia likelihood (hyper/vecchia_likelihood.h) against the exact one,
// and its neighbour sets against a brute-force search.
#include "engine/core/work_progress.h"
#include "engine/data/nearest_neighbours.h"
#include "engine/hyper/hyperparameter_search.h"
#include "engine/hyper/vecchia_likelihood.h"
#include "engine/kernels/vecchia_factor.h"
#include "engine/linalg/cholesky.h"
#include "tests/engine/problems.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace gpstream;
using namespace gpstream::testing;

TEST_CASE("nearest neighbours before a limit equal a brute-force search, in scaled inputs") {
  const Problem p = make_problem(6000, 3, 41);
  const std::vector<double> scale = {2.0, 0.5, 1.0};
  const NeighbourIndex index(p.x.data(), p.rows(), 3, scale);
  std::vector<std::uint32_t> found;
  for (const std::size_t i :
       {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1500}, std::size_t{2500}, std::size_t{5999}}) {
    for (const std::size_t limit : {i, p.rows()}) {
      CAPTURE(i);
      CAPTURE(limit);
      index.nearest_before(i, 10, limit, found);
      std::vector<std::pair<double, std::uint32_t>> all;
      for (std::size_t j = 0; j < limit; ++j) {
        double distance = 0.0;
        for (std::size_t l = 0; l < 3; ++l) distance += std::pow((p.x[i * 3 + l] - p.x[j * 3 + l]) * scale[l], 2);
        all.emplace_back(distance, static_cast<std::uint32_t>(j));
      }
      std::sort(all.begin(), all.end());
      REQUIRE(found.size() == std::min<std::size_t>(10, limit));
      for (std::size_t t = 0; t < found.size(); ++t) CHECK(found[t] == all[t].second);
    }
  }
}

TEST_CASE("with every earlier row as a neighbour, the Vecchia likelihood and its gradient are the exact ones") {
  const Problem p = make_problem(120, 2, 42);
  MeanFunction mean;
  mean.intercept = true;
  mean.inputs = {1};
  const std::vector<double> beta = {0.3, -0.2};
  Context context;
  for (const KernelHyperparameters& h : every_kernel(2)) {
    if (h.type == KernelType::histogram_intersection) continue;
    CAPTURE(kernel_type_name(h.type));
    VecchiaLikelihood vecchia(context, p.x.data(), p.y, 2, mean, {.neighbours = 119, .seed = 3});
    vecchia.condition_on(h);
    const MarginalLikelihood approximate = vecchia.evaluate(h, beta);
    const MarginalLikelihood exact = ExactLikelihood(p.x.data(), p.y, 2, mean).evaluate(h, beta);
    CHECK(approximate.value == doctest::Approx(exact.value).epsilon(1e-9));
    REQUIRE(approximate.gradient.size() == exact.gradient.size());
    for (std::size_t j = 0; j < exact.gradient.size(); ++j) {
      CAPTURE(j);
      CHECK(approximate.gradient[j] == doctest::Approx(exact.gradient[j]).epsilon(1e-7).scale(1e-6));
    }
  }
}

TEST_CASE("the Vecchia gradient equals finite differences of its value, and the sum does not depend on threads") {
  const Problem p = make_problem(800, 3, 43);
  MeanFunction mean;
  mean.intercept = true;
  const KernelHyperparameters h{KernelType::matern32, {0.9, 1.4, 0.7}, 1.3, 0.05};
  Context context;
  VecchiaLikelihood vecchia(context, p.x.data(), p.y, 3, mean, {.neighbours = 12, .seed = 5});
  vecchia.condition_on(h);
  const std::vector<double> beta = {0.1};
  const MarginalLikelihood at = vecchia.evaluate(h, beta);
  std::vector<double> point = log_parameters(h);
  point.push_back(beta[0]);
  const std::vector<double> numeric = central_differences(
      [&](const std::vector<double>& t) {
        return vecchia.evaluate(from_log_parameters(h.type, std::span(t).first(5)), std::span(t).last(1)).value;
      },
      point, point.size(), 1e-6);
  for (std::size_t j = 0; j < numeric.size(); ++j) {
    CAPTURE(j);
    CHECK(at.gradient[j] == doctest::Approx(numeric[j]).epsilon(1e-5).scale(1e-3));
  }
  Context one_thread({.threads = 1});
  VecchiaLikelihood serial(one_thread, p.x.data(), p.y, 3, mean, {.neighbours = 12, .seed = 5});
  serial.condition_on(h);
  const MarginalLikelihood again = serial.evaluate(h, beta);
  CHECK(again.value == at.value);
  CHECK(again.gradient == at.gradient);
}

namespace {

// Q = UᵀU of a Vecchia factor, dense (n×n): column j is Q e_j.
std::vector<double> dense_precision(const VecchiaFactor& factor) {
  const std::size_t n = factor.size();
  std::vector<double> q(n * n), unit(n, 0.0), column(n);
  for (std::size_t j = 0; j < n; ++j) {
    unit[j] = 1.0;
    factor.apply_inverse(unit, column);
    unit[j] = 0.0;
    for (std::size_t i = 0; i < n; ++i) q[i * n + j] = column[i];
  }
  return q;
}

}  // namespace

TEST_CASE("the Vecchia factor with every earlier row as a neighbour applies K̄⁻¹, for every kernel") {
  const Problem p = make_problem(150, 2, 44);
  Context context;
  for (const KernelHyperparameters& h : every_kernel(2)) {
    if (h.type == KernelType::histogram_intersection) continue;
    CAPTURE(kernel_name(h));
    InMemoryRowSource rows = p.source();
    const auto kernel = make_kernel(h, 2);
    const VecchiaFactor factor(context, rows, *kernel, 149, 9);
    // K̄ and its Cholesky solve, the reference.
    std::vector<double> k(150 * 150);
    PreparedRows prepared;
    kernel->prepare(p.x.data(), 150, prepared);
    kernel->evaluate(prepared, prepared, k.data());
    for (std::size_t i = 0; i < 150; ++i) k[i * 150 + i] += h.noise_variance;
    cholesky_factor(k.data(), 150, "K̄");
    std::vector<double> expected = p.y, applied(150);
    cholesky_solve(k.data(), 150, expected.data(), 1);
    factor.apply_inverse(p.y, applied);
    CHECK(relative_difference(applied, expected) <= 1e-9);
  }
}

TEST_CASE("the Vecchia likelihood's Fisher information is that of the density it defines, by finite differences") {
  // The Vecchia density is N(Hβ, Q⁻¹), Q = UᵀU (kernels/vecchia_factor.h, the same order and sets): its
  // information is ½ tr(Q⁻¹∂_jQ Q⁻¹∂_kQ) in θ and HᵀQH in β, here with ∂Q by central differences of the factor.
  // With every earlier row as a neighbour that is the exact GP's. With fewer, Guinness's formula takes the
  // neighbours' second moments as the GP's rather than the Vecchia density's (0.3 % off here at m = 8): an
  // approximation of a search direction, which the objective's own decrease checks.
  const std::size_t n = 60, m = n - 1;
  const Problem p = make_problem(n, 2, 45);
  MeanFunction mean;
  mean.intercept = true;
  mean.inputs = {0};
  const std::vector<double> beta = {0.2, -0.1};
  KernelHyperparameters h{KernelType::matern32, {0.8, 1.1}, 1.2, 0.08};
  h.added = {{KernelType::squared_exponential_ard, {2.5, 3.0}, 0.5}};
  Context context;
  VecchiaLikelihood vecchia(context, p.x.data(), p.y, 2, mean, {.neighbours = m, .seed = 6});
  vecchia.condition_on(h);
  const MarginalLikelihood plain = vecchia.evaluate(h, beta);
  const MarginalLikelihood with = vecchia.evaluate_with_information(h, beta);
  CHECK(with.value == plain.value);
  CHECK(with.gradient == plain.gradient);
  const std::size_t kernel_parameters = log_parameters(h).size(), parameters = kernel_parameters + 2;
  REQUIRE(with.information.size() == parameters * parameters);

  InMemoryRowSource rows = p.source();
  const auto precision_at = [&](const std::vector<double>& theta) {
    const auto kernel = make_kernel(with_log_parameters(h, theta), 2);
    return dense_precision(VecchiaFactor(context, rows, *kernel, m, 6));
  };
  const std::vector<double> theta = log_parameters(h);
  const std::vector<double> q = precision_at(theta);
  std::vector<double> covariance = q;  // Q⁻¹ by its Cholesky factor, column by column
  cholesky_factor(covariance.data(), n, "Q");
  std::vector<double> identity(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) identity[i * n + i] = 1.0;
  cholesky_solve(covariance.data(), n, identity.data(), n);
  const std::vector<double>& sigma = identity;
  constexpr double kStep = 1e-5;
  std::vector<std::vector<double>> products;  // Σ ∂_jQ for each θ_j
  for (std::size_t j = 0; j < kernel_parameters; ++j) {
    std::vector<double> up = theta, down = theta;
    up[j] += kStep;
    down[j] -= kStep;
    const std::vector<double> q_up = precision_at(up), q_down = precision_at(down);
    std::vector<double> product(n * n, 0.0);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t c = 0; c < n; ++c)
        for (std::size_t b = 0; b < n; ++b) product[a * n + b] += sigma[a * n + c] * (q_up[c * n + b] - q_down[c * n + b]) / (2 * kStep);
    products.push_back(std::move(product));
  }
  for (std::size_t j = 0; j < kernel_parameters; ++j) {
    for (std::size_t k = 0; k < kernel_parameters; ++k) {
      double trace = 0.0;
      for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) trace += products[j][a * n + b] * products[k][b * n + a];
      CAPTURE(j);
      CAPTURE(k);
      CHECK(with.information[j * parameters + k] == doctest::Approx(0.5 * trace).epsilon(1e-5).scale(1e-4));
    }
  }
  // β: HᵀQH, and no cross terms with θ.
  std::vector<double> basis(n * 2);
  for (std::size_t i = 0; i < n; ++i) mean.basis(p.x.data() + i * 2, basis.data() + i * 2);
  for (std::size_t a = 0; a < 2; ++a) {
    for (std::size_t b = 0; b < 2; ++b) {
      double expected = 0.0;
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) expected += basis[i * 2 + a] * q[i * n + j] * basis[j * 2 + b];
      CHECK(with.information[(kernel_parameters + a) * parameters + kernel_parameters + b] ==
            doctest::Approx(expected).epsilon(1e-9));
    }
    for (std::size_t j = 0; j < kernel_parameters; ++j) CHECK(with.information[j * parameters + kernel_parameters + a] == 0.0);
  }
}

TEST_CASE("Fisher scoring on the Vecchia likelihood reaches L-BFGS's optimum in fewer evaluations") {
  const Problem p = make_problem(1500, 2, 46);
  MeanFunction mean;
  mean.intercept = true;
  Context context;
  VecchiaLikelihood vecchia(context, p.x.data(), p.y, 2, mean, {.neighbours = 15, .seed = 7});
  const KernelHyperparameters start{KernelType::matern32, {1.0, 1.0}, 1.0, 0.1};
  vecchia.condition_on(start);
  HyperparameterSearchOptions options;
  options.tolerance = 1e-8;
  options.max_evaluations = 500;
  WorkProgress progress(context, 2);
  const SearchStart scored = fisher_scoring_from(context, vecchia, start, {}, 0, options, progress);
  const SearchStart quasi_newton = search_from(context, vecchia, start, {}, 1, options, progress);
  CAPTURE(scored.stop_reason);
  CAPTURE(scored.evaluations);
  CAPTURE(quasi_newton.evaluations);
  CHECK(scored.objective <= quasi_newton.objective + 1e-6 * std::abs(quasi_newton.objective));
  const std::vector<double> a = log_parameters(scored.optimum), b = log_parameters(quasi_newton.optimum);
  for (std::size_t j = 0; j < a.size(); ++j) CHECK(a[j] == doctest::Approx(b[j]).epsilon(1e-3).scale(1e-2));
  CHECK(2 * scored.evaluations < quasi_newton.evaluations);
  CHECK(scored.evaluations <= 25);
}

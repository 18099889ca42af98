// CholQR (Cao et al. 2015): the objective, its gradient and the factored
// representation against closed forms computed densely.
#include "engine/core/error.h"
#include "engine/hyper/marginal_likelihood.h"
#include "engine/sparse/inducing_objective.h"
#include "dense_reference.h"
#include "problems.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <numbers>

using namespace gpstream;
using namespace gpstream::testing;

namespace {

std::vector<std::size_t> every_other_row(std::size_t n, std::size_t step) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < n; i += step) rows.push_back(i);
  return rows;
}

// F by its definition: ½[yᵀ(Q̂ + σ²I)⁻¹y + log|Q̂ + σ²I| + vσ⁻² tr(K − Q̂)] + (n/2) log 2π, densely.
double dense_inducing_objective(const KernelHyperparameters& h, const Problem& p, std::span<const std::size_t> inducing,
                                bool variational) {
  const std::size_t n = p.rows(), m = inducing.size();
  std::vector<double> x_i;
  for (const std::size_t row : inducing) x_i.insert(x_i.end(), &p.x[row * p.d], &p.x[row * p.d] + p.d);
  const std::vector<double> k_ni = kernel_block(h, p.x, x_i, p.d);
  std::vector<double> k_in(m * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) k_in[j * n + i] = k_ni[i * m + j];
  const std::vector<double> solved = spd_solve(kernel_block(h, x_i, x_i, p.d), m, k_in, n);  // K_I⁻¹K_IN
  std::vector<double> sigma(n * n);
  double trace = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double q = 0.0;
      for (std::size_t k = 0; k < m; ++k) q += k_ni[i * m + k] * solved[k * n + j];
      sigma[i * n + j] = q + (i == j ? h.noise_variance : 0.0);
      if (i == j) trace += reference_kernel(h, &p.x[i * p.d], &p.x[i * p.d], p.d) - q;
    }
  }
  const std::vector<double> alpha = spd_solve(sigma, n, p.y, 1);
  double fit = 0.0;
  for (std::size_t i = 0; i < n; ++i) fit += p.y[i] * alpha[i];
  return 0.5 * (fit + log_determinant(sigma, n) + (variational ? trace / h.noise_variance : 0.0)) +
         0.5 * static_cast<double>(n) * std::log(2.0 * std::numbers::pi);
}

}  // namespace

TEST_CASE("the inducing objectives equal their dense definitions, and their gradients finite differences") {
  const Problem p = make_problem(40, 3, 41);
  const std::vector<std::size_t> inducing = {3, 17, 8, 31, 22, 0, 12};
  for (const KernelHyperparameters& h : every_kernel(3)) {
    for (const InducingObjective kind : {InducingObjective::variational, InducingObjective::likelihood}) {
      CAPTURE(kernel_type_name(h.type));
      CAPTURE(h.lengthscales.size());
      CAPTURE(inducing_objective_name(kind));
      const InducingObjectiveValue value = evaluate_inducing_objective(h, p.x.data(), p.rows(), p.d, p.y, inducing, kind, true);
      CHECK(value.value == doctest::Approx(dense_inducing_objective(h, p, inducing, kind == InducingObjective::variational)).epsilon(1e-9));
      const std::vector<double> theta = log_parameters(h);
      REQUIRE(value.gradient.size() == theta.size());
      constexpr double step = 1e-5;
      for (std::size_t j = 0; j < theta.size(); ++j) {
        CAPTURE(j);
        std::vector<double> up = theta, down = theta;
        up[j] += step;
        down[j] -= step;
        const auto at = [&](const std::vector<double>& t) {
          return evaluate_inducing_objective(from_log_parameters(h.type, t), p.x.data(), p.rows(), p.d, p.y, inducing, kind, false).value;
        };
        CHECK(value.gradient[j] == doctest::Approx((at(up) - at(down)) / (2 * step)).epsilon(1e-6).scale(1.0));
      }
    }
  }
}

TEST_CASE("with every row inducing, both objectives equal the exact negative log marginal likelihood") {
  const Problem p = make_problem(30, 2, 42);
  const KernelHyperparameters h = se_ard(2, 0.7, 0.1);
  std::vector<std::size_t> all(p.rows());
  std::iota(all.begin(), all.end(), 0);
  const MarginalLikelihood exact = negative_log_marginal_likelihood(h, p.x.data(), p.y, p.d);
  for (const InducingObjective kind : {InducingObjective::variational, InducingObjective::likelihood}) {
    const InducingObjectiveValue value = evaluate_inducing_objective(h, p.x.data(), p.rows(), p.d, p.y, all, kind, true);
    CHECK(value.value == doctest::Approx(exact.value).epsilon(1e-9));
    for (std::size_t j = 0; j < exact.gradient.size(); ++j) CHECK(value.gradient[j] == doctest::Approx(exact.gradient[j]).epsilon(1e-6).scale(1.0));
  }
}

#include "engine/core/error.h"
#include "engine/hyper/marginal_likelihood.h"
#include "problems.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

using namespace gpstream;
using namespace gpstream::testing;

TEST_CASE("the marginal likelihood gradient equals central finite differences, for every kernel") {
  const Problem p = make_problem(80, 3, 31);
  for (const KernelHyperparameters& h : every_kernel(3)) {
    CAPTURE(kernel_type_name(h.type));
    CAPTURE(h.lengthscales.size());
    const MarginalLikelihood analytic = negative_log_marginal_likelihood(h, p.x.data(), p.y, 3);
    const std::vector<double> theta = log_parameters(h);
    REQUIRE(analytic.gradient.size() == theta.size());
    const std::vector<double> numeric = central_differences(
        [&](const std::vector<double>& t) {
          return negative_log_marginal_likelihood(with_log_parameters(h, t), p.x.data(), p.y, 3).value;
        },
        theta, theta.size(), 1e-5);
    for (std::size_t j = 0; j < theta.size(); ++j) {
      CAPTURE(j);
      CHECK(analytic.gradient[j] == doctest::Approx(numeric[j]).epsilon(1e-6).scale(1.0));
    }
  }
}

TEST_CASE("the marginal likelihood value equals the formula evaluated by elimination on a tiny problem") {
  const Problem p = make_problem(5, 2, 32);
  const KernelHyperparameters h = se_ard(2, 0.9, 0.3);
  std::vector<double> a = reference_kernel_matrix(h, p);
  std::vector<double> b = p.y;
  // Gaussian elimination without pivoting (K̄ is SPD): det and K̄⁻¹y.
  const std::size_t n = 5;
  double log_determinant = 0.0;
  for (std::size_t c = 0; c < n; ++c) {
    log_determinant += std::log(a[c * n + c]);
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / a[c * n + c];
      for (std::size_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> solution(n);
  for (std::size_t r = n; r-- > 0;) {
    double sum = b[r];
    for (std::size_t k = r + 1; k < n; ++k) sum -= a[r * n + k] * solution[k];
    solution[r] = sum / a[r * n + r];
  }
  double fit = 0.0;
  for (std::size_t i = 0; i < n; ++i) fit += p.y[i] * solution[i];
  const double expected = 0.5 * fit + 0.5 * log_determinant + 2.5 * std::log(2.0 * std::numbers::pi);
  CHECK(negative_log_marginal_likelihood(h, p.x.data(), p.y, 2).value == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("log-parameters round-trip") {
  const KernelHyperparameters h{KernelType::matern52, {0.5, 2.0}, 1.5, 0.01};
  const KernelHyperparameters back = from_log_parameters(h.type, log_parameters(h));
  CHECK(back.lengthscales[0] == doctest::Approx(0.5));
  CHECK(back.lengthscales[1] == doctest::Approx(2.0));
  CHECK(back.signal_variance == doctest::Approx(1.5));
  CHECK(back.noise_variance == doctest::Approx(0.01));
}

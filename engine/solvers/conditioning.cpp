#include "engine/solvers/conditioning.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/row_source_utilities.h"
#include "engine/linalg/cholesky.h"
#include "engine/linalg/reproducible_norm.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpstream {

double relative_residual(std::span<const double> residual, double target_norm, Communicator& ranks) {
  const double norm = reproducible_norm(residual, ranks);
  return target_norm > 0 ? norm / target_norm : norm;
}

double residual_rounding_floor(std::span<const double> absolute_products, double target_norm, Communicator& ranks) {
  constexpr double kUnitRoundoff = std::numeric_limits<double>::epsilon() / 2;
  return kUnitRoundoff * relative_residual(absolute_products, target_norm, ranks);
}

void throw_ill_conditioned(const Kernel& kernel, double tolerance, const std::string& evidence) {
  GPSTREAM_THROW(
      "K̄ = K + σ²I is too ill-conditioned for the tolerance {:g}: {}. Raise the noise variance (now {:.3g} against a "
      "signal variance of {:.3g}), remove duplicated or near-duplicated rows, or loosen the tolerance",
      tolerance, evidence, kernel.noise_variance(), kernel.hyperparameters().signal_variance);
}

void check_tolerance_attainable(KernelMatrix& kernel, std::span<const double> y, double tolerance,
                                std::size_t sample_rows) {
  const std::size_t n = kernel.partition().global_rows;
  const std::size_t d = kernel.rows().columns();
  // As many rows as a quarter of the free budget holds (2m² + m(d + 4) doubles), at most `sample_rows`;
  // the same on every rank (the budgets are alike). Too few to tell anything: no check.
  const double room = static_cast<double>(kernel.context().memory().available()) / 4 / sizeof(double);
  const double fits = (std::sqrt(static_cast<double>((d + 4) * (d + 4)) + 8 * room) - static_cast<double>(d + 4)) / 4;
  const std::size_t m = std::min({n, sample_rows, static_cast<std::size_t>(std::max(fits, 0.0))});
  if (m < 100 && m < n) return;
  // Its own seed: the solver's random stream must not depend on whether this check ran.
  const std::vector<std::size_t> sample = random_row_subset(n, m, kernel.context().seed() ^ 0x636f6e64ULL);
  MemoryReservation memory = kernel.context().memory().reserve(
      fmt::format("the conditioning check on {} sampled rows", m),
      sizeof(double) * checked_add(checked_multiply(m, m, 2), checked_multiply(m, d + 4)));
  std::vector<double> x;
  kernel.exchange().collect_rows(sample, x);
  const std::vector<double> y_sample = kernel.exchange().collect_values(sample, y);
  std::vector<double> alpha = y_sample;
  std::vector<double> matrix(m * m);
  kernel.block(x.data(), m, x.data(), m, matrix.data());
  for (std::size_t i = 0; i < m; ++i) matrix[i * m + i] += kernel.kernel().noise_variance();
  const std::vector<double> sample_matrix = matrix;
  cholesky_factor(matrix.data(), m, "K̄ on a sample of the training rows");
  cholesky_solve(matrix.data(), m, alpha.data(), 1);
  std::vector<double> magnitude(m), products(m);
  double largest = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    magnitude[j] = std::abs(alpha[j]);
    largest = std::max(largest, magnitude[j]);
  }
  cblas_dgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(m), static_cast<int>(m), 1.0, sample_matrix.data(),
              static_cast<int>(m), magnitude.data(), 1, 0.0, products.data(), 1);
  SingleProcess sample_only;  // every rank solves the same sample
  const double floor = residual_rounding_floor(products, reproducible_norm(y_sample, sample_only), sample_only);
  if (floor > tolerance) {
    throw_ill_conditioned(
        kernel.kernel(), tolerance,
        fmt::format("solved exactly on {} random rows alone, its weights reach |alpha| {:.3g}, and with weights that "
                    "large the relative residual |K̄α − y|/|y| cannot be computed below about {:.3g} in double "
                    "precision",
                    m, largest, floor));
  }
}

}  // namespace gpstream

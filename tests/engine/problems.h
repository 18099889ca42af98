// Small GP problems with known answers, shared by the engine tests.
#pragma once

#include "engine/data/in_memory_row_source.h"
#include "engine/kernels/kernel.h"
#include "engine/linalg/cholesky.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpstream::testing {

struct Problem {
  std::vector<double> x;  // n×d
  std::vector<double> y;  // n
  std::size_t d = 0;
  std::size_t rows() const { return y.size(); }
  InMemoryRowSource source() const { return InMemoryRowSource(x, y, d); }
};

// x ~ U[-2, 2]^d, y = sin(x₁) + ½ cos(2 x₂) + noise, roughly standardised.
inline Problem make_problem(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::normal_distribution<double> noise(0.0, 0.1);
  Problem problem;
  problem.d = d;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t l = 0; l < d; ++l) problem.x.push_back(uniform(random));
    const double* row = &problem.x[i * d];
    problem.y.push_back(std::sin(row[0]) + 0.5 * std::cos(2.0 * row[d > 1 ? 1 : 0]) + noise(random));
  }
  return problem;
}

inline KernelHyperparameters se_ard(std::size_t d, double lengthscale = 1.0, double noise = 0.1) {
  return {KernelType::squared_exponential_ard, std::vector<double>(d, lengthscale), 1.0, noise};
}

// The Matérn class's correlation at distance r for any smoothness ν
// [RW06 eq. 4.14]: 2^{1−ν}/Γ(ν) (√(2ν) r)^ν K_ν(√(2ν) r), K_ν the modified
// Bessel function of the second kind; exp(−r²/2) as ν → ∞ (the squared
// exponential). The general formula, not a family's own: every stationary
// family of the registry is checked against it by its smoothness alone.
inline double matern_correlation(double smoothness, double r) {
  if (std::isinf(smoothness)) return std::exp(-r * r / 2.0);
  if (r == 0.0) return 1.0;
  const double scaled = std::sqrt(2.0 * smoothness) * r;
  if (scaled > 600.0) return 0.0;  // below 1e-250; K_ν's series gives up there
  return std::exp((1.0 - smoothness) * std::log(2.0) - std::lgamma(smoothness) + smoothness * std::log(scaled)) *
         std::cyl_bessel_k(smoothness, scaled);
}

// k(x, z) straight from the formulas, one pair at a time: the reference the
// block evaluation is checked against.
inline double reference_kernel(const KernelHyperparameters& h, const double* x, const double* z, std::size_t d) {
  if (h.term_count() > 1) {  // a sum: each term by its formula
    double sum = 0.0;
    for (std::size_t t = 0; t < h.term_count(); ++t) {
      KernelHyperparameters term;
      static_cast<KernelTerm&>(term) = h.term(t);
      sum += reference_kernel(term, x, z, d);
    }
    return sum;
  }
  if (!is_stationary(h.type)) {
    // The one family that is not: hik, (s²/d) Σ_l min(Φ(x_l), Φ(z_l)). A new one needs its formula here.
    if (h.type != KernelType::histogram_intersection)
      throw std::logic_error("reference_kernel: no formula for the " + kernel_type_name(h.type) + " kernel");
    double sum = 0.0;
    for (std::size_t l = 0; l < d; ++l) {
      const auto cdf = [](double t) { return 0.5 * (1.0 + std::erf(t / std::sqrt(2.0))); };
      sum += std::min(cdf(x[l]), cdf(z[l]));
    }
    return h.signal_variance * sum / static_cast<double>(d);
  }
  double squared = 0.0;  // r² = Σ (x_l − z_l)² / ℓ_l²
  for (std::size_t l = 0; l < d; ++l) {
    const double lengthscale = h.lengthscales[h.lengthscales.size() == 1 ? 0 : l];
    const double difference = x[l] - z[l];
    squared += difference * difference / (lengthscale * lengthscale);
  }
  if (h.type == KernelType::rational_quadratic) {  // s² (1 + r²/(2α))^{−α} [RW06 eq. 4.19]
    const double alpha = h.family_parameters.at(0);
    return h.signal_variance * std::pow(1.0 + squared / (2.0 * alpha), -alpha);
  }
  if (!family_parameter_specs(h.type).empty())
    throw std::logic_error("reference_kernel: no formula for the " + kernel_type_name(h.type) + " kernel");
  return h.signal_variance * matern_correlation(spectral_smoothness(h.type), std::sqrt(squared));
}

// (f(θ + h e_j) − f(θ − h e_j)) / 2h for j < count: the reference every
// analytic gradient is checked against.
inline std::vector<double> central_differences(const std::function<double(const std::vector<double>&)>& f,
                                               const std::vector<double>& theta, std::size_t count, double step) {
  std::vector<double> differences(count);
  for (std::size_t j = 0; j < count; ++j) {
    std::vector<double> up = theta, down = theta;
    up[j] += step;
    down[j] -= step;
    differences[j] = (f(up) - f(down)) / (2.0 * step);
  }
  return differences;
}

// One kernel of every type of the registry on d inputs (d > 1), ARD and
// isotropic where both exist, and a sum.
inline std::vector<KernelHyperparameters> every_kernel(std::size_t d) {
  std::vector<double> ard(d);
  for (std::size_t l = 0; l < d; ++l) ard[l] = 0.6 + 0.35 * static_cast<double>(l);
  std::vector<KernelHyperparameters> kernels;
  for (const KernelType type : kernel_types()) {
    const double offset = 0.1 * static_cast<double>(kernels.size() % 5);
    const std::size_t lengthscales = default_lengthscale_count(type, d);
    if (lengthscales == d) kernels.push_back({type, ard, 1.1 + offset, 0.05 + offset / 4});  // ARD
    if (lengthscales > 0) kernels.push_back({type, {0.9 + offset}, 1.5 - offset, 0.1});     // one for every input
    if (lengthscales == 0) kernels.push_back({type, {}, 1.6, 0.05});
  }
  // A family's own parameters away from their starts (rational quadratic's α = 1 is a special value of none).
  for (KernelHyperparameters& h : kernels)
    for (double& value : h.family_parameters) value *= 1.7;
  // A sum: short-range Matérn 1/2 plus a long-range rbf.
  kernels.push_back(
      {KernelType::matern12, ard, 1.0, 0.06, {{KernelType::squared_exponential_ard, std::vector<double>(d, 3.0), 0.4}}});
  return kernels;
}

// K̄ = K + σ²I, n×n, from the reference formula.
inline std::vector<double> reference_kernel_matrix(const KernelHyperparameters& h, const Problem& p) {
  const std::size_t n = p.rows();
  std::vector<double> k(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      k[i * n + j] = reference_kernel(h, &p.x[i * p.d], &p.x[j * p.d], p.d) + (i == j ? h.noise_variance : 0.0);
  return k;
}

inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return std::sqrt(difference / norm);
}

// n rows drawn from a zero-mean GP with kernel h on x ~ U[-2, 2]²: y = L z + noise, L L' = K.
inline Problem draw_from_gp(const KernelHyperparameters& h, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  Problem p;
  p.d = h.lengthscales.size();
  for (std::size_t i = 0; i < p.d * n; ++i) p.x.push_back(uniform(random));
  KernelHyperparameters noise_free = h;  // a sum keeps its terms
  noise_free.noise_variance = 1e-8;
  std::vector<double> k = reference_kernel_matrix(noise_free, [&] {
    Problem shape;
    shape.d = p.d;
    shape.x = p.x;
    shape.y.assign(n, 0.0);
    return shape;
  }());
  cholesky_factor(k.data(), n, "the test kernel");
  std::vector<double> z(n);
  for (double& value : z) value = normal(random);
  p.y.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j <= i; ++j) p.y[i] += k[i * n + j] * z[j];
    p.y[i] += std::sqrt(h.noise_variance) * normal(random);
  }
  return p;
}

}  // namespace gpstream::testing

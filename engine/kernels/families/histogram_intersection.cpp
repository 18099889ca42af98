// The histogram intersection kernel "hik": k(x, z) = (s²/d) Σ_l min(Φ(x_l), Φ(z_l)),
// Φ the standard normal CDF [Cao15 §4.1.4]; not differentiable in x.
// min(a, b) is a covariance only for a, b ≥ 0, and inputs are standardised
// (so often negative): Φ maps each input monotonically into (0, 1), which
// keeps the kernel positive semi-definite for every input and compares the
// inputs' quantiles. No lengthscales. prepare() applies Φ once per row, so a
// block is d minima per pair — no GEMM, since min() has no product structure.
#include "engine/kernels/kernel_implementations.h"

#include <cmath>
#include <numbers>

namespace gpstream::detail {
namespace {

class HistogramIntersectionKernel final : public Kernel {
 public:
  HistogramIntersectionKernel(const KernelHyperparameters& hyperparameters, std::size_t dimension)
      : Kernel(hyperparameters, dimension), scale_(hyperparameters.signal_variance / static_cast<double>(dimension)) {}

  // values = Φ(x); squared_norms (unused by the min) holds k(x, x).
  void prepare(const double* rows, std::size_t count, PreparedRows& out) const override {
    const std::size_t d = dimension();
    out.count = count;
    out.values.resize(count * d);
    out.squared_norms.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      double sum = 0.0;
      for (std::size_t l = 0; l < d; ++l) {
        const double mapped = 0.5 * std::erfc(-rows[i * d + l] * std::numbers::sqrt2 / 2.0);
        out.values[i * d + l] = mapped;
        sum += mapped;
      }
      out.squared_norms[i] = scale_ * sum;
    }
  }

  using Kernel::evaluate;
  void evaluate(const PreparedView& a, const PreparedView& b, double* block) const override {
    const std::size_t d = dimension();
    for (std::size_t i = 0; i < a.count; ++i) {
      const double* x = a.values + i * d;
      for (std::size_t j = 0; j < b.count; ++j) {
        const double* z = b.values + j * d;
        double sum = 0.0;
        for (std::size_t l = 0; l < d; ++l) sum += std::fmin(x[l], z[l]);
        block[i * b.count + j] = scale_ * sum;
      }
    }
  }

  double self_covariance(const double* x) const override {
    double sum = 0.0;
    for (std::size_t l = 0; l < dimension(); ++l) sum += 0.5 * std::erfc(-x[l] * std::numbers::sqrt2 / 2.0);
    return scale_ * sum;
  }

 protected:
  // The only parameter is log s², and ∂k/∂log s² = k.
  void add_parameter_gradient_rows(const PreparedView& a, const PreparedView& b, std::span<const double* const> weights,
                                   double* gradients) const override {
    const std::size_t parameters = parameter_count();
    std::vector<double> row(b.count);
    for (std::size_t i = 0; i < a.count; ++i) {
      evaluate(PreparedView{a.values + i * dimension(), a.squared_norms + i, 1}, b, row.data());
      for (std::size_t w = 0; w < weights.size(); ++w) {
        for (std::size_t j = 0; j < b.count; ++j) gradients[w * parameters] += weights[w][i * b.count + j] * row[j];
      }
    }
  }

 private:
  double scale_;  // s² / d
};

std::unique_ptr<Kernel> make(const KernelHyperparameters& hyperparameters, std::size_t dimension) {
  return std::make_unique<HistogramIntersectionKernel>(hyperparameters, dimension);
}

}  // namespace

extern const KernelFamily histogram_intersection_family{{"hik", nullptr}, Lengthscales::none, nullptr, &make};

}  // namespace gpstream::detail

// Stationary kernels: functions of the scaled squared distance
//   D(x, z) = Σ_l ((x_l − z_l) · scale_l)² = ‖x̃‖² + ‖z̃‖² − 2 x̃·z̃,   x̃ = x ⊙ scale,
// so a block K(A, B) is one GEMM (−2 Ã B̃ᵀ) plus one vectorised pass.
#include "engine/kernels/kernel_implementations.h"
#include "engine/kernels/vector_math.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpstream::detail {
namespace {

class StationaryKernel final : public Kernel {
 public:
  using RowProfile = void (*)(double*, std::size_t, double, const double*, double);

  StationaryKernel(const KernelHyperparameters& hyperparameters, std::size_t dimension, std::vector<double> scale,
                   RowProfile profile)
      : Kernel(hyperparameters, dimension), scale_(std::move(scale)), profile_(profile) {}

  void prepare(const double* rows, std::size_t count, PreparedRows& out) const override {
    const std::size_t d = dimension();
    out.count = count;
    out.values.resize(count * d);
    out.squared_norms.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      double norm = 0.0;
      for (std::size_t l = 0; l < d; ++l) {
        const double scaled = rows[i * d + l] * scale_[l];
        out.values[i * d + l] = scaled;
        norm += scaled * scaled;
      }
      out.squared_norms[i] = norm;
    }
  }

  using Kernel::evaluate;
  void evaluate(const PreparedView& a, const PreparedView& b, double* block) const override {
    if (a.count == 0 || b.count == 0) return;
    const int d = static_cast<int>(dimension());
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(a.count), static_cast<int>(b.count), d, -2.0,
                a.values, d, b.values, d, 0.0, block, static_cast<int>(b.count));
    const double signal = hyperparameters().signal_variance;
    for (std::size_t i = 0; i < a.count; ++i) {
      profile_(block + i * b.count, b.count, a.squared_norms[i], b.squared_norms, signal);
    }
  }

  // D = Σ_l (ã_l − b̃_l)² directly (no GEMM), l in increasing order, loops
  // over b's rows vectorised through a transposed copy of them.
  void evaluate_entrywise(const PreparedView& a, const PreparedView& b, double* block) const override {
    const std::size_t d = dimension(), count = b.count;
    if (a.count == 0 || count == 0) return;
    std::vector<double> transposed(d * count);
    for (std::size_t j = 0; j < count; ++j) {
      for (std::size_t l = 0; l < d; ++l) transposed[l * count + j] = b.values[j * d + l];
    }
    const std::vector<double> zeros(count, 0.0);  // the profile's norms: D is complete already
    std::vector<double> spare(count);
    const double signal = hyperparameters().signal_variance;
    // Two rows of a and four coordinates per sweep over b (vectorised over
    // j), each entry's terms still added in the order l = 0, 1, …, d − 1.
    for (std::size_t i = 0; i < a.count; i += 2) {
      const bool pair = i + 1 < a.count;
      const double* x = a.values + i * d;
      const double* z = pair ? x + d : x;  // a lone last row is computed twice, once into `spare`
      double* __restrict row = block + i * count;
      double* __restrict next = pair ? row + count : spare.data();
      std::fill(row, row + count, 0.0);
      std::fill(next, next + count, 0.0);
      std::size_t l = 0;
      for (; l + 4 <= d; l += 4) {
        const double *t0 = transposed.data() + l * count, *t1 = t0 + count, *t2 = t1 + count, *t3 = t2 + count;
        for (std::size_t j = 0; j < count; ++j) {
          const double e0 = t0[j] - x[l], e1 = t1[j] - x[l + 1], e2 = t2[j] - x[l + 2], e3 = t3[j] - x[l + 3];
          const double f0 = t0[j] - z[l], f1 = t1[j] - z[l + 1], f2 = t2[j] - z[l + 2], f3 = t3[j] - z[l + 3];
          double sum = row[j], other = next[j];
          sum += e0 * e0;
          other += f0 * f0;
          sum += e1 * e1;
          other += f1 * f1;
          sum += e2 * e2;
          other += f2 * f2;
          sum += e3 * e3;
          other += f3 * f3;
          row[j] = sum;
          next[j] = other;
        }
      }
      for (; l < d; ++l) {
        const double* t = transposed.data() + l * count;
        for (std::size_t j = 0; j < count; ++j) {
          const double e = t[j] - x[l], f = t[j] - z[l];
          row[j] += e * e;
          next[j] += f * f;
        }
      }
      profile_(row, count, 0.0, zeros.data(), signal);
      if (pair) profile_(next, count, 0.0, zeros.data(), signal);
    }
  }

  double self_covariance(const double*) const override { return hyperparameters().signal_variance; }
  std::optional<double> constant_self_covariance() const override { return hyperparameters().signal_variance; }

 protected:
  // With D_l = (x̃_l − z̃_l)² ∝ ℓ_l⁻², ∂D_l/∂log ℓ_l = −2 D_l, so
  // ∂k/∂log ℓ_l = h(D) D_l with h = −2 dk/dD: 2k for the squared exponential,
  // s² (5/3)(1 + √5 r) e^{−√5 r} for Matérn 5/2, k / r for the exponential
  // (whose D_l / r → 0 at r = 0); and ∂k/∂log s² = k.
  void add_parameter_gradient_rows(const PreparedView& a, const PreparedView& b, const double* weights,
                                   double* gradient) const override {
    const std::size_t d = dimension();
    const bool ard = hyperparameters().lengthscales.size() > 1;
    const std::size_t signal_index = hyperparameters().lengthscales.size();
    const double signal = hyperparameters().signal_variance;
    const KernelType type = hyperparameters().type;
    const double sqrt5 = std::sqrt(5.0);
    std::vector<double> differences(d);
    for (std::size_t i = 0; i < a.count; ++i) {
      const double* x = a.values + i * d;
      for (std::size_t j = 0; j < b.count; ++j) {
        const double weight = weights[i * b.count + j];
        if (weight == 0.0) continue;
        const double* z = b.values + j * d;
        double distance = 0.0;
        for (std::size_t l = 0; l < d; ++l) {
          differences[l] = (x[l] - z[l]) * (x[l] - z[l]);
          distance += differences[l];
        }
        double k = 0.0, h = 0.0;
        if (type == KernelType::matern52) {
          const double scaled = sqrt5 * std::sqrt(distance), decay = std::exp(-scaled);
          k = signal * (1.0 + scaled + (5.0 / 3.0) * distance) * decay;
          h = signal * (5.0 / 3.0) * (1.0 + scaled) * decay;
        } else if (type == KernelType::exponential) {
          const double r = std::sqrt(distance);
          k = signal * std::exp(-r);
          h = r > 0.0 ? k / r : 0.0;
        } else {
          k = signal * std::exp(-distance);
          h = 2.0 * k;
        }
        gradient[signal_index] += weight * k;
        if (ard) {
          for (std::size_t l = 0; l < d; ++l) gradient[l] += weight * h * differences[l];
        } else {
          gradient[0] += weight * h * distance;
        }
      }
    }
  }

 private:
  std::vector<double> scale_;
  RowProfile profile_;
};

}  // namespace

std::unique_ptr<Kernel> make_stationary_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension) {
  const std::size_t given = hyperparameters.lengthscales.size();
  const bool squared_exponential = hyperparameters.type == KernelType::squared_exponential_ard ||
                                   hyperparameters.type == KernelType::squared_exponential;
  std::vector<double> scale(dimension);
  for (std::size_t l = 0; l < dimension; ++l) {
    const double lengthscale = hyperparameters.lengthscales[given == 1 ? 0 : l];
    // SE: D = Σ γ_l (x_l − z_l)² with γ = 1/(2ℓ²), so scale = √γ; Matérn: D = r², scale = 1/ℓ.
    scale[l] = squared_exponential ? std::sqrt(gamma_from_lengthscale(lengthscale)) : 1.0 / lengthscale;
  }
  StationaryKernel::RowProfile profile = &vector_math::squared_exponential_row;
  if (hyperparameters.type == KernelType::matern52) profile = &vector_math::matern52_row;
  if (hyperparameters.type == KernelType::exponential) profile = &vector_math::exponential_row;
  return std::make_unique<StationaryKernel>(hyperparameters, dimension, std::move(scale), profile);
}

}  // namespace gpstream::detail

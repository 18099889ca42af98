// Stationary kernels: functions of the scaled squared distance
//   D(x, z) = Σ_l ((x_l − z_l) · scale_l)² = ‖x̃‖² + ‖z̃‖² − 2 x̃·z̃,   x̃ = x ⊙ scale,
// so a block K(A, B) is one GEMM (−2 Ã B̃ᵀ) plus one vectorised pass.
#include "engine/core/error.h"
#include "engine/kernels/kernel.h"
#include "engine/kernels/vector_math.h"

#include <cblas.h>

#include <cmath>

namespace gpstream {
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

  double self_covariance(const double*) const override { return hyperparameters().signal_variance; }
  std::optional<double> constant_self_covariance() const override { return hyperparameters().signal_variance; }

 private:
  std::vector<double> scale_;
  RowProfile profile_;
};

void check_positive(double value, const char* what) {
  GPSTREAM_CHECK(std::isfinite(value) && value > 0.0, "the {} must be a positive finite number, not {}", what, value);
}

}  // namespace

std::string kernel_type_name(KernelType type) {
  switch (type) {
    case KernelType::squared_exponential_ard: return "se-ard";
    case KernelType::squared_exponential: return "se";
    case KernelType::matern52: return "matern52";
  }
  return "unknown";
}

KernelType parse_kernel_type(const std::string& name) {
  for (const KernelType type : {KernelType::squared_exponential_ard, KernelType::squared_exponential, KernelType::matern52}) {
    if (name == kernel_type_name(type)) return type;
  }
  GPSTREAM_THROW("unknown kernel \"{}\" (choose se-ard, se or matern52)", name);
}

double gamma_from_lengthscale(double lengthscale) { return 1.0 / (2.0 * lengthscale * lengthscale); }
double lengthscale_from_gamma(double gamma) { return std::sqrt(1.0 / (2.0 * gamma)); }

std::unique_ptr<Kernel> make_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension) {
  GPSTREAM_CHECK(dimension > 0, "a kernel needs at least one input dimension");
  check_positive(hyperparameters.signal_variance, "signal variance");
  check_positive(hyperparameters.noise_variance, "noise variance");
  for (const double lengthscale : hyperparameters.lengthscales) check_positive(lengthscale, "lengthscale");
  const std::size_t given = hyperparameters.lengthscales.size();
  if (hyperparameters.type == KernelType::squared_exponential_ard) {
    GPSTREAM_CHECK(given == dimension, "the {} kernel needs {} lengthscales (one per input), but {} were given",
                   kernel_type_name(hyperparameters.type), dimension, given);
  } else if (hyperparameters.type == KernelType::matern52) {
    GPSTREAM_CHECK(given == dimension || given == 1,
                   "the matern52 kernel needs {} lengthscales (one per input) or one for all, but {} were given", dimension,
                   given);
  } else {
    GPSTREAM_CHECK(given == 1, "the se kernel takes one lengthscale for all inputs, but {} were given", given);
  }

  std::vector<double> scale(dimension);
  for (std::size_t l = 0; l < dimension; ++l) {
    const double lengthscale = hyperparameters.lengthscales[given == 1 ? 0 : l];
    // SE: D = Σ γ_l (x_l − z_l)² with γ = 1/(2ℓ²), so scale = √γ; Matérn: D = r², scale = 1/ℓ.
    scale[l] = hyperparameters.type == KernelType::matern52 ? 1.0 / lengthscale
                                                            : std::sqrt(gamma_from_lengthscale(lengthscale));
  }
  const auto profile = hyperparameters.type == KernelType::matern52 ? &vector_math::matern52_row
                                                                    : &vector_math::squared_exponential_row;
  return std::make_unique<StationaryKernel>(hyperparameters, dimension, std::move(scale), profile);
}

}  // namespace gpstream

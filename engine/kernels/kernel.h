// Kernel: the covariance function k(x, z) of the GP, and the noise σ² that
// turns K into K̄ = K + σ²I.
//
// Every kernel here is evaluated in blocks: prepare() turns a set of rows
// into whatever form makes evaluation cheap (scaled copies and squared norms
// for stationary kernels), and evaluate() fills a dense block K(A, B) — with
// one GEMM for the cross terms and one vectorised pass, never a scalar
// double loop over pairs. Implementations are stateless after construction
// and safe to call from many threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpstream {

enum class KernelType {
  squared_exponential_ard,  // k = s² exp(−Σ_l γ_l (x_l − z_l)²), γ_l = 1 / (2 ℓ_l²)  (GBCD paper §3)
  squared_exponential,      // the same with one lengthscale for every input
  matern52,                 // k = s² (1 + √5 r + 5r²/3) exp(−√5 r), r² = Σ_l (x_l − z_l)² / ℓ_l²
};

std::string kernel_type_name(KernelType type);
// Parses "se-ard", "se", "matern52"; throws naming the valid choices.
KernelType parse_kernel_type(const std::string& name);

struct KernelHyperparameters {
  KernelType type = KernelType::squared_exponential_ard;
  std::vector<double> lengthscales;  // d values for ARD kernels; one for isotropic ones
  double signal_variance = 1.0;      // s²
  double noise_variance = 0.1;       // σ²
};

// γ_l = 1 / (2 ℓ_l²) and back: the GBCD paper writes the SE kernel with γ.
double gamma_from_lengthscale(double lengthscale);
double lengthscale_from_gamma(double gamma);

// A run of prepared rows, as evaluate() reads them (a view: owns nothing).
struct PreparedView {
  const double* values = nullptr;         // count×d, row-major
  const double* squared_norms = nullptr;  // count
  std::size_t count = 0;
};

// Rows of a block in the form a kernel evaluates fastest.
struct PreparedRows {
  std::vector<double> values;         // count×d, row-major (scaled for stationary kernels)
  std::vector<double> squared_norms;  // count
  std::size_t count = 0;

  // Rows [first, first + rows) as a view, for a d-input kernel.
  PreparedView view(std::size_t d, std::size_t first = 0, std::size_t rows = static_cast<std::size_t>(-1)) const {
    const std::size_t n = rows == static_cast<std::size_t>(-1) ? count - first : rows;
    return {values.data() + first * d, squared_norms.data() + first, n};
  }
};

class Kernel {
 public:
  virtual ~Kernel() = default;

  const KernelHyperparameters& hyperparameters() const { return hyperparameters_; }
  std::size_t dimension() const { return dimension_; }
  double noise_variance() const { return hyperparameters_.noise_variance; }
  std::string name() const { return kernel_type_name(hyperparameters_.type); }

  // Overwrites `out` with `count` rows (count×d, row-major) prepared for
  // evaluate(). Rows are prepared independently of each other, so prepared
  // rows may be copied, sliced and appended to one another.
  virtual void prepare(const double* rows, std::size_t count, PreparedRows& out) const = 0;
  // block[i * b.count + j] = k(a_i, b_j), without noise.
  virtual void evaluate(const PreparedView& a, const PreparedView& b, double* block) const = 0;
  void evaluate(const PreparedRows& a, const PreparedRows& b, double* block) const {
    evaluate(a.view(dimension_), b.view(dimension_), block);
  }
  // k(x, x) for one row, without noise.
  virtual double self_covariance(const double* x) const = 0;
  // k(x, x) when it is the same for every x (stationary kernels): diag(K̄) then needs no data pass.
  virtual std::optional<double> constant_self_covariance() const { return std::nullopt; }

 protected:
  Kernel(KernelHyperparameters hyperparameters, std::size_t dimension)
      : hyperparameters_(std::move(hyperparameters)), dimension_(dimension) {}

 private:
  KernelHyperparameters hyperparameters_;
  std::size_t dimension_;
};

// Validates the hyperparameters against the input dimension d (positive and
// finite values, one lengthscale per input for ARD or exactly one for
// isotropic kernels) and builds the kernel. Throws a clear Error otherwise.
std::unique_ptr<Kernel> make_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension);

}  // namespace gpstream

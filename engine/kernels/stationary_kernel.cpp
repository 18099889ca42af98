// Stationary kernels: functions of the scaled squared distance
//   D(x, z) = Σ_l ((x_l − z_l) · scale_l)² = ‖x̃‖² + ‖z̃‖² − 2 x̃·z̃,   x̃ = x ⊙ scale,
// so a block K(A, B) is one GEMM (−2 Ã B̃ᵀ) plus one vectorised pass.
//
// The expansion cancels where the norms are large against D: its rounding
// error is at most (2d + 4)·u·(‖x̃‖² + ‖z̃‖²) [Higham02 §3.1: a dot product of
// d terms, two norms, two additions]. Inputs far from the origin against the
// lengthscale (raw coordinates, time stamps) or lengthscales of 1e-6 and
// below made K̂ another matrix: a diagonal of e^{−35}·s² instead of s², and a
// convergence claimed for it. An entry whose bound exceeds
// kExpansionDistanceError is computed from the differences instead — decided
// by the pair's own norms, so an entry has the same bits in every block it
// is computed in. Standardised inputs at the lengthscales data give never
// take that path (kin40k, bcef, sgemm: norms 1e3–1e4 below the limit).
#include "engine/core/error.h"
#include "engine/core/vector_width.h"
#include "engine/kernels/kernel_implementations.h"
#include "engine/kernels/vector_math.h"

#include <cblas.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace gpstream::detail {
namespace {

// The largest error in D an entry may carry from the expansion (D is in
// squared lengthscales: k changes by at most |dk/dD| times this, 1e-8·s² for
// the squared exponential).
constexpr double kExpansionDistanceError = 1e-8;

class StationaryKernel final : public Kernel {
 public:
  StationaryKernel(const KernelHyperparameters& hyperparameters, std::size_t dimension, std::vector<double> scale,
                   const StationaryProfile& family)
      : Kernel(hyperparameters, dimension), scale_(std::move(scale)), family_(family), profile_(family.row) {}

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
      GPSTREAM_CHECK(
          std::isfinite(norm),
          "the inputs of a row divided by the lengthscales ({}) overflow a double: give longer lengthscales, "
          "or standardise the inputs",
          fmt::join(hyperparameters().lengthscales, ", "));
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
      profile_(block + i * b.count, b.count, a.squared_norms[i], b.squared_norms, signal, own_parameters());
    }
    from_differences_where_cancelled(profile_, a, b, block);
  }
  void evaluate_entrywise(const PreparedView& a, const PreparedView& b, double* block) const override {
    entrywise_with(profile_, a, b, block);
  }
  // Entrywise as well, so that the profile runs on cross terms still in L1:
  // at small d a GEMM block costs more than its FMAs (docs/benchmarks.md, "Tuning constants and their
  // figures").
  void evaluate_rounded(const PreparedView& a, const PreparedView& b, double* block) const override {
    entrywise_with(family_.rounded_row, a, b, block);
  }

  // D from the differences, Σ_l (ã_l − b̃_l)², in the order l = 0, 1, …: no
  // cancellation to guard against (the expansion's rounding in float would
  // be ~1e-7 of the norms), one subtraction and one FMA a term, at twice
  // the lanes of double. Blocked and padded as entrywise_with.
  void evaluate_single(const PreparedView& a, const PreparedView& b, float* block) const override {
    constexpr std::size_t kLanes = 2 * kVectorDoubles, kRows = kAccumulatedDoubles / kVectorDoubles;
    using Lanes = float __attribute__((vector_size(kLanes * sizeof(float))));
    const std::size_t d = dimension(), count = b.count;
    if (a.count == 0 || count == 0) return;
    const std::size_t padded = (count + kLanes - 1) / kLanes * kLanes;
    std::vector<float> panels(d * padded, 0.0f), rows(kRows * d), values(kRows * padded);
    for (std::size_t j = 0; j < count; ++j) {
      float* panel = panels.data() + (j / kLanes) * d * kLanes + j % kLanes;
      for (std::size_t l = 0; l < d; ++l) panel[l * kLanes] = static_cast<float>(b.values[j * d + l]);
    }
    const double signal = hyperparameters().signal_variance;
    for (std::size_t first = 0; first < a.count; first += kRows) {
      for (std::size_t r = 0; r < kRows; ++r) {
        const double* x = a.values + std::min(first + r, a.count - 1) * d;
        for (std::size_t l = 0; l < d; ++l) rows[r * d + l] = static_cast<float>(x[l]);
      }
      for (std::size_t j = 0; j < padded; j += kLanes) {
        Lanes sum[kRows] = {};
        for (std::size_t l = 0; l < d; ++l) {
          Lanes t;
          std::memcpy(&t, panels.data() + (j * d + l * kLanes), sizeof t);
          for (std::size_t r = 0; r < kRows; ++r) {
            const Lanes difference = t - rows[r * d + l];
            sum[r] += difference * difference;
          }
        }
        for (std::size_t r = 0; r < kRows; ++r) std::memcpy(values.data() + r * padded + j, &sum[r], sizeof sum[r]);
      }
      for (std::size_t r = 0; r < kRows && first + r < a.count; ++r) {
        float* row = values.data() + r * padded;
        family_.single_row(row, padded, signal, own_parameters());
        std::copy_n(row, count, block + (first + r) * count);
      }
    }
  }

  double self_covariance(const double*) const override { return hyperparameters().signal_variance; }
  std::optional<double> constant_self_covariance() const override { return hyperparameters().signal_variance; }

 protected:
  // With D_l = (x̃_l − z̃_l)² ∝ ℓ_l⁻², ∂D_l/∂log ℓ_l = −2 D_l, so
  // ∂k/∂log ℓ_l = h(D) D_l with h = −2 dk/dD (the family's slope), ∂k/∂log s² = k, and the family's own
  // parameters' ∂k/∂log θ_f from its parameter_slopes.
  // Row by row of a: the squared differences against b (coordinate-major),
  // D, k and h once, then every weight row.
  void add_parameter_gradient_rows(const PreparedView& a, const PreparedView& b, std::span<const double* const> weights,
                                   double* gradients) const override {
    const std::size_t d = dimension(), count = b.count, parameters = parameter_count(), rows = weights.size();
    if (a.count == 0 || count == 0 || rows == 0) return;
    const bool ard = hyperparameters().lengthscales.size() > 1;
    const std::size_t signal_index = this->signal_index(), own = hyperparameters().family_parameters.size();
    const double signal = hyperparameters().signal_variance;
    std::vector<double> columns(d * count), distance(count), value(count), slope(count), zeros(count, 0.0);
    std::vector<double> weighted(rows * count), lengthscale_part(rows * d), own_slopes(own * count);
    for (std::size_t j = 0; j < count; ++j)
      for (std::size_t l = 0; l < d; ++l) columns[l * count + j] = b.values[j * d + l];
    for (std::size_t i = 0; i < a.count; ++i) {
      const double* x = a.values + i * d;
      vector_math::squared_distances(x, columns.data(), d, count, distance.data());
      // The family's row pass from D itself: cross terms D with zero norms.
      std::copy(distance.begin(), distance.end(), value.begin());
      profile_(value.data(), count, 0.0, zeros.data(), signal, own_parameters());
      family_.slope(value.data(), distance.data(), slope.data(), count, own_parameters());
      if (own > 0) family_.parameter_slopes(value.data(), distance.data(), own_slopes.data(), count, own_parameters());
      for (std::size_t w = 0; w < rows; ++w) {
        const double* weight = weights[w] + i * count;
        gradients[w * parameters + signal_index] += vector_math::dot(weight, value.data(), count);
        for (std::size_t f = 0; f < own; ++f)
          gradients[w * parameters + signal_index + 1 + f] += vector_math::dot(weight, &own_slopes[f * count], count);
        double* out = weighted.data() + w * count;
        for (std::size_t j = 0; j < count; ++j) out[j] = weight[j] * slope[j];
        if (!ard) gradients[w * parameters] += vector_math::dot(out, distance.data(), count);
      }
      if (!ard) continue;
      std::fill(lengthscale_part.begin(), lengthscale_part.end(), 0.0);
      vector_math::add_weighted_squared_differences(x, columns.data(), d, count, weighted.data(), rows,
                                                    lengthscale_part.data());
      for (std::size_t w = 0; w < rows; ++w)
        for (std::size_t l = 0; l < d; ++l) gradients[w * parameters + l] += lengthscale_part[w * d + l];
    }
  }

 private:
  // K(a, b) by the same expansion as evaluate(), −2 ã·b̃ + ‖ã‖² + ‖b̃‖², with each dot
  // product summed by one accumulator in the order l = 0, 1, …, d − 1
  // (GEMM's order depends on the block's shape), one FMA per term as in a
  // GEMM: at d = 256 this runs at GEMM's speed, where summing (ã_l − b̃_l)²
  // took 1.7× as long (a subtraction and an FMA per term). Blocks of 4 rows
  // of a × 8 of b live in registers; b is packed in panels, padded to whole
  // blocks, and a lone row is computed again in the block of the last rows,
  // so that every entry goes through the same instructions wherever it is.
  void entrywise_with(decltype(StationaryProfile::row) row, const PreparedView& a, const PreparedView& b,
                      double* block) const {
    // GCC's vector extension, one register of the target wide (core/vector_width.h): 4 rows × 8 lanes with
    // AVX-512 (the native build here), 8 rows × 4 lanes with AVX2.
    constexpr std::size_t kLanes = kVectorDoubles, kRows = kAccumulatedDoubles / kVectorDoubles;
    using Lanes = double __attribute__((vector_size(kLanes * sizeof(double))));
    const std::size_t d = dimension(), count = b.count;
    if (a.count == 0 || count == 0) return;
    const std::size_t padded = (count + kLanes - 1) / kLanes * kLanes;
    // b in panels of kLanes rows, each panel d × kLanes (coordinate-major),
    // so that the loop over l reads one panel sequentially.
    std::vector<double> panels(d * padded, 0.0), norms(padded, 0.0);
    for (std::size_t j = 0; j < count; ++j) {
      double* panel = panels.data() + (j / kLanes) * d * kLanes + j % kLanes;
      for (std::size_t l = 0; l < d; ++l) panel[l * kLanes] = b.values[j * d + l];
      norms[j] = b.squared_norms[j];
    }
    std::vector<double> cross(kRows * padded);  // −2 ã_i·b̃ for a block of rows
    const double signal = hyperparameters().signal_variance;
    for (std::size_t first = 0; first < a.count; first += kRows) {
      const double* x[kRows];
      for (std::size_t r = 0; r < kRows; ++r) x[r] = a.values + std::min(first + r, a.count - 1) * d;
      for (std::size_t j = 0; j < padded; j += kLanes) {
        Lanes sum[kRows] = {};
        for (std::size_t l = 0; l < d; ++l) {
          Lanes t;
          std::memcpy(&t, panels.data() + (j * d + l * kLanes), sizeof t);
          for (std::size_t r = 0; r < kRows; ++r) sum[r] += t * x[r][l];
        }
        for (std::size_t r = 0; r < kRows; ++r) {
          const Lanes scaled = -2.0 * sum[r];
          std::memcpy(cross.data() + r * padded + j, &scaled, sizeof scaled);
        }
      }
      for (std::size_t r = 0; r < kRows && first + r < a.count; ++r) {
        double* values = cross.data() + r * padded;
        row(values, padded, a.squared_norms[first + r], norms.data(), signal, own_parameters());
        std::copy_n(values, count, block + (first + r) * count);
      }
    }
    from_differences_where_cancelled(row, a, b, block);
  }

  // The entries whose expansion may have lost more than kExpansionDistanceError of D (see the top of the
  // file), computed again from Σ_l (ã_l − b̃_l)²: one comparison per row of a where none does. A row that has
  // some gets all its D from the differences in one vectorised pass, padded to whole vectors as
  // entrywise_with's rows are (an entry then takes the same instructions wherever it is), and keeps them for
  // those entries alone.
  void from_differences_where_cancelled(decltype(StationaryProfile::row) row, const PreparedView& a,
                                        const PreparedView& b, double* block) const {
    constexpr std::size_t kLanes = 8;
    const std::size_t d = dimension(), count = b.count;
    const double largest = *std::max_element(b.squared_norms, b.squared_norms + count);
    const double signal = hyperparameters().signal_variance;
    const std::size_t padded = (count + kLanes - 1) / kLanes * kLanes;
    std::vector<double> columns, distance, zeros;  // b coordinate-major, made at the first such row
    for (std::size_t i = 0; i < a.count; ++i) {
      if (a.squared_norms[i] + largest <= norm_limit_) continue;
      if (columns.empty()) {
        columns.assign(d * padded, 0.0);
        for (std::size_t j = 0; j < count; ++j)
          for (std::size_t l = 0; l < d; ++l) columns[l * padded + j] = b.values[j * d + l];
        distance.resize(padded);
        zeros.assign(padded, 0.0);
      }
      vector_math::squared_distances(a.values + i * d, columns.data(), d, padded, distance.data());
      row(distance.data(), padded, 0.0, zeros.data(), signal,
          own_parameters());  // the family's pass from D itself: zero norms
      for (std::size_t j = 0; j < count; ++j) {
        if (a.squared_norms[i] + b.squared_norms[j] > norm_limit_) block[i * count + j] = distance[j];
      }
    }
  }

  const double* own_parameters() const { return hyperparameters().family_parameters.data(); }

  std::vector<double> scale_;
  // ‖ã‖² + ‖b̃‖² above which the expansion's bound exceeds kExpansionDistanceError.
  double norm_limit_ = kExpansionDistanceError /
                       ((2.0 * static_cast<double>(dimension()) + 4.0) * std::numeric_limits<double>::epsilon() / 2);
  const StationaryProfile& family_;
  decltype(StationaryProfile::row) profile_;
};

}  // namespace

std::unique_ptr<Kernel> make_stationary_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension,
                                               const StationaryProfile& profile) {
  const std::size_t given = hyperparameters.lengthscales.size();
  std::vector<double> scale(dimension);
  for (std::size_t l = 0; l < dimension; ++l) {
    const double lengthscale = hyperparameters.lengthscales[given == 1 ? 0 : l];
    // The squared exponential: D = Σ γ_l (x_l − z_l)² with γ = 1/(2ℓ²), so scale = √γ; Matérn: D = r², scale = 1/ℓ.
    scale[l] = profile.gamma_scaling ? std::sqrt(gamma_from_lengthscale(lengthscale)) : 1.0 / lengthscale;
  }
  return std::make_unique<StationaryKernel>(hyperparameters, dimension, std::move(scale), profile);
}

}  // namespace gpstream::detail

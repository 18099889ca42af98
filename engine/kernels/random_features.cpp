#include "engine/kernels/random_features.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/kernels/vector_math.h"

#include <cblas.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <numbers>
#include <random>

namespace gpstream {

RandomFeatureSample::RandomFeatureSample(const KernelHyperparameters& shape, std::size_t d, std::size_t features,
                                         std::uint64_t seed)
    : d_(d), features_(features) {
  GPSTREAM_CHECK(features > 0 && d > 0, "a random-feature sample needs features and inputs");
  for (std::size_t t = 0; t < shape.term_count(); ++t) {
    const KernelType type = shape.term(t).type;
    const double smoothness = spectral_smoothness(type);
    GPSTREAM_CHECK_ARGUMENT(!std::isnan(smoothness),
                            "random features sample the Matérn class and the squared exponential, not the {} kernel: "
                            "use Hutchinson's probes",
                            kernel_type_name(type));
    std::seed_seq seeds{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                        static_cast<std::uint32_t>(t)};
    std::mt19937_64 random(seeds);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> angle(0.0, 2.0 * std::numbers::pi);
    Term term;
    term.directions.resize(checked_multiply(features, d));
    term.phases.resize(features);
    term.weights.resize(features);
    for (std::size_t f = 0; f < features; ++f) {
      double scale = 1.0;
      if (std::isfinite(smoothness)) {
        // u ~ χ² with 2ν degrees of freedom (2ν = 1, 3, 5): a sum of squared normals.
        const int degrees = static_cast<int>(std::lround(2.0 * smoothness));
        double u = 0.0;
        for (int k = 0; k < degrees; ++k) u += std::pow(normal(random), 2);
        scale = std::sqrt(2.0 * smoothness / u);
      }
      for (std::size_t l = 0; l < d; ++l) term.directions[f * d + l] = scale * normal(random);
      term.phases[f] = angle(random);
      term.weights[f] = normal(random);
    }
    terms_.push_back(std::move(term));
  }
}

void RandomFeatureSample::evaluate(const KernelHyperparameters& kernel, const double* x, std::size_t count,
                                   double* out) const {
  GPSTREAM_CHECK(kernel.term_count() == terms_.size(), "a random-feature sample of {} terms for a kernel of {}",
                 terms_.size(), kernel.term_count());
  std::fill(out, out + count, 0.0);
  const std::size_t d = d_, features = features_;
  for (std::size_t t = 0; t < terms_.size(); ++t) {
    const std::vector<double>& lengthscales = kernel.term(t).lengthscales;
    const double signal = kernel.term(t).signal_variance;
    GPSTREAM_CHECK(lengthscales.size() == d || lengthscales.size() == 1, "{} lengthscales for {} inputs",
                   lengthscales.size(), d);
    // Ω = directions ⊘ ℓ (per input), and the amplitude s √(2/F).
    std::vector<double> frequencies(terms_[t].directions);
    for (std::size_t f = 0; f < features; ++f)
      for (std::size_t l = 0; l < d; ++l) frequencies[f * d + l] /= lengthscales[lengthscales.size() == 1 ? 0 : l];
    const double amplitude = std::sqrt(2.0 * signal / static_cast<double>(features));
    constexpr std::size_t kTileRows = 256;
    const std::size_t tiles = (count + kTileRows - 1) / kTileRows;
    tbb::parallel_for(std::size_t{0}, tiles, [&](std::size_t tile) {
      const std::size_t first = tile * kTileRows, rows = std::min(kTileRows, count - first);
      // The phases X Ωᵀ + b of the tile's rows, then Σ_f w_f cos(·) per row.
      std::vector<double> phases(rows * features);
      for (std::size_t i = 0; i < rows; ++i)
        std::copy(terms_[t].phases.begin(), terms_[t].phases.end(),
                  phases.begin() + static_cast<std::ptrdiff_t>(i * features));
      cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(features),
                  static_cast<int>(d), 1.0, x + first * d, static_cast<int>(d), frequencies.data(), static_cast<int>(d),
                  1.0, phases.data(), static_cast<int>(features));
      for (std::size_t i = 0; i < rows; ++i)
        out[first + i] +=
            amplitude * vector_math::cosine_sum(phases.data() + i * features, terms_[t].weights.data(), features);
    });
  }
}

}  // namespace gpstream

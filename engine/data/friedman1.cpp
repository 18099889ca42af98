#include "engine/data/friedman1.h"

#include "engine/core/error.h"

#include <cmath>
#include <numbers>

namespace gpstream {

Friedman1Generator::Friedman1Generator(std::uint64_t seed, double noise_std) : engine_(seed), noise_std_(noise_std) {
  GPSTREAM_CHECK(noise_std >= 0.0 && std::isfinite(noise_std),
                 "the noise standard deviation must be finite and >= 0, not {}", noise_std);
}

double Friedman1Generator::target(const double* x) {
  const double centred = x[2] - 0.5;
  return 10.0 * std::sin(std::numbers::pi * x[0] * x[1]) + 20.0 * centred * centred + 10.0 * x[3] + 5.0 * x[4];
}

void Friedman1Generator::generate(std::size_t rows, double* x, double* y) {
  for (std::size_t i = 0; i < rows; ++i) {
    double* row = x + i * kColumns;
    for (std::size_t j = 0; j < kColumns; ++j) row[j] = uniform_(engine_);
    // Draw the noise even when it is scaled to zero, so a noise-free set has
    // the same inputs as a noisy one with the same seed.
    const double noise = normal_(engine_);
    y[i] = target(row) + noise_std_ * noise;
  }
}

}  // namespace gpstream

// Friedman's first synthetic regression problem (Friedman 1991), the
// 100,000-row dataset of the GBCD paper (Bo & Sminchisescu 2008, §4):
//   x ~ U[0,1]^10,
//   y = 10 sin(π x1 x2) + 20 (x3 − 0.5)² + 10 x4 + 5 x5 + ε,  ε ~ N(0, noise²).
// Only x1..x5 matter; x6..x10 are distractors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace gpstream {

class Friedman1Generator {
 public:
  static constexpr std::size_t kColumns = 10;

  // noise_std = 1 for training sets as in the paper, 0 for noise-free test sets.
  Friedman1Generator(std::uint64_t seed, double noise_std);

  // Writes the next `rows` rows: x is rows×10 row-major, y has `rows` values.
  // The sequence depends only on the seed, not on how it is cut into calls.
  void generate(std::size_t rows, double* x, double* y);

  // The noise-free target for one row of 10 inputs.
  static double target(const double* x);

 private:
  std::mt19937_64 engine_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
  std::normal_distribution<double> normal_{0.0, 1.0};
  double noise_std_;
};

}  // namespace gpstream

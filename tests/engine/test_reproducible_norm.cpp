// The norm the dense solvers stop on: exact summation, the same bits in any order and on any number of threads.
#include "engine/core/communicator.h"
#include "engine/linalg/reproducible_norm.h"

#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace gpstream;

TEST_CASE("the reproducible norm adds the squares exactly, where a running sum loses them") {
  SingleProcess ranks;
  // 2⁶⁰ then 1024 ones: a running sum rounds each 1 away (the spacing of doubles at 2⁶⁰ is 256).
  std::vector<double> values = {std::ldexp(1.0, 30)};
  values.insert(values.end(), 1024, 1.0);
  double running = 0.0;
  for (const double value : values) running += value * value;
  CHECK(running == std::ldexp(1.0, 60));
  CHECK(reproducible_norm(values, ranks) == std::sqrt(std::ldexp(1.0, 60) + 1024.0));
  // Subnormal squares and zeros count; the empty vector's norm is 0.
  CHECK(reproducible_norm(std::vector<double>{3.0, 0.0, 4.0}, ranks) == 5.0);
  CHECK(reproducible_norm(std::vector<double>{}, ranks) == 0.0);
  const double tiny = std::ldexp(1.0, -530);  // its square, 2⁻¹⁰⁶⁰, is subnormal
  CHECK(reproducible_norm(std::vector<double>(4, tiny), ranks) == 2.0 * tiny);
  CHECK(std::isnan(reproducible_norm(std::vector<double>{1.0, std::nan("")}, ranks)));
  CHECK(std::isinf(reproducible_norm(std::vector<double>{1.0, 1e200}, ranks)));
}

TEST_CASE("the reproducible norm has the same bits in any order and with any number of threads") {
  std::mt19937_64 random(5);
  std::lognormal_distribution<double> spread(0.0, 8.0);  // magnitudes over ~15 decades
  std::vector<double> values(200000);
  for (double& value : values) value = (random() % 2 ? 1 : -1) * spread(random);
  SingleProcess ranks;
  const double reference = reproducible_norm(values, ranks);
  long double squares = 0.0L;
  for (const double value : values) squares += static_cast<long double>(value) * value;
  CHECK(reference == doctest::Approx(static_cast<double>(std::sqrt(squares))).epsilon(1e-15));
  for (int shuffle = 0; shuffle < 3; ++shuffle) {
    std::shuffle(values.begin(), values.end(), random);
    for (const int threads : {1, 2, 3}) {
      const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      CHECK(reproducible_norm(values, ranks) == reference);
    }
  }
}

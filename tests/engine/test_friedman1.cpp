#include "engine/core/error.h"
#include "engine/data/friedman1.h"

#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

using gpstream::Friedman1Generator;

TEST_CASE("Friedman1 rows depend only on the seed, not on how the calls are cut") {
  constexpr std::size_t kRows = 1000;
  std::vector<double> x_whole(kRows * 10), y_whole(kRows), x_parts(kRows * 10), y_parts(kRows);
  Friedman1Generator whole(42, 1.0);
  whole.generate(kRows, x_whole.data(), y_whole.data());
  Friedman1Generator parts(42, 1.0);
  parts.generate(1, x_parts.data(), y_parts.data());
  parts.generate(600, x_parts.data() + 10, y_parts.data() + 1);
  parts.generate(399, x_parts.data() + 6010, y_parts.data() + 601);
  CHECK(x_whole == x_parts);
  CHECK(y_whole == y_parts);

  std::vector<double> x_other(kRows * 10), y_other(kRows);
  Friedman1Generator other(43, 1.0);
  other.generate(kRows, x_other.data(), y_other.data());
  CHECK(x_other != x_whole);
}

TEST_CASE("Friedman1 targets follow the formula and noise-free sets share the inputs of noisy ones") {
  constexpr std::size_t kRows = 20000;
  std::vector<double> x(kRows * 10), y(kRows), x_clean(kRows * 10), y_clean(kRows);
  Friedman1Generator(5, 1.0).generate(kRows, x.data(), y.data());
  Friedman1Generator(5, 0.0).generate(kRows, x_clean.data(), y_clean.data());
  CHECK(x == x_clean);
  double sum_noise = 0, sum_squared_noise = 0;
  for (std::size_t i = 0; i < kRows; ++i) {
    const double* row = &x[i * 10];
    for (std::size_t j = 0; j < 10; ++j) REQUIRE((row[j] >= 0.0 && row[j] < 1.0));
    const double expected =
        10 * std::sin(std::numbers::pi * row[0] * row[1]) + 20 * std::pow(row[2] - 0.5, 2) + 10 * row[3] + 5 * row[4];
    CHECK(y_clean[i] == doctest::Approx(expected).epsilon(1e-14));
    const double noise = y[i] - y_clean[i];
    sum_noise += noise;
    sum_squared_noise += noise * noise;
  }
  // N(0, 1) noise: mean within 5 standard errors of 0, variance near 1.
  CHECK(std::abs(sum_noise / kRows) < 5.0 / std::sqrt(double(kRows)));
  CHECK(sum_squared_noise / kRows == doctest::Approx(1.0).epsilon(0.05));
}

TEST_CASE("Friedman1 refuses a negative noise level") { CHECK_THROWS_AS(Friedman1Generator(1, -1.0), gpstream::Error); }

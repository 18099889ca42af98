#include "engine/data/column_statistics.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

// Two-pass reference in extended precision: the mean first, then the mean
// squared deviation (a double two-pass sum is itself inexact at a 1e9 offset).
void two_pass(const std::vector<double>& values, std::size_t columns, std::vector<double>& mean,
              std::vector<double>& std) {
  const std::size_t rows = values.size() / columns;
  std::vector<long double> sum(columns, 0.0L), squares(columns, 0.0L);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < columns; ++j) sum[j] += values[i * columns + j];
  for (long double& m : sum) m /= static_cast<long double>(rows);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < columns; ++j) {
      const long double deviation = values[i * columns + j] - sum[j];
      squares[j] += deviation * deviation;
    }
  mean.assign(sum.begin(), sum.end());
  std.resize(columns);
  for (std::size_t j = 0; j < columns; ++j)
    std[j] = static_cast<double>(std::sqrt(squares[j] / static_cast<long double>(rows)));
}

}  // namespace

TEST_CASE("Welford statistics equal a two-pass computation, also far from zero") {
  constexpr std::size_t kColumns = 3;
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal;
  std::vector<double> values;
  for (int i = 0; i < 10000; ++i) {
    values.push_back(normal(random));
    values.push_back(1e9 + 1e-3 * normal(random));  // a large offset defeats the naive sum-of-squares formula
    values.push_back(-5.0 + 100.0 * normal(random));
  }
  gpstream::ColumnStatistics statistics(kColumns);
  for (std::size_t i = 0; i < values.size() / kColumns; ++i) statistics.add_row(&values[i * kColumns]);
  std::vector<double> mean, std;
  two_pass(values, kColumns, mean, std);
  const std::vector<double> welford_std = statistics.standard_deviation();
  CHECK(statistics.count() == 10000);
  for (std::size_t j = 0; j < kColumns; ++j) {
    CHECK(statistics.mean()[j] == doctest::Approx(mean[j]).epsilon(1e-13));
    // Column 1 has a condition number of ~1e12 (spread 1e-3 at 1e9): each value
    // carries only ~4 digits of its deviation, which averages to ~1e-6 over n.
    CHECK(welford_std[j] == doctest::Approx(std[j]).epsilon(j == 1 ? 1e-6 : 1e-12));
  }
}

TEST_CASE("statistics of a constant column have zero spread") {
  gpstream::ColumnStatistics statistics(1);
  const std::vector<double> row = {0.1};
  for (int i = 0; i < 1000; ++i) statistics.add_row(row.data());
  CHECK(statistics.mean()[0] == doctest::Approx(0.1).epsilon(1e-15));
  CHECK(statistics.standard_deviation()[0] < 1e-15);
}

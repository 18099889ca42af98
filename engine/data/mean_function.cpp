#include "engine/data/mean_function.h"

#include "engine/core/error.h"
#include "engine/data/partitioned_rows.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>

namespace gpstream {

void MeanFunction::basis(const double* x, double* basis) const {
  std::size_t k = 0;
  if (intercept) basis[k++] = 1.0;
  for (const std::size_t l : inputs) basis[k++] = x[l];
}

double MeanFunction::value(const double* x) const {
  if (coefficients.empty()) return 0.0;
  double sum = 0.0;
  std::size_t k = 0;
  if (intercept) sum += coefficients[k++];
  for (const std::size_t l : inputs) sum += coefficients[k++] * x[l];
  return sum;
}

std::string MeanFunction::describe(const std::vector<std::string>& feature_names) const {
  if (empty()) return "none";
  if (inputs.empty()) return "constant";
  std::vector<std::string> names;
  for (const std::size_t l : inputs)
    names.push_back(l < feature_names.size() ? feature_names[l] : fmt::format("{}", l + 1));
  return fmt::format("linear in {}", fmt::join(names, ", "));
}

void MeanFunction::validate(std::size_t d, const std::string& source) const {
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    GPSTREAM_CHECK(inputs[k] < d, "{}: the mean function uses input {} of {}", source, inputs[k] + 1, d);
    for (std::size_t j = 0; j < k; ++j) {
      GPSTREAM_CHECK(inputs[j] != inputs[k], "{}: the mean function lists input {} twice", source, inputs[k] + 1);
    }
  }
  GPSTREAM_CHECK(coefficients.empty() || coefficients.size() == basis_size(),
                 "{}: the mean function has {} coefficients for {} basis functions", source, coefficients.size(),
                 basis_size());
  for (const double beta : coefficients) {
    GPSTREAM_CHECK(std::isfinite(beta), "{}: a mean coefficient is not finite ({})", source, beta);
  }
}

namespace {

// HᵀH (p×p, row-major) followed by Hᵀy (p), over blocks of global rows in order.
std::vector<double> normal_equations(Communicator& ranks, RowSource& rows, const RowPartition& partition,
                                     const MeanFunction& basis) {
  const std::size_t p = basis.basis_size(), d = rows.columns(), n = partition.global_rows;
  std::vector<double> sums(p * p + p, 0.0);
  constexpr std::size_t kBlockRows = 4096;
  std::vector<double> x(kBlockRows * d), y(kBlockRows), h(p);
  std::vector<std::size_t> indices;
  for (std::size_t first = 0; first < n; first += kBlockRows) {
    const std::size_t count = std::min(kBlockRows, n - first);
    if (ranks.size() == 1) {
      rows.read_rows(first, count, x.data(), y.data());
    } else {
      indices.resize(count);
      for (std::size_t i = 0; i < count; ++i) indices[i] = first + i;
      collect_partitioned_rows(ranks, rows, partition, indices, x, nullptr, &y);
    }
    for (std::size_t i = 0; i < count; ++i) {
      basis.basis(x.data() + i * d, h.data());
      for (std::size_t a = 0; a < p; ++a) {
        for (std::size_t b = 0; b < p; ++b) sums[a * p + b] += h[a] * h[b];
        sums[p * p + a] += h[a] * y[i];
      }
    }
  }
  return sums;
}

// Solves the normal equations restricted to the basis functions `kept` (indices into p) by Cholesky (p is a
// handful). A basis function whose pivot is below 1e-10 of its diagonal is dependent on those kept before
// it: `on_dependent(j)` is told, and it is left out when that returns (`kept` loses it).
std::vector<double> solve_normal_equations(const std::vector<double>& sums, std::size_t p,
                                           std::vector<std::size_t>& kept,
                                           const std::function<void(std::size_t)>& on_dependent) {
  std::vector<std::size_t> used;
  std::vector<double> l;  // the factor of the kept rows and columns, row-major, used.size() wide
  for (const std::size_t j : kept) {
    const std::size_t q = used.size();
    std::vector<double> row(q + 1);
    for (std::size_t i = 0; i < q; ++i) {
      double value = sums[j * p + used[i]];
      for (std::size_t k = 0; k < i; ++k) value -= row[k] * l[i * q + k];
      row[i] = value / l[i * q + i];
    }
    double pivot = sums[j * p + j];
    for (std::size_t k = 0; k < q; ++k) pivot -= row[k] * row[k];
    if (!(pivot > 1e-10 * std::max(sums[j * p + j], 1e-300))) {
      on_dependent(j);
      continue;
    }
    row[q] = std::sqrt(pivot);
    // Widen the factor by one column (the rows so far get a zero) and append the row.
    std::vector<double> wider((q + 1) * (q + 1), 0.0);
    for (std::size_t i = 0; i < q; ++i)
      std::copy_n(l.begin() + static_cast<std::ptrdiff_t>(i * q), i + 1,
                  wider.begin() + static_cast<std::ptrdiff_t>(i * (q + 1)));
    std::copy(row.begin(), row.end(), wider.begin() + static_cast<std::ptrdiff_t>(q * (q + 1)));
    l = std::move(wider);
    used.push_back(j);
  }
  kept = used;
  const std::size_t q = used.size();
  std::vector<double> beta(q);
  for (std::size_t i = 0; i < q; ++i) beta[i] = sums[p * p + used[i]];
  for (std::size_t i = 0; i < q; ++i) {
    for (std::size_t k = 0; k < i; ++k) beta[i] -= l[i * q + k] * beta[k];
    beta[i] /= l[i * q + i];
  }
  for (std::size_t i = q; i-- > 0;) {
    for (std::size_t k = i + 1; k < q; ++k) beta[i] -= l[k * q + i] * beta[k];
    beta[i] /= l[i * q + i];
  }
  return beta;
}

// The input behind basis function j (the intercept, when there is one, is function 0).
std::size_t input_of(const MeanFunction& basis, std::size_t j) { return basis.inputs[j - (basis.intercept ? 1 : 0)]; }

}  // namespace

std::vector<double> least_squares_coefficients(Communicator& ranks, RowSource& rows, const RowPartition& partition,
                                               const MeanFunction& basis,
                                               const std::vector<std::string>& feature_names) {
  const std::size_t p = basis.basis_size();
  if (p == 0) return {};
  const std::vector<double> sums = normal_equations(ranks, rows, partition, basis);
  std::vector<std::size_t> kept(p);
  for (std::size_t j = 0; j < p; ++j) kept[j] = j;
  return solve_normal_equations(sums, p, kept, [&](std::size_t j) {
    const bool intercept_column = basis.intercept && j == 0;
    const std::size_t input = intercept_column ? 0 : input_of(basis, j);
    GPSTREAM_THROW(
        "the mean's {} is {}: the least-squares trend cannot use it; leave it out of the mean",
        intercept_column
            ? std::string("intercept")
            : "input \"" + (input < feature_names.size() ? feature_names[input] : std::to_string(input + 1)) + "\"",
        intercept_column ? "redundant" : "constant, or a combination of the others");
  });
}

LeastSquaresTrend least_squares_trend(Communicator& ranks, RowSource& rows, const RowPartition& partition,
                                      const MeanFunction& basis) {
  LeastSquaresTrend trend;
  const std::size_t p = basis.basis_size();
  if (p == 0) return trend;
  const std::vector<double> sums = normal_equations(ranks, rows, partition, basis);
  std::vector<std::size_t> kept(p);
  for (std::size_t j = 0; j < p; ++j) kept[j] = j;
  std::vector<double> beta = solve_normal_equations(sums, p, kept, [&](std::size_t j) {
    GPSTREAM_CHECK(!(basis.intercept && j == 0), "the trend's intercept cannot be fitted: no rows");
    trend.left_out.push_back(input_of(basis, j));
  });
  trend.mean.intercept = basis.intercept;
  for (const std::size_t j : kept) {
    if (!(basis.intercept && j == 0)) trend.mean.inputs.push_back(input_of(basis, j));
  }
  trend.mean.coefficients = std::move(beta);
  return trend;
}

void MeanResidualRowSource::transform(double* x, double* y, std::size_t count) const {
  if (y == nullptr) return;
  for (std::size_t i = 0; i < count; ++i) y[i] -= mean_.value(x + i * columns());
}

MeanFunction parse_mean_function(const std::string& text, const std::vector<std::string>& feature_names) {
  MeanFunction mean;
  if (text == "none") return mean;
  mean.intercept = true;
  if (text == "constant") return mean;
  if (text == "linear") {
    for (std::size_t l = 0; l < feature_names.size(); ++l) mean.inputs.push_back(l);
    return mean;
  }
  GPSTREAM_CHECK(text.starts_with("linear:") && text.size() > 7,
                 "unknown mean \"{}\" (choose none, constant, linear, or linear:INPUT,INPUT,... by name or number)",
                 text);
  std::string_view rest(text);
  rest.remove_prefix(7);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view word = rest.substr(0, comma);
    const auto named = std::find(feature_names.begin(), feature_names.end(), word);
    std::size_t column = 0;
    if (named != feature_names.end()) {
      column = static_cast<std::size_t>(named - feature_names.begin());
    } else {
      std::size_t number = 0;
      const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), number);
      GPSTREAM_CHECK(
          error == std::errc() && end == word.data() + word.size() && number >= 1 && number <= feature_names.size(),
          "the mean's input \"{}\" is neither an input's name nor a number from 1 to {} (inputs: {})", word,
          feature_names.size(), fmt::join(feature_names, ", "));
      column = number - 1;
    }
    GPSTREAM_CHECK(std::find(mean.inputs.begin(), mean.inputs.end(), column) == mean.inputs.end(),
                   "the mean lists input \"{}\" twice", word);
    mean.inputs.push_back(column);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return mean;
}

}  // namespace gpstream

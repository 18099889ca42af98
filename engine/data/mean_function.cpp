#include "engine/data/mean_function.h"

#include "engine/core/error.h"
#include "engine/data/partitioned_rows.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

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

std::vector<double> least_squares_coefficients(Communicator& ranks, RowSource& rows, const RowPartition& partition,
                                               const MeanFunction& basis,
                                               const std::vector<std::string>& feature_names) {
  const std::size_t p = basis.basis_size(), d = rows.columns(), n = partition.global_rows;
  if (p == 0) return {};
  // HᵀH (p×p) and Hᵀy, over blocks of global rows in order.
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
  // Cholesky of HᵀH (p is a handful): a zero pivot is an input the trend cannot use.
  std::vector<double> l(sums.begin(), sums.begin() + static_cast<std::ptrdiff_t>(p * p)),
      beta(sums.end() - static_cast<std::ptrdiff_t>(p), sums.end());
  for (std::size_t j = 0; j < p; ++j) {
    double pivot = l[j * p + j];
    for (std::size_t k = 0; k < j; ++k) pivot -= l[j * p + k] * l[j * p + k];
    const bool intercept_column = basis.intercept && j == 0;
    const std::size_t input =
        basis.inputs.empty() || intercept_column ? 0 : basis.inputs[j - (basis.intercept ? 1 : 0)];
    GPSTREAM_CHECK(
        pivot > 1e-10 * std::max(sums[j * p + j], 1e-300),
        "the mean's {} is {}: the least-squares trend cannot use it; leave it out of --mean",
        intercept_column
            ? std::string("intercept")
            : "input \"" + (input < feature_names.size() ? feature_names[input] : std::to_string(input + 1)) + "\"",
        intercept_column ? "redundant" : "constant, or a combination of the others");
    l[j * p + j] = std::sqrt(pivot);
    for (std::size_t i = j + 1; i < p; ++i) {
      double value = l[i * p + j];
      for (std::size_t k = 0; k < j; ++k) value -= l[i * p + k] * l[j * p + k];
      l[i * p + j] = value / l[j * p + j];
    }
  }
  for (std::size_t i = 0; i < p; ++i) {
    for (std::size_t k = 0; k < i; ++k) beta[i] -= l[i * p + k] * beta[k];
    beta[i] /= l[i * p + i];
  }
  for (std::size_t i = p; i-- > 0;) {
    for (std::size_t k = i + 1; k < p; ++k) beta[i] -= l[k * p + i] * beta[k];
    beta[i] /= l[i * p + i];
  }
  return beta;
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

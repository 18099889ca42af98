#include "engine/data/mean_function.h"

#include "engine/core/error.h"

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
  for (const std::size_t l : inputs) names.push_back(l < feature_names.size() ? feature_names[l] : fmt::format("{}", l + 1));
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
      GPSTREAM_CHECK(error == std::errc() && end == word.data() + word.size() && number >= 1 &&
                         number <= feature_names.size(),
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

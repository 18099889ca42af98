#include "engine/data/standardisation.h"

#include "engine/core/error.h"

#include <cmath>

namespace gpstream {

Standardisation Standardisation::identity() { return Standardisation{}; }

void Standardisation::validate(const std::string& source, const std::vector<std::string>& feature_names,
                               const std::string& target_name, bool constant_target_allowed) const {
  GPSTREAM_CHECK_ARGUMENT(x_mean.size() == x_std.size(), "{}: {} input means but {} standard deviations", source,
                          x_mean.size(), x_std.size());
  // What is wrong with a column's mean and standard deviation, if anything: a NaN or a negative spread
  // is a damaged or hand-edited file (a negative y_std would reflect every prediction about the mean),
  // an infinite one values whose squares overflow.
  // Inputs need finite statistics; the target's variance is used too (a variance of y*), so its square must fit.
  const auto check_column = [&](const std::string& what, double mean_value, double spread, bool target) {
    GPSTREAM_CHECK_ARGUMENT(
        !std::isnan(mean_value) && !std::isnan(spread),
        "{}: {} has mean {} and standard deviation {}: not a number (a damaged file, or one written by "
        "another tool)",
        source, what, mean_value, spread);
    GPSTREAM_CHECK_ARGUMENT(
        spread >= 0, "{}: {} has a negative standard deviation {} (a damaged file, or one written by another tool)",
        source, what, spread);
    GPSTREAM_CHECK_ARGUMENT(
        std::isfinite(mean_value) && std::isfinite(target ? spread * spread : spread),
        "{}: {} has mean {} and standard deviation {}: its values are too large for their squares to fit "
        "a double (|x| below about 1e150 do); rescale {}",
        source, what, mean_value, spread, target ? "the target" : "the column");
  };
  for (std::size_t l = 0; l < x_mean.size(); ++l) {
    const std::string column =
        l < feature_names.size() ? fmt::format("\"{}\"", feature_names[l]) : fmt::format("{}", l + 1);
    check_column("input column " + column, x_mean[l], x_std[l], false);
  }
  check_column(fmt::format("the target \"{}\"", target_name), y_mean, y_std, true);
  const double variance = y_std * y_std;
  GPSTREAM_CHECK_ARGUMENT(variance > 0 || constant_target_allowed,
                          "{}: the target \"{}\" is constant ({} in every row){}: a GP has nothing to learn from it",
                          source, target_name, y_mean, y_std > 0 ? " to double precision" : "");
}

namespace {
constexpr double kLargestStandardisedInput = 1e150;
}  // namespace

void Standardisation::apply_to_rows(double* x, std::size_t rows, std::size_t columns) const {
  if (!standardises_inputs()) return;
  GPSTREAM_CHECK(x_mean.size() == columns && x_std.size() == columns,
                 "the standardisation is for {} inputs but the rows have {}", x_mean.size(), columns);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t l = 0; l < columns; ++l) {
      const double spread = x_std[l] > 0.0 ? x_std[l] : 1.0;
      const double value = x[i * columns + l];
      x[i * columns + l] = (value - x_mean[l]) / spread;
      // A spread far below the values' (a damaged or edited statistic) makes values whose squares — the
      // kernels' distances — overflow; the dataset's own spread keeps every |value| below √n.
      GPSTREAM_CHECK(std::abs(x[i * columns + l]) <= kLargestStandardisedInput,
                     "input {} of a row, {}, standardised by mean {} and standard deviation {}, is {:.3g}: too large "
                     "for its square to fit a double (a standard deviation far below the values' spread: a damaged "
                     "or edited dataset or hyperparameter file?)",
                     l + 1, value, x_mean[l], x_std[l], x[i * columns + l]);
    }
  }
}

void Standardisation::apply_to_targets(double* y, std::size_t count) const {
  const double spread = y_std > 0.0 ? y_std : 1.0;
  for (std::size_t i = 0; i < count; ++i) y[i] = (y[i] - y_mean) / spread;
}

StandardisedRowSource::StandardisedRowSource(RowSource& inner, Standardisation standardisation, MeanFunction mean)
    : TransformedRowSource(inner), standardisation_(std::move(standardisation)), mean_(std::move(mean)) {
  mean_.validate(inner.columns(), "the prior mean");
  GPSTREAM_CHECK(!standardisation_.standardises_inputs() || standardisation_.x_mean.size() == inner.columns(),
                 "the standardisation is for {} inputs but the data have {}", standardisation_.x_mean.size(),
                 inner.columns());
}

void StandardisedRowSource::transform(double* x, double* y, std::size_t count) const {
  standardisation_.apply_to_rows(x, count, columns());
  if (y == nullptr) return;
  standardisation_.apply_to_targets(y, count);
  if (mean_.coefficients.empty()) return;
  const std::size_t d = columns();
  for (std::size_t i = 0; i < count; ++i) y[i] -= mean_.value(x + i * d);
}

}  // namespace gpstream

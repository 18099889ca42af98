#include "storage/csv/csv_number.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace gpstream {

FieldKind parse_number(std::string_view text, double& value) {
  if (text.empty()) return FieldKind::empty;
  if (text.front() == '+') text.remove_prefix(1);  // from_chars refuses a leading '+'
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (end != text.data() + text.size() || text.empty()) {
    for (const std::string_view marker : {"NA", "N/A", "NULL", "null", "None", "?"}) {
      if (text == marker) return FieldKind::missing;
    }
    return FieldKind::not_a_number;
  }
  if (error == std::errc::result_out_of_range) {
    // Beyond a double's range: too large (infinite), too small (0), or subnormal, which strtod gives.
    value = std::strtod(std::string(text).c_str(), nullptr);
    if (!std::isfinite(value)) return FieldKind::non_finite;
    return value == 0.0 ? FieldKind::underflow : FieldKind::number;
  }
  if (error != std::errc()) return FieldKind::not_a_number;
  return std::isfinite(value) ? FieldKind::number : FieldKind::non_finite;
}

std::string describe_field(FieldKind kind, std::string_view text) {
  switch (kind) {
    case FieldKind::empty:
      return "missing value";
    case FieldKind::underflow:
      return fmt::format("value {}, which underflows to 0 (below 4.9e-324, the smallest double)", quoted(text));
    default:
      return "invalid value " + quoted(text);
  }
}

std::string quoted(std::string_view text) {
  constexpr std::size_t kMax = 60;
  return text.size() <= kMax ? fmt::format("\"{}\"", text) : fmt::format("\"{}...\"", text.substr(0, kMax));
}

}  // namespace gpstream

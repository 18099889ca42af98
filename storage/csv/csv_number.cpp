#include "storage/csv/csv_number.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

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
  if (error == std::errc::result_out_of_range) return FieldKind::non_finite;
  if (error != std::errc()) return FieldKind::not_a_number;
  return std::isfinite(value) ? FieldKind::number : FieldKind::non_finite;
}

std::string quoted(std::string_view text) {
  constexpr std::size_t kMax = 60;
  return text.size() <= kMax ? fmt::format("\"{}\"", text) : fmt::format("\"{}...\"", text.substr(0, kMax));
}

}  // namespace gpstream

// How a CSV field becomes a double: what convert and predict both accept.
#pragma once

#include <string>
#include <string_view>

namespace gpstream {

// `missing`: a marker other tools write for a missing value (NA, N/A, NULL,
// null, None, ?) — a missing value like an empty field, never a column name.
enum class FieldKind { number, empty, missing, non_finite, not_a_number };

// Parses a whole field (a leading '+' allowed); `value` is set for numbers.
FieldKind parse_number(std::string_view text, double& value);

// Quotes text for a message, shortened so one line stays one line.
std::string quoted(std::string_view text);

}  // namespace gpstream

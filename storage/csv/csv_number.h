// How a CSV field becomes a double: what convert and predict both accept.
#pragma once

#include <string>
#include <string_view>

namespace gpstream {

// `missing`: a marker other tools write for a missing value (NA, N/A, NULL,
// null, None, ?) — a missing value like an empty field, never a column name.
// `underflow`: a number too small for a double (1e-400), which would read as 0. Subnormal numbers
// (4e-320) are numbers.
enum class FieldKind { number, empty, missing, non_finite, underflow, not_a_number };

// Parses a whole field (a leading '+' allowed); `value` is set for numbers.
FieldKind parse_number(std::string_view text, double& value);

// What a field of `kind` is, for a message: "missing value", "invalid value \"inf\"", "value \"1e-400\",
// which underflows to 0 (below 4.9e-324, the smallest double)".
std::string describe_field(FieldKind kind, std::string_view text);

// Quotes text for a message, shortened so one line stays one line.
std::string quoted(std::string_view text);

}  // namespace gpstream

// How a CSV field becomes a double: what convert and predict both accept.
#pragma once

#include <string>
#include <string_view>

namespace gpstream {

enum class FieldKind { number, empty, non_finite, not_a_number };

// Parses a whole field (a leading '+' allowed); `value` is set for numbers.
FieldKind parse_number(std::string_view text, double& value);

// Quotes text for a message, shortened so one line stays one line.
std::string quoted(std::string_view text);

}  // namespace gpstream

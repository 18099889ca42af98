// Overflow-checked arithmetic for sizes (element counts, byte counts).
//
// Sizes read from files or derived from n×m products must never wrap around
// silently: a wrapped size turns into a small allocation and a buffer overrun.
#pragma once

#include "engine/core/error.h"

#include <cstddef>

namespace gpstream {

inline std::size_t checked_multiply(std::size_t a, std::size_t b) {
  std::size_t product = 0;
  GPSTREAM_CHECK(!__builtin_mul_overflow(a, b, &product), "size overflow: {} x {} does not fit in 64 bits", a, b);
  return product;
}

inline std::size_t checked_multiply(std::size_t a, std::size_t b, std::size_t c) {
  return checked_multiply(checked_multiply(a, b), c);
}

inline std::size_t checked_add(std::size_t a, std::size_t b) {
  std::size_t sum = 0;
  GPSTREAM_CHECK(!__builtin_add_overflow(a, b, &sum), "size overflow: {} + {} does not fit in 64 bits", a, b);
  return sum;
}

inline std::size_t checked_add(std::size_t a, std::size_t b, std::size_t c) {
  return checked_add(checked_add(a, b), c);
}

}  // namespace gpstream

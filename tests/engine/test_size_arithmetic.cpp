#include "engine/core/size_arithmetic.h"
#include "engine/data/row_block_stream.h"

#include <doctest/doctest.h>

#include <limits>

TEST_CASE("size arithmetic throws on overflow instead of wrapping") {
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  CHECK(gpstream::checked_multiply(3, 4) == 12);
  CHECK(gpstream::checked_multiply(2, 3, 5) == 30);
  CHECK(gpstream::checked_add(kMax - 1, 1) == kMax);
  CHECK_THROWS_AS(gpstream::checked_multiply(kMax / 2 + 1, 2), gpstream::Error);
  CHECK_THROWS_AS(gpstream::checked_multiply(1u << 31, 1u << 31, 1u << 31), gpstream::Error);
  CHECK_THROWS_AS(gpstream::checked_add(kMax, 1), gpstream::Error);
}

TEST_CASE("block rows follow the memory budget and the source's alignment") {
  // 2 buffers of (8 + 1) doubles per row = 144 bytes per row.
  CHECK(gpstream::block_rows_for_budget(144 * 1000, 8, 2, 1, 1'000'000) == 1000);
  CHECK(gpstream::block_rows_for_budget(144 * 1000, 8, 2, 256, 1'000'000) == 768);  // rounded down to chunks
  CHECK(gpstream::block_rows_for_budget(144 * 100, 8, 2, 256, 1'000'000) == 100);   // less than a chunk fits
  CHECK(gpstream::block_rows_for_budget(144 * 1000, 8, 2, 1, 10) == 10);            // never more than n
  CHECK_THROWS_WITH_AS(gpstream::block_rows_for_budget(100, 8, 2, 1, 10), doctest::Contains("cannot hold"),
                       gpstream::Error);
}

// The Context's memory ledger and thread arena (engine/core/context.h).
#include "engine/core/context.h"

#include <doctest/doctest.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <string>

using namespace gpstream;

TEST_CASE(
    "the memory budget is a ledger: reservations add up, are returned when destroyed, and an excess names the parts") {
  MemoryBudget budget(1000);
  {
    MemoryReservation vectors = budget.reserve("the vectors", 600);
    CHECK(budget.available() == 400);
    // A share of what is free, within [minimum, wanted].
    const MemoryReservation blocks = budget.reserve_up_to("row blocks", 10000, 2, 50);
    CHECK(blocks.bytes() == 200);
    CHECK(budget.available() == 200);
    CHECK(budget.describe() == "memory budget 1000 B: 600 B for the vectors, 200 B for row blocks, 200 B free");
    try {
      budget.reserve("a factor", 300, "use fewer rows");
      FAIL("expected MemoryBudgetExceeded");
    } catch (const MemoryBudgetExceeded& error) {
      CHECK(std::string(error.what()) ==
            "a factor needs 300 B, but the memory budget is 1000 B and holds 600 B for the vectors, 200 B for row "
            "blocks already; use fewer rows");
    }
    CHECK(budget.available() == 200);  // a refused reservation holds nothing
    MemoryReservation moved = std::move(vectors);
    CHECK(budget.available() == 200);  // moving keeps the reservation
    moved.release();
    CHECK(budget.available() == 800);
  }
  CHECK(budget.available() == 1000);
  CHECK_THROWS_AS(budget.reserve_up_to("blocks", 10, 2, 2000), MemoryBudgetExceeded);  // the minimum must fit
}

TEST_CASE("work executed in a Context runs on at most its threads") {
  Context context({.threads = 1});
  CHECK(context.threads() == 1);
  const int concurrency = context.execute([] { return tbb::this_task_arena::max_concurrency(); });
  CHECK(concurrency == 1);
  std::atomic<int> sum{0};
  context.execute([&] { tbb::parallel_for(0, 100, [&](int i) { sum += i; }); });
  CHECK(sum == 4950);
  Context all;
  CHECK(all.threads() >= 1);
}

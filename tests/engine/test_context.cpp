// The Context's memory ledger and thread arena (engine/core/context.h), and
// the worker team that runs inside it (engine/core/worker_team.h).
#include "engine/core/context.h"
#include "engine/core/error.h"
#include "engine/core/worker_team.h"

#include <doctest/doctest.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <string>
#include <vector>

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

TEST_CASE("a worker team runs every item of every round once, at any thread count, and passes errors on") {
  for (const unsigned threads : {1u, 2u, 4u}) {
    CAPTURE(threads);
    Context context({.threads = threads});
    context.execute([&] {
      std::vector<std::atomic<int>> runs(64);
      std::atomic<int> wrong{0};
      WorkerTeam::run([&](WorkerTeam& team) {
        // Many short rounds with serial work between them, as GBCD's selection makes.
        for (std::size_t round = 0; round < 2000; ++round) {
          const std::size_t count = round % runs.size();
          for (auto& run : runs) run = 0;
          team.for_each(count, [&](std::size_t item) {
            if (item >= count) ++wrong;
            ++runs[item];
          });
          for (std::size_t item = 0; item < runs.size(); ++item) {
            if (runs[item] != (item < count ? 1 : 0)) ++wrong;
          }
        }
        // An item's error comes out of for_each once the round is over; the team goes on.
        std::atomic<int> ran{0};
        CHECK_THROWS_WITH(team.for_each(40,
                                        [&](std::size_t item) {
                                          ++ran;
                                          if (item == 7) throw Error("item 7 failed");
                                        }),
                          "item 7 failed");
        CHECK(ran == 40);
        std::atomic<int> after{0};
        team.for_each(10, [&](std::size_t) { ++after; });
        CHECK(after == 10);
      });
      CHECK(wrong == 0);
      // An error of the body itself sends the helpers home.
      CHECK_THROWS_WITH(WorkerTeam::run([](WorkerTeam& team) {
                          team.for_each(8, [](std::size_t) {});
                          throw Error("the body failed");
                        }),
                        "the body failed");
    });
  }
}

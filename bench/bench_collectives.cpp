// The latency and bandwidth of the collectives a distributed GBCD iteration
// makes, without the iteration around them: run under `mpirun -np P`.
// Prints, for each size, the median over repetitions of one sum (all-reduce)
// on rank 0, after an all-reduce that lines the ranks up.
#include "engine/distributed/mpi_communicator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

int main(int argc, char** argv) {
  gpstream::MpiSession session(argc, argv);
  gpstream::MpiCommunicator world;
  // 1 value (‖g‖∞, stop flags), and a GBCD iteration's candidates: (κ(m − 1) + 1) × (d + 2) doubles at
  // κ = 60, m = 500, d = 10.
  const std::size_t sizes[] = {1, 1024, 29941 * 12};
  if (world.is_root()) fmt::print("ranks,values,bytes,median_microseconds,gigabytes_per_second\n");
  for (const std::size_t size : sizes) {
    std::vector<double> values(size, 1.0);
    std::vector<double> seconds;
    for (int repeat = 0; repeat < 60; ++repeat) {
      double line_up = 0;
      world.sum(std::span(&line_up, 1));
      const auto start = std::chrono::steady_clock::now();
      world.sum(values);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::nth_element(seconds.begin(), seconds.begin() + 30, seconds.end());
    const double median = seconds[30];
    if (world.is_root()) {
      fmt::print("{},{},{},{:.1f},{:.2f}\n", world.size(), size, size * sizeof(double), median * 1e6,
                 static_cast<double>(size * sizeof(double)) / median / 1e9);
    }
  }
  return 0;
}

// The distributed suite's main: every rank of `mpirun -np P test_distributed`
// runs every test case (they make collective calls); rank 0 reports, and the
// job fails when a check fails on any rank.
#define DOCTEST_CONFIG_IMPLEMENT
#include "engine/distributed/mpi_communicator.h"

#include <doctest/doctest.h>

int main(int argc, char** argv) {
  gpstream::MpiSession session(argc, argv);
  gpstream::MpiCommunicator world;
  doctest::Context tests(argc, argv);
  if (!world.is_root()) tests.setOption("minimal", true);
  const int result = tests.run();
  return world.any(result != 0) ? 1 : 0;
}

// What a process that runs gpstream sets up once, before any work — the
// command line's main() and the Python module alike — and the ranks it runs
// a job with.
#pragma once

#include "engine/core/communicator.h"

#ifdef GPSTREAM_HAVE_MPI  // a program linked with gpstream_mpi
#include "engine/distributed/mpi_communicator.h"
#endif

#include <memory>
#include <optional>

namespace gpstream {

// HDF5's own error printing off (every failure is reported as a gpstream::Error) and, given the program's
// `argv`, OpenBLAS's kernels chosen for this CPU (engine/linalg/blas_core.h: the process may be executed
// again to set them; an embedding such as Python's passes none and keeps the host's).
void initialise_process(char** argv = nullptr);
// The kernels OpenBLAS uses ("SkylakeX", ...), for --version.
const char* blas_kernels();

// The ranks of the job this process is part of: every rank of an mpirun launch (in a program linked with
// gpstream_mpi), else this process alone.
class ProcessRanks {
 public:
  ProcessRanks(int& argc, char**& argv) {
#ifdef GPSTREAM_HAVE_MPI
    if (MpiSession::launched_by_mpirun()) {
      session_.emplace(argc, argv);
      ranks_ = std::make_unique<MpiCommunicator>();
      return;
    }
#endif
    (void)argc, (void)argv;
    ranks_ = std::make_unique<SingleProcess>();
  }
  Communicator& communicator() { return *ranks_; }
  // Ends every rank of a distributed job at once with `code`: an error on one rank, which the others would
  // otherwise wait for in their next collective. Returns for one process.
  void abort_job(int code) {
#ifdef GPSTREAM_HAVE_MPI
    if (session_) MpiSession::abort(code);
#endif
    (void)code;
  }

 private:
#ifdef GPSTREAM_HAVE_MPI
  std::optional<MpiSession> session_;  // finalised after the communicator is gone
#endif
  std::unique_ptr<Communicator> ranks_;
};

}  // namespace gpstream

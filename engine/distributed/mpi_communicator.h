// MpiCommunicator: the Communicator of a run launched by `mpirun`, over
// MPI_COMM_WORLD (Open MPI from Debian). Built only with GPSTREAM_MPI.
//
// Collectives are called by one thread at a time (the driver's), so MPI is
// initialised with MPI_THREAD_SERIALIZED; the tasks that compute kernel
// blocks never call MPI.
#pragma once

#include "engine/core/communicator.h"

namespace gpstream {

// MPI for the life of the process: MPI_Init_thread when constructed,
// MPI_Finalize when destroyed. One per process, in main().
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // Whether this process was started by mpirun / mpiexec (Open MPI's environment says so).
  static bool launched_by_mpirun();
  // Ends every rank of the job at once with `code`: for an error on one rank,
  // which the others would otherwise wait for in their next collective.
  [[noreturn]] static void abort(int code);
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator();  // MPI_COMM_WORLD; needs an MpiSession

  CommunicationStatistics statistics() const override { return statistics_; }
  std::size_t rank() const override { return rank_; }
  std::size_t size() const override { return size_; }
  void sum(std::span<double> values) override;
  void sum(std::span<std::uint64_t> values) override;
  double max(double value) override;
  std::pair<double, std::size_t> max_location(double value, std::size_t index) override;
  bool any(bool flag) override;
  std::vector<double> all_gather(std::span<const double> local) override;
  void broadcast(std::span<double> values, std::size_t root) override;

 private:
  // Counts one collective of `bytes` from this rank, timed from `start`.
  void count(std::size_t bytes, double start);

  std::size_t rank_ = 0, size_ = 1;
  CommunicationStatistics statistics_;
};

}  // namespace gpstream

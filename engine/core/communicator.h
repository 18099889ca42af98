// Communicator: the ranks of a run and the collectives the engine needs from
// them. A distributed run (MPI: engine/distributed/mpi_communicator.h)
// partitions the training rows among its ranks (data/row_partition.h); the
// single process is the one-rank case, whose collectives return their input,
// so that every algorithm has one code path.
//
// Every rank must make the same collective calls in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace gpstream {

// What a rank's collectives cost so far: calls, bytes it sent into them, and
// the wall time spent inside (waiting for the slowest rank included).
struct CommunicationStatistics {
  std::uint64_t calls = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual CommunicationStatistics statistics() const { return {}; }

  virtual std::size_t rank() const = 0;
  virtual std::size_t size() const = 0;
  bool is_root() const { return rank() == 0; }

  // values ← the element-wise sum over the ranks, the same bits on every
  // rank. Exact wherever one rank contributes each value and the others
  // zeros (how the owners of rows share them).
  virtual void sum(std::span<double> values) = 0;
  virtual void sum(std::span<std::uint64_t> values) = 0;
  virtual double max(double value) = 0;
  double min(double value) { return -max(-value); }
  // The (value, index) with the largest value over the ranks, ties to the
  // smallest index (deterministic whatever the partition).
  virtual std::pair<double, std::size_t> max_location(double value, std::size_t index) = 0;
  // True on every rank when it is true on any.
  virtual bool any(bool flag) = 0;
  // Every rank's `local` values, concatenated in rank order, on every rank.
  virtual std::vector<double> all_gather(std::span<const double> local) = 0;
  // `values` ← root's values, on every rank (their sizes must agree).
  virtual void broadcast(std::span<double> values, std::size_t root) = 0;
};

// The one-rank communicator of a single process.
class SingleProcess final : public Communicator {
 public:
  std::size_t rank() const override { return 0; }
  std::size_t size() const override { return 1; }
  void sum(std::span<double>) override {}
  void sum(std::span<std::uint64_t>) override {}
  double max(double value) override { return value; }
  std::pair<double, std::size_t> max_location(double value, std::size_t index) override { return {value, index}; }
  bool any(bool flag) override { return flag; }
  std::vector<double> all_gather(std::span<const double> local) override { return {local.begin(), local.end()}; }
  void broadcast(std::span<double>, std::size_t) override {}
};

}  // namespace gpstream

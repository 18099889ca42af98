#include "engine/distributed/mpi_communicator.h"

#include "engine/core/error.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>

namespace gpstream {
namespace {

// MPI counts are ints: larger collectives are cut into pieces of at most this many values.
constexpr std::size_t kMaxPiece = std::size_t{1} << 30;

void check(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  GPSTREAM_THROW("{} failed: {}", call, std::string(text, static_cast<std::size_t>(length)));
}

int as_int(std::size_t value, const char* what) {
  GPSTREAM_CHECK(value <= static_cast<std::size_t>(INT_MAX), "{} too large for MPI: {}", what, value);
  return static_cast<int>(value);
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  GPSTREAM_CHECK(provided >= MPI_THREAD_SERIALIZED, "the MPI library does not allow calls from more than one thread");
}

MpiSession::~MpiSession() { MPI_Finalize(); }

bool MpiSession::launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr;
}

void MpiSession::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this only satisfies [[noreturn]]
}

void MpiCommunicator::count(std::size_t bytes, double start) {
  ++statistics_.calls;
  statistics_.bytes += bytes;
  statistics_.seconds += MPI_Wtime() - start;
}

MpiCommunicator::MpiCommunicator() {
  int rank = 0, size = 1;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  rank_ = static_cast<std::size_t>(rank);
  size_ = static_cast<std::size_t>(size);
}

namespace {

// values ← their sum over the ranks, in pieces that MPI's int counts can hold.
template <typename T>
void sum_in_place(std::span<T> values, MPI_Datatype type) {
  for (std::size_t first = 0; first < values.size(); first += kMaxPiece) {
    const std::size_t count = std::min(kMaxPiece, values.size() - first);
    check(MPI_Allreduce(MPI_IN_PLACE, values.data() + first, static_cast<int>(count), type, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
  }
}

}  // namespace

void MpiCommunicator::sum(std::span<double> values) {
  const double start = MPI_Wtime();
  sum_in_place(values, MPI_DOUBLE);
  count(values.size_bytes(), start);
}

void MpiCommunicator::sum(std::span<std::uint64_t> values) {
  const double start = MPI_Wtime();
  sum_in_place(values, MPI_UINT64_T);
  count(values.size_bytes(), start);
}

double MpiCommunicator::max(double value) {
  const double start = MPI_Wtime();
  check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  count(sizeof value, start);
  return value;
}

std::pair<double, std::size_t> MpiCommunicator::max_location(double value, std::size_t index) {
  // Every rank's pair, chosen alike everywhere (MPI_MAXLOC has no unsigned 64-bit index type).
  const double pair[2] = {value, static_cast<double>(index)};
  const std::vector<double> all = all_gather(pair);
  std::pair<double, std::size_t> best{value, index};
  for (std::size_t k = 0; k + 1 < all.size(); k += 2) {
    const double candidate = all[k];
    const auto at = static_cast<std::size_t>(all[k + 1]);
    if (candidate > best.first || (candidate == best.first && at < best.second)) best = {candidate, at};
  }
  return best;
}

bool MpiCommunicator::any(bool flag) {
  const double start = MPI_Wtime();
  int value = flag ? 1 : 0;
  check(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD), "MPI_Allreduce");
  count(sizeof value, start);
  return value != 0;
}

std::vector<double> MpiCommunicator::all_gather(std::span<const double> local) {
  const double start = MPI_Wtime();
  const int count = as_int(local.size(), "an all-gather of values");
  std::vector<int> counts(size_), offsets(size_);
  check(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
  std::size_t total = 0;
  for (std::size_t r = 0; r < size_; ++r) {
    offsets[r] = as_int(total, "an all-gather of values");
    total += static_cast<std::size_t>(counts[r]);
  }
  std::vector<double> all(total);
  check(MPI_Allgatherv(local.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE,
                       MPI_COMM_WORLD),
        "MPI_Allgatherv");
  this->count(local.size_bytes(), start);
  return all;
}

void MpiCommunicator::broadcast(std::span<double> values, std::size_t root) {
  const double start = MPI_Wtime();
  for (std::size_t first = 0; first < values.size(); first += kMaxPiece) {
    const std::size_t count = std::min(kMaxPiece, values.size() - first);
    check(MPI_Bcast(values.data() + first, static_cast<int>(count), MPI_DOUBLE, static_cast<int>(root), MPI_COMM_WORLD),
          "MPI_Bcast");
  }
  count(values.size_bytes(), start);
}

}  // namespace gpstream

// What the tests that launch `mpirun -np P gpstream …` share.
#pragma once

#include "test_support.h"

#include <cstring>
#include <string>
#include <vector>

namespace gpstream::testing {

// gpstream on `ranks` ranks (oversubscribed: CI has two cores; as root where CI runs as root).
inline CommandResult run_on_ranks(std::size_t ranks, const std::string& arguments) {
  return run_command("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 '" MPIRUN "' --oversubscribe -np " +
                     std::to_string(ranks) + " '" GPSTREAM_BINARY "' " + arguments);
}

// Column k of a CSV file with a header (a prediction file: 0 the means, 1 the variances).
inline std::vector<double> column_of(const std::string& path, std::size_t k) {
  std::vector<double> values;
  for (const std::vector<double>& row : read_numbers(path)) values.push_back(row.at(k));
  return values;
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace gpstream::testing

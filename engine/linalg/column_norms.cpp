#include "engine/linalg/column_norms.h"

#include "engine/core/size_arithmetic.h"

#include <tbb/parallel_for.h>

#include <algorithm>

namespace gpstream {

std::vector<double> column_squared_norms(const std::vector<double>& gradient, std::size_t n, std::size_t r) {
  constexpr std::size_t kRowsPerPart = 1024;
  const std::size_t parts = (n + kRowsPerPart - 1) / kRowsPerPart;
  std::vector<double> partial(checked_multiply(parts, r), 0.0);
  tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t part) {
    double* sums = partial.data() + part * r;
    for (std::size_t i = part * kRowsPerPart; i < std::min(n, (part + 1) * kRowsPerPart); ++i) {
      const double* row = gradient.data() + i * r;
      for (std::size_t j = 0; j < r; ++j) sums[j] += row[j] * row[j];
    }
  });
  std::vector<double> norms(r, 0.0);
  for (std::size_t part = 0; part < parts; ++part) {
    for (std::size_t j = 0; j < r; ++j) norms[j] += partial[part * r + j];
  }
  return norms;
}

}  // namespace gpstream

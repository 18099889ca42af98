// Column norms of the n×r row-major blocks the multi-column solves keep
// (their gradients G = K̄U − V, the variance routes' batches).
#pragma once

#include <cstddef>
#include <vector>

namespace gpstream {

// Σ_i G_ij² for each of the r columns of G (n×r, row-major), summed in a
// fixed order (blocks of rows in sequence) so that stopping decisions do
// not depend on the thread count.
std::vector<double> column_squared_norms(const std::vector<double>& gradient, std::size_t n, std::size_t r);

}  // namespace gpstream

// k-means clustering of the rows of a RowSource, streamed: k-means++
// seeding (Arthur & Vassilvitskii 2007) on a random sample of rows, then
// Lloyd passes over all rows in blocks, each assigning every row to its
// nearest centre (distances by one GEMM per block) and moving the centres to
// their rows' means. Memory O(k d + block·k) beyond the n labels; the result
// depends only on the seed. The Bayesian committee machine partitions its
// training rows this way (Schwaighofer & Tresp 2003 §3.2: "much better than
// random").
#pragma once

#include "engine/core/context.h"
#include "engine/data/row_partition.h"
#include "engine/data/row_source.h"

#include <cstdint>
#include <vector>

namespace gpstream {

struct KMeansOptions {
  std::size_t clusters = 10;
  std::size_t max_passes = 10;  // Lloyd passes; fewer when no row changes cluster
  std::uint64_t seed = 1;
};

struct KMeansResult {
  std::vector<double> centres;        // k×d, row-major
  std::vector<std::uint32_t> labels;  // the cluster of each row of the source
  std::size_t passes = 0;
  double inertia = 0.0;  // Σ squared distance of each row to its centre
};

// One progress report per Lloyd pass to the Context's observers; throws
// Cancelled at its stop request.
KMeansResult k_means(Context& context, RowSource& rows, const KMeansOptions& options);
// The same over rows partitioned among the ranks of the Context's
// communicator: `rows` are this rank's (`partition`), the centres and
// statistics come from every rank's sums, and labels cover this rank's rows.
KMeansResult k_means(Context& context, RowSource& rows, const RowPartition& partition, const KMeansOptions& options);

// The clusters as lists of row indices (ascending), without empty ones; a
// cluster of more than 2 × `target_size` rows is cut into consecutive parts
// of about `target_size`, so that no module's O(size²) factor outgrows the
// others (k-means clusters can be very unequal).
std::vector<std::vector<std::size_t>> clusters_as_modules(const std::vector<std::uint32_t>& labels,
                                                          std::size_t clusters, std::size_t target_size);

}  // namespace gpstream

#include "engine/data/row_source_utilities.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/in_memory_row_source.h"
#include "engine/data/row_block_stream.h"

#include <boost/iterator/counting_iterator.hpp>

#include <algorithm>
#include <iterator>
#include <random>
#include <cstring>

namespace gpstream {
namespace {

constexpr std::size_t kBlockBytes = 32u << 20;

// Calls visit(block) for every block of a pass over `source` with targets when it has them.
template <typename Visit>
void for_each_block(RowSource& source, Visit&& visit) {
  if (source.rows() == 0) return;
  const std::size_t block_rows = std::max<std::size_t>(1, kBlockBytes / ((source.columns() + 1) * sizeof(double)));
  RowBlockStream stream(source, {.block_rows = block_rows, .prefetch_depth = 1, .with_targets = source.has_targets()});
  while (const RowBlock* block = stream.next()) visit(*block);
}

}  // namespace

std::unique_ptr<RowSource> load_in_memory(RowSource& source) {
  const std::size_t d = source.columns();
  std::vector<double> x(checked_multiply(source.rows(), d));
  std::vector<double> y(source.has_targets() ? source.rows() : 0);
  for_each_block(source, [&](const RowBlock& block) {
    std::memcpy(x.data() + block.first * d, block.x, block.count * d * sizeof(double));
    if (block.y != nullptr) std::memcpy(y.data() + block.first, block.y, block.count * sizeof(double));
  });
  return std::make_unique<InMemoryRowSource>(std::move(x), std::move(y), d);
}

std::vector<double> read_all_targets(RowSource& source) {
  GPSTREAM_CHECK(source.has_targets(), "the dataset has no targets");
  if (const double* resident = source.resident_targets()) return {resident, resident + source.rows()};
  std::vector<double> y(source.rows());
  for_each_block(source, [&](const RowBlock& block) {
    std::memcpy(y.data() + block.first, block.y, block.count * sizeof(double));
  });
  return y;
}

std::vector<std::size_t> random_row_subset(std::size_t n, std::size_t count, std::uint64_t seed) {
  std::vector<std::size_t> subset;
  subset.reserve(std::min(n, count));
  std::mt19937_64 random(seed);
  std::sample(boost::counting_iterator<std::size_t>(0), boost::counting_iterator<std::size_t>(n),
              std::back_inserter(subset), count, random);
  return subset;
}

}  // namespace gpstream

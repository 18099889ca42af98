// Whole-dataset helpers over a RowSource.
#pragma once

#include "engine/data/row_source.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gpstream {

// Reads every row (and target) of `source` into an InMemoryRowSource, in
// blocks: for data that fit the memory budget, after which every pass of a
// solver reads memory instead of the file.
std::unique_ptr<RowSource> load_in_memory(RowSource& source);

// All n targets, in one streamed pass.
std::vector<double> read_all_targets(RowSource& source);

// `count` distinct row indices drawn uniformly from 0 … n−1 (all n when
// count ≥ n), sorted — so that gathering them is one forward pass over a
// file — by selection sampling seeded with `seed`, without materialising 0 … n−1.
std::vector<std::size_t> random_row_subset(std::size_t n, std::size_t count, std::uint64_t seed);

}  // namespace gpstream

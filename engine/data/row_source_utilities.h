// Whole-dataset helpers over a RowSource.
#pragma once

#include "engine/data/row_source.h"

#include <memory>
#include <vector>

namespace gpstream {

// Reads every row (and target) of `source` into an InMemoryRowSource, in
// blocks: for data that fit the memory budget, after which every pass of a
// solver reads memory instead of the file.
std::unique_ptr<RowSource> load_in_memory(RowSource& source);

// All n targets, in one streamed pass.
std::vector<double> read_all_targets(RowSource& source);

}  // namespace gpstream

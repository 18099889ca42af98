// A hyperparameter search in progress (engine/hyper/search_journal.h): the
// evaluations made so far, and the command that was searching, so that the
// same command — or `train --resume` for a training job still learning its
// hyperparameters — replays them and carries on to the bits the
// uninterrupted search would have reached.
//
//   root attributes: format "gpstream-search-checkpoint", version 1,
//     created_by, command ("hyper", "train"), arguments (its command line),
//     dataset_fingerprint, evaluations, checksum (XXH3 of everything below)
//   /points, /values, /gradients   float64: the entries, concatenated
//   /point_sizes, /gradient_sizes  float64: each entry's lengths
//   version 2 adds /covariances and /covariance_sizes (an estimated
//   gradient's error covariance, empty for exact evaluations) and
//   /warm_start (the journal's: the all-rows solves' last solutions)
//
// Written atomically like every gpstream file.
#pragma once

#include "engine/hyper/search_journal.h"

#include <string>
#include <vector>

namespace gpstream {

inline constexpr const char* kSearchCheckpointFormat = "gpstream-search-checkpoint";

struct SearchCheckpoint {
  std::string command;                 // "hyper" or "train"
  std::vector<std::string> arguments;  // the command's own arguments, as launched
  std::string dataset_fingerprint;
  std::vector<SearchJournal::Entry> entries;
  std::vector<double> warm_start;  // SearchJournal::warm_start
};

void write_search_checkpoint(const std::string& path, const SearchCheckpoint& checkpoint);
// Throws naming the file when it is not one, or its contents do not match their checksum.
SearchCheckpoint read_search_checkpoint(const std::string& path);
// Whether `path` is an HDF5 file whose format is a search checkpoint's.
bool is_search_checkpoint(const std::string& path);

}  // namespace gpstream

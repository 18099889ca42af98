// A learning run's checkpoints (storage/checkpoint/search_checkpoint.h): the
// search journal (engine/hyper/search_journal.h) written to a file every so
// many seconds and when the run is interrupted, and the evaluations of the
// run it continues replayed. The command line's `hyper` and
// `train --learn-hyper` and Python's estimator (`optimizer='lbfgs'` with
// `checkpoint=`) checkpoint their searches through it.
#pragma once

#include "engine/hyper/model_learning.h"
#include "engine/hyper/search_journal.h"
#include "storage/checkpoint/search_checkpoint.h"

#include <chrono>
#include <functional>
#include <string>

namespace gpstream {

// What a search checkpoint written from Python names as its search (SearchCheckpoint::command; its arguments
// are the estimator's parameters, name=value). Either front end continues the other's search with the same data:
// the journal checks that every evaluation it replays is at the point the continuing search asks for
// (engine/hyper/search_journal.h), so a search started otherwise is refused at its first different point.
inline constexpr const char* kPythonSearch = "python";

class SearchCheckpoints {
 public:
  // `identity`: what the checkpoint names as its search (command,
  // arguments, dataset). Writes only where `writer` (rank 0 of a
  // distributed run); `replay`: the entries and warm start of the run it
  // continues. No path: no checkpoints. A checkpoint that cannot be written
  // is reported to `warn` and the search goes on.
  SearchCheckpoints(std::string path, double every_seconds, SearchCheckpoint identity, bool writer,
                    SearchCheckpoint replay, std::function<void(const std::string&)> warn);
  // Where it stands (the journal calls back into it): neither copied nor moved.
  SearchCheckpoints(const SearchCheckpoints&) = delete;
  SearchCheckpoints& operator=(const SearchCheckpoints&) = delete;
  SearchJournal& journal() { return journal_; }
  void write_now();
  // Runs `search` on the journal. When the Context's stop request ends it (Cancelled), the journal is
  // written and JobInterrupted (learning) says how many evaluations the checkpoint holds (none: no path).
  LearnedModel run(const std::function<LearnedModel(SearchJournal&)>& search);
  std::size_t replayed() const { return replayed_; }

 private:
  std::string path_;
  double every_seconds_;
  SearchCheckpoint identity_;
  bool writer_;
  std::size_t replayed_;
  SearchJournal journal_;
  std::function<void(const std::string&)> warn_;
  std::chrono::steady_clock::time_point last_written_;
};

}  // namespace gpstream

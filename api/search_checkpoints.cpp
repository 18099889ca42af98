#include "api/search_checkpoints.h"

#include "api/job_interrupted.h"
#include "engine/core/error.h"

namespace gpstream {

SearchCheckpoints::SearchCheckpoints(std::string path, double every_seconds, SearchCheckpoint identity, bool writer,
                                     SearchCheckpoint replay, std::function<void(const std::string&)> warn)
    : path_(std::move(path)),
      every_seconds_(every_seconds),
      identity_(std::move(identity)),
      writer_(writer),
      replayed_(replay.entries.size()),
      journal_(std::move(replay.entries), std::move(replay.warm_start)),
      warn_(std::move(warn)),
      last_written_(std::chrono::steady_clock::now()) {
  if (path_.empty()) return;
  journal_.on_entry = [this](const SearchJournal&) {
    const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_written_).count();
    if (since >= every_seconds_) write_now();
  };
}

LearnedModel SearchCheckpoints::run(const std::function<LearnedModel(SearchJournal&)>& search) {
  try {
    return search(journal_);
  } catch (const Cancelled& stopped) {
    JobInterrupted interrupted(stopped.what(), JobInterrupted::Stage::learning);
    if (!path_.empty()) {
      write_now();
      interrupted.checkpoint_path = path_;
      interrupted.evaluations_saved = journal_.entries().size();
    }
    throw interrupted;
  }
}

void SearchCheckpoints::write_now() {
  if (path_.empty() || !writer_) return;
  identity_.entries = journal_.entries();
  identity_.warm_start = journal_.warm_start;
  try {
    write_search_checkpoint(path_, identity_);
  } catch (const Error& error) {
    // As a training checkpoint: a side file that cannot be written costs a warning, not the run.
    if (warn_) warn_(std::string(error.what()) + "; the search goes on");
  }
  last_written_ = std::chrono::steady_clock::now();
}

}  // namespace gpstream

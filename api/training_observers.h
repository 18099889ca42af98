// The observers a training run writes its side files with
// (engine/core/progress.h): the CSV training log and the checkpoint cadence.
// A failed write never costs the run: it is a warning, and the run goes on.
#pragma once

#include "engine/core/progress.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace gpstream {

// Where an observer that writes a side file (the log, checkpoints) reports
// a failed write: the run goes on, a side file never costs it.
using WarningSink = std::function<void(const std::string&)>;

// CSV: iteration, seconds, objective, convergence_measure, kernel_evaluations,
// gradient_drift, and the column cache's lookups, hits, hits from disk, bytes
// read from disk and estimated core-seconds saved (totals of the run). Each
// row goes out in one write, so that the file holds whole rows only; a
// failed write (a full disk) is cut back off, reported, and ends the log
// while the run goes on. A resumed run (`resumed_at`: its checkpoint's
// iteration) appends to the log of the run it continues, after cutting the
// rows that run wrote beyond its checkpoint, which the resumed run repeats.
class TrainingLogObserver final : public RunObserver {
 public:
  TrainingLogObserver(const std::string& path, std::optional<std::uint64_t> resumed_at, WarningSink warn);
  ~TrainingLogObserver() override;
  TrainingLogObserver(const TrainingLogObserver&) = delete;
  TrainingLogObserver& operator=(const TrainingLogObserver&) = delete;
  void on_start(const IterationReport& report) override;
  void on_iteration(const IterationReport& report) override;

 private:
  void write(const IterationReport& report);
  void append(const std::string& text);
  std::string path_;
  int descriptor_ = -1;  // −1 once a write failed: the log ends there
  WarningSink warn_;
};

// Whether `path` begins with the header a TrainingLogObserver writes: a
// training log, which a resumed run may cut back and continue (any other
// file is not the run's to cut).
bool is_training_log(const std::string& path);

// Calls `write` (which writes the run's checkpoint) at the start of a fresh
// run (so that the resume command printed at launch works from the first
// instant), every `every_seconds` of wall time, and when the run stops. A
// write that fails is a warning: the run goes on, the next one retries.
class CheckpointObserver final : public RunObserver {
 public:
  // `agree(due)` makes the decision to write one the same on every rank of
  // a distributed run (whose checkpoint gathers from all of them).
  CheckpointObserver(
      std::function<void()> write, double every_seconds, WarningSink warn,
      std::function<bool(bool)> agree = [](bool due) { return due; });
  void on_start(const IterationReport& report) override;
  void on_iteration(const IterationReport& report) override;
  void on_stop(const IterationReport& report, StopReason reason) override;
  std::size_t written() const { return written_; }
  // The iteration of the last checkpoint written, if any; and why the last attempt failed ("" if it did not).
  std::optional<std::uint64_t> last_written_iteration() const { return last_written_iteration_; }
  const std::string& last_failure() const { return last_failure_; }

 private:
  void write(const IterationReport& report);
  std::function<void()> write_;
  double every_seconds_;
  WarningSink warn_;
  std::function<bool(bool)> agree_;
  std::chrono::steady_clock::time_point last_attempt_;
  std::size_t written_ = 0;
  std::optional<std::uint64_t> last_written_iteration_;
  std::string last_failure_;
};

}  // namespace gpstream

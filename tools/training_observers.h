// Observers of long work (engine/core/progress.h): the live progress line,
// the CSV training log, and the checkpoint cadence.
#pragma once

#include "engine/core/error.h"
#include "engine/core/progress.h"
#include "tools/progress_line.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpstream::cli {

// iteration, the convergence measure (‖g‖∞, or a greedy basis's gap), the
// objective, kernel evaluations/s, elapsed, and an ETA: extrapolated from the
// trend of log ‖g‖∞ toward the tolerance, or — for a basis selection of
// `target_iterations` steps, whose step cost grows with the basis — from
// elapsed · ((target / done)² − 1), or — for work of a known size (test
// rows, modules; `work_unit` names them) — from the fraction done.
class ProgressLineObserver final : public RunObserver {
 public:
  ProgressLineObserver(ProgressLine& line, std::string name, double tolerance, std::string measure = "|g|inf",
                       std::uint64_t target_iterations = 0, std::string work_unit = "");
  void on_start(const IterationReport& report) override;
  void on_iteration(const IterationReport& report) override;
  void on_stop(const IterationReport& report, StopReason reason) override;
  // Printed even when the line is not shown (--quiet).
  void on_warning(const std::string& message) override;

 private:
  std::string line_text(const IterationReport& report) const;
  ProgressLine& line_;
  std::string name_;
  double tolerance_;
  std::string measure_;
  std::uint64_t target_iterations_;
  std::string work_unit_;
  std::vector<IterationReport> history_;
};

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

// The observers of every training run: the progress line (none on the
// other ranks of a distributed run), and the CSV log and checkpoint cadence
// when a path is given for them. Their warnings go to the progress line's
// observer, or to standard error.
class TrainingObservers {
 public:
  TrainingObservers(
      std::unique_ptr<ProgressLineObserver> progress, const std::string& log_path,
      std::optional<std::uint64_t> resumed_at, const std::string& checkpoint_path, double checkpoint_every,
      std::function<void()> write_checkpoint,
      std::function<bool(bool)> agree_to_checkpoint = [](bool due) { return due; });
  const std::vector<RunObserver*>& all() const { return all_; }
  const CheckpointObserver* checkpoints() const { return checkpoints_.get(); }

 private:
  void warn(const std::string& message) const;
  std::unique_ptr<ProgressLineObserver> progress_;
  std::unique_ptr<TrainingLogObserver> log_;
  std::unique_ptr<CheckpointObserver> checkpoints_;
  std::vector<RunObserver*> all_;
};

// The path as one shell word: as it is when it has only safe characters, else single-quoted.
std::string shell_quoted(const std::string& path);

// The error of a run stopped by Ctrl-C ("interrupted <where>"): with the
// resume command when a checkpoint was written (saying from which
// iteration when the last write failed: `checkpoints`), else how to get one.
// With `ranks` > 1 (a distributed run) the command starts with "mpirun -np ranks"; any number of ranks
// resumes the job, one process too.
Cancelled interrupted_run(const std::string& where, const std::string& checkpoint_path, const std::string& output,
                          const CheckpointObserver* checkpoints, std::size_t ranks = 1);
// "mpirun -np 3 " for a job on 3 ranks, "" for one process.
std::string launcher(std::size_t ranks);

}  // namespace gpstream::cli

// Observers of long work (engine/core/progress.h): the live progress line,
// the CSV training log, and the checkpoint cadence.
#pragma once

#include "engine/core/error.h"
#include "engine/core/progress.h"
#include "tools/progress_line.h"

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
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

// CSV: iteration, seconds, objective, convergence_measure, kernel_evaluations,
// gradient_drift, and the column cache's lookups, hits, hits from disk, bytes
// read from disk and estimated core-seconds saved (totals of the run). A resumed run appends to the log of the run it continues.
class TrainingLogObserver final : public RunObserver {
 public:
  TrainingLogObserver(const std::string& path, bool append);
  void on_start(const IterationReport& report) override;
  void on_iteration(const IterationReport& report) override;

 private:
  void write(const IterationReport& report);
  std::string path_;
  std::ofstream stream_;
};

// Calls `write` (which writes the run's checkpoint) every `every_seconds` of
// wall time and when the run stops.
class CheckpointObserver final : public RunObserver {
 public:
  // `agree(due)` makes the decision to write one the same on every rank of
  // a distributed run (whose checkpoint gathers from all of them).
  CheckpointObserver(
      std::function<void()> write, double every_seconds,
      std::function<bool(bool)> agree = [](bool due) { return due; });
  void on_start(const IterationReport& report) override;
  void on_iteration(const IterationReport& report) override;
  void on_stop(const IterationReport& report, StopReason reason) override;
  std::size_t written() const { return written_; }

 private:
  void write();
  std::function<void()> write_;
  double every_seconds_;
  std::function<bool(bool)> agree_;
  std::chrono::steady_clock::time_point last_written_;
  std::size_t written_ = 0;
};

// The observers of every training run: the progress line (none on the
// other ranks of a distributed run), and the CSV log and checkpoint cadence
// when a path is given for them.
class TrainingObservers {
 public:
  TrainingObservers(
      std::unique_ptr<ProgressLineObserver> progress, const std::string& log_path, bool append_log,
      const std::string& checkpoint_path, double checkpoint_every, std::function<void()> write_checkpoint,
      std::function<bool(bool)> agree_to_checkpoint = [](bool due) { return due; });
  const std::vector<RunObserver*>& all() const { return all_; }

 private:
  std::unique_ptr<ProgressLineObserver> progress_;
  std::unique_ptr<TrainingLogObserver> log_;
  std::unique_ptr<CheckpointObserver> checkpoints_;
  std::vector<RunObserver*> all_;
};

// The path as one shell word: as it is when it has only safe characters, else single-quoted.
std::string shell_quoted(const std::string& path);

// The error of a run stopped by Ctrl-C ("interrupted <where>"): with the
// resume command when a checkpoint was written, else how to get one.
// With `ranks` > 1 (a distributed run) the command starts with "mpirun -np ranks"; any number of ranks
// resumes the job, one process too.
Cancelled interrupted_run(const std::string& where, const std::string& checkpoint_path, const std::string& output,
                          std::size_t ranks = 1);
// "mpirun -np 3 " for a job on 3 ranks, "" for one process.
std::string launcher(std::size_t ranks);

}  // namespace gpstream::cli

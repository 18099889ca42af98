// Observers of long work (engine/core/progress.h) on the command line: the
// live progress line; and the message of a run stopped by Ctrl-C. (The
// training log and the checkpoint cadence are the API's: api/training_observers.h.)
#pragma once

#include "api/file_description.h"
#include "api/training_job.h"
#include "api/training_observers.h"
#include "tools/progress_line.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpstream::cli {

// iteration, the convergence measure (‖g‖₂/‖y‖₂, or a greedy basis's gap), the
// objective, kernel evaluations/s, elapsed, and an ETA: extrapolated from the
// trend of the log of the measure toward the tolerance, or — for a basis selection of
// `target_iterations` steps, whose step cost grows with the basis — from
// elapsed · ((target / done)² − 1), or — for work of a known size (test
// rows, modules; `work_unit` names them) — from the fraction done.
class ProgressLineObserver final : public RunObserver {
 public:
  ProgressLineObserver(ProgressLine& line, std::string name, double tolerance, std::string measure = "|g|/|y|",
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

// The error of a training job stopped by Ctrl-C (api/training_job.h): where it stopped, with the resume
// command when a checkpoint was written (saying from which iteration when the last write failed), else how
// to get one. With `ranks` > 1 (a distributed run) the command starts with "mpirun -np ranks"; any number of
// ranks resumes the job, one process too.
Cancelled interrupted_job(const JobInterrupted& stopped, const std::string& output, std::size_t ranks = 1);
// "mpirun -np 3 " for a job on 3 ranks, "" for one process.
std::string launcher(std::size_t ranks);

}  // namespace gpstream::cli

#include "tools/training_observers.h"

#include "tools/command_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <charconv>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace gpstream::cli {
namespace {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) return fmt::format("{:.1f}s", seconds);
  if (seconds < 3600) return fmt::format("{}m{:02}s", static_cast<int>(seconds / 60), static_cast<int>(seconds) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(seconds / 3600), static_cast<int>(seconds / 60) % 60);
}

}  // namespace

ProgressLineObserver::ProgressLineObserver(ProgressLine& line, std::string name, double tolerance, std::string measure,
                                           std::uint64_t target_iterations, std::string work_unit)
    : line_(line),
      name_(std::move(name)),
      tolerance_(tolerance),
      measure_(std::move(measure)),
      target_iterations_(target_iterations),
      work_unit_(std::move(work_unit)) {}

std::string ProgressLineObserver::line_text(const IterationReport& report) const {
  // Kernel evaluations per second over the last few iterations; ETA from the
  // slope of the log of the measure over the second half of the history so far (linear
  // convergence is the rule for these methods).
  double rate = 0.0, eta = -1.0;
  if (history_.size() >= 2) {
    const IterationReport& recent = history_[history_.size() > 5 ? history_.size() - 5 : 0];
    const double seconds = report.elapsed_seconds - recent.elapsed_seconds;
    if (seconds > 0) rate = static_cast<double>(report.kernel_evaluations - recent.kernel_evaluations) / seconds;
    const IterationReport& middle = history_[history_.size() / 2];
    const double span = report.elapsed_seconds - middle.elapsed_seconds;
    const double decades = std::log(middle.convergence_measure) - std::log(report.convergence_measure);
    if (tolerance_ > 0 && span > 0 && decades > 0 && report.convergence_measure > 0) {
      eta = (std::log(report.convergence_measure) - std::log(tolerance_)) * span / decades;
    }
    if (report.total > 0 && report.done > 0) {
      eta = report.elapsed_seconds * static_cast<double>(report.total - report.done) / static_cast<double>(report.done);
    }
    if (target_iterations_ > 0 && report.iteration > 0) {
      // A basis that may converge first (sggp's gap) is done at the earlier of the two.
      const double ratio = static_cast<double>(target_iterations_) / static_cast<double>(report.iteration);
      const double to_target = report.elapsed_seconds * (ratio * ratio - 1.0);
      eta = eta >= 0 ? std::min(eta, to_target) : to_target;
    }
  }
  const std::string iteration = target_iterations_ > 0 ? fmt::format("{}/{}", report.iteration, target_iterations_)
                                                       : fmt::format("{}", report.iteration);
  if (measure_.empty()) {  // work of a known size without a measure of its own (modules, blocks of test rows)
    return fmt::format("{} {} of {} {}  elapsed {}  ETA {}", name_, report.done, report.total, work_unit_,
                       format_duration(report.elapsed_seconds), format_duration(eta));
  }
  const std::string tolerance = tolerance_ > 0 ? fmt::format(" (tol {:g})", tolerance_) : std::string();
  const std::string work = report.total > 0 && !work_unit_.empty()
                               ? fmt::format("  {} of {} {}", report.done, report.total, work_unit_)
                               : "";
  std::string cache;
  if (!history_.empty() && report.column_cache_lookups > 0) {
    // The hit rate of the last few iterations: the cache fills as a run goes on.
    const IterationReport& recent = history_[history_.size() > 5 ? history_.size() - 5 : 0];
    const std::uint64_t lookups = report.column_cache_lookups - recent.column_cache_lookups;
    if (lookups > 0) {
      const auto share = [lookups](std::uint64_t count) {
        return 100.0 * static_cast<double>(count) / static_cast<double>(lookups);
      };
      cache = fmt::format("  cache {:.0f}% hits", share(report.column_cache_hits - recent.column_cache_hits));
      if (report.column_cache_disk_bytes > 0) {
        cache += fmt::format(" ({:.0f}% from disk, {} read)",
                             share(report.column_cache_disk_hits - recent.column_cache_disk_hits),
                             format_bytes(static_cast<double>(report.column_cache_disk_bytes)));
      }
      cache += fmt::format(", ~{:.3g} core-s saved", report.column_cache_seconds_saved);
    }
  }
  return fmt::format("{} iter {}{}  {} {:.3e}{}  f {:.8e}  {:.3g} kernel evals/s{}  elapsed {}  ETA {}", name_,
                     iteration, work, measure_, report.convergence_measure, tolerance, report.objective, rate, cache,
                     format_duration(report.elapsed_seconds), format_duration(eta));
}

void ProgressLineObserver::on_start(const IterationReport& report) {
  history_.push_back(report);
  line_.update(line_text(report), true);
}

void ProgressLineObserver::on_iteration(const IterationReport& report) {
  history_.push_back(report);
  line_.update(line_text(report));
  if (report.gradient_drift >= 0) {
    line_.finish();
    fmt::print(stderr, "{} iter {}: gradient refreshed exactly, drift |g_maintained - g_exact|inf = {:.3e}\n", name_,
               report.iteration, report.gradient_drift);
  }
}

void ProgressLineObserver::on_warning(const std::string& message) {
  line_.finish();
  fmt::print(stderr, "{}: warning: {}\n", name_, for_command_line(message));
}

void ProgressLineObserver::on_stop(const IterationReport& report, StopReason) {
  line_.update(line_text(report), true);
  line_.finish();
}

std::string launcher(std::size_t ranks) { return ranks > 1 ? fmt::format("mpirun -np {} ", ranks) : std::string(); }

Cancelled interrupted_job(const JobInterrupted& stopped, const std::string& output, std::size_t ranks) {
  const std::string& checkpoint = stopped.checkpoint_path;
  const std::string resume =
      fmt::format("Resume with:\n  {}gpstream train --resume {}", launcher(ranks), shell_quoted(checkpoint));
  if (stopped.stage == JobInterrupted::Stage::learning) {
    if (checkpoint.empty()) return Cancelled(stopped.what());
    return Cancelled(fmt::format("{} while learning the hyperparameters; {} evaluations saved in {}. {}",
                                 stopped.what(), stopped.evaluations_saved, checkpoint, resume));
  }
  const std::string where = fmt::format("at iteration {}", stopped.iteration);
  if (checkpoint.empty()) {
    return Cancelled(
        fmt::format("interrupted {}; nothing was saved (give --checkpoint FILE to be able to resume)", where));
  }
  const std::string resume_to = fmt::format("{} -o {}", resume, shell_quoted(output));
  if (stopped.last_checkpoint_failure.empty()) {
    return Cancelled(fmt::format("interrupted {}; checkpoint written to {}. {}", where, checkpoint, resume_to));
  }
  if (!stopped.last_checkpoint_iteration) {
    return Cancelled(fmt::format("interrupted {}; no checkpoint could be written ({}): rerun the original command",
                                 where, stopped.last_checkpoint_failure));
  }
  return Cancelled(
      fmt::format("interrupted {}; the last checkpoint could not be written ({}): {} holds iteration {}. {}", where,
                  stopped.last_checkpoint_failure, checkpoint, *stopped.last_checkpoint_iteration, resume_to));
}

}  // namespace gpstream::cli

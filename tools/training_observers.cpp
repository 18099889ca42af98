#include "tools/training_observers.h"

#include "engine/core/error.h"
#include "engine/core/human_readable.h"
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
  // slope of log ‖g‖∞ over the second half of the history so far (linear
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
  fmt::print(stderr, "{}: warning: {}\n", name_, message);
}

void ProgressLineObserver::on_stop(const IterationReport& report, StopReason) {
  line_.update(line_text(report), true);
  line_.finish();
}

namespace {

constexpr const char* kLogHeader =
    "iteration,seconds,objective,convergence_measure,kernel_evaluations,gradient_drift,"
    "column_cache_lookups,column_cache_hits,column_cache_disk_hits,column_cache_disk_bytes,"
    "column_cache_seconds_saved\n";

// The length of the log's prefix that a run resumed at `iteration` keeps:
// the header and the whole rows up to that iteration (rows are in order of
// iteration; a torn last row, left by a crash mid-write, goes too).
std::size_t kept_log_length(const std::string& text, std::uint64_t iteration) {
  std::size_t position = text.find('\n');
  if (position == std::string::npos) return 0;  // not even a whole header
  ++position;
  while (position < text.size()) {
    const std::size_t end = text.find('\n', position);
    if (end == std::string::npos) break;
    std::uint64_t row_iteration = 0;
    const char* first = text.data() + position;
    const auto [last, error] = std::from_chars(first, text.data() + end, row_iteration);
    if (error != std::errc() || *last != ',' || row_iteration > iteration) break;
    position = end + 1;
  }
  return position;
}

}  // namespace

TrainingLogObserver::TrainingLogObserver(const std::string& path, std::optional<std::uint64_t> resumed_at,
                                         WarningSink warn)
    : path_(path), warn_(std::move(warn)) {
  descriptor_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | (resumed_at ? 0 : O_TRUNC), 0666);
  GPSTREAM_CHECK(descriptor_ >= 0, "--log: cannot write '{}': {}", path, std::strerror(errno));
  std::size_t kept = 0;
  if (resumed_at) {
    std::string text;
    char buffer[1 << 16];
    for (ssize_t got; (got = ::read(descriptor_, buffer, sizeof buffer)) > 0;)
      text.append(buffer, static_cast<std::size_t>(got));
    kept = kept_log_length(text, *resumed_at);
  }
  GPSTREAM_CHECK(::ftruncate(descriptor_, static_cast<off_t>(kept)) == 0 &&
                     ::lseek(descriptor_, static_cast<off_t>(kept), SEEK_SET) >= 0,
                 "--log: cannot write '{}': {}", path, std::strerror(errno));
  if (kept == 0) append(kLogHeader);
}

TrainingLogObserver::~TrainingLogObserver() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void TrainingLogObserver::append(const std::string& text) {
  if (descriptor_ < 0) return;
  const off_t before = ::lseek(descriptor_, 0, SEEK_CUR);
  // One write per row (a plot of a running job sees whole rows); a short one is continued, to learn why it stopped.
  std::size_t done = 0;
  ssize_t written = 0;
  while (done < text.size() && (written = ::write(descriptor_, text.data() + done, text.size() - done)) > 0) {
    done += static_cast<std::size_t>(written);
  }
  if (done == text.size()) return;
  const std::string reason = written < 0 ? std::strerror(errno) : "the disk took no more";
  if (before >= 0 && ::ftruncate(descriptor_, before) != 0) {
    // Nothing more can be done for the file; the run still goes on.
  }
  ::close(descriptor_);
  descriptor_ = -1;
  warn_(
      fmt::format("--log: cannot write '{}': {}; the log ends at its last whole row (the run goes on)", path_, reason));
}

void TrainingLogObserver::write(const IterationReport& report) {
  append(fmt::format("{},{:.6f},{:.17g},{:.17g},{},{},{},{},{},{},{:.3f}\n", report.iteration, report.elapsed_seconds,
                     report.objective, report.convergence_measure, report.kernel_evaluations,
                     report.gradient_drift >= 0 ? fmt::format("{:.6g}", report.gradient_drift) : std::string(),
                     report.column_cache_lookups, report.column_cache_hits, report.column_cache_disk_hits,
                     report.column_cache_disk_bytes, report.column_cache_seconds_saved));
}

void TrainingLogObserver::on_start(const IterationReport& report) {
  if (report.iteration == 0) write(report);
}

void TrainingLogObserver::on_iteration(const IterationReport& report) { write(report); }

CheckpointObserver::CheckpointObserver(std::function<void()> write, double every_seconds, WarningSink warn,
                                       std::function<bool(bool)> agree)
    : write_(std::move(write)), every_seconds_(every_seconds), warn_(std::move(warn)), agree_(std::move(agree)) {}

void CheckpointObserver::write(const IterationReport& report) {
  last_attempt_ = std::chrono::steady_clock::now();
  try {
    write_();
  } catch (const Error& error) {
    // A full or failing disk under the checkpoint must not cost the run: the model may still be written.
    last_failure_ = error.what();
    warn_(fmt::format("{}; the run goes on{}", last_failure_,
                      last_written_iteration_
                          ? fmt::format(" (the last checkpoint written is of iteration {})", *last_written_iteration_)
                          : std::string(" (no checkpoint written yet)")));
    return;
  }
  last_failure_.clear();
  last_written_iteration_ = report.iteration;
  ++written_;
}

void CheckpointObserver::on_start(const IterationReport& report) {
  last_attempt_ = std::chrono::steady_clock::now();
  // A fresh run's first checkpoint costs one write and makes the resume command printed at launch valid at once.
  if (report.iteration == 0) write(report);
}

void CheckpointObserver::on_iteration(const IterationReport& report) {
  const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_attempt_).count();
  if (agree_(since >= every_seconds_)) write(report);
}

void CheckpointObserver::on_stop(const IterationReport& report, StopReason) { write(report); }

TrainingObservers::TrainingObservers(std::unique_ptr<ProgressLineObserver> progress, const std::string& log_path,
                                     std::optional<std::uint64_t> resumed_at, const std::string& checkpoint_path,
                                     double checkpoint_every, std::function<void()> write_checkpoint,
                                     std::function<bool(bool)> agree_to_checkpoint)
    : progress_(std::move(progress)) {
  const WarningSink warn = [this](const std::string& message) { this->warn(message); };
  if (progress_) all_.push_back(progress_.get());
  if (!log_path.empty()) {
    log_ = std::make_unique<TrainingLogObserver>(log_path, resumed_at, warn);
    all_.push_back(log_.get());
  }
  if (!checkpoint_path.empty()) {
    checkpoints_ = std::make_unique<CheckpointObserver>(std::move(write_checkpoint), checkpoint_every, warn,
                                                        std::move(agree_to_checkpoint));
    all_.push_back(checkpoints_.get());
  }
}

void TrainingObservers::warn(const std::string& message) const {
  if (progress_) {
    progress_->on_warning(message);
  } else {
    fmt::print(stderr, "warning: {}\n", message);
  }
}

std::string shell_quoted(const std::string& path) {
  const bool plain = std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/._-+,:=@%", c) != nullptr;
  });
  if (plain && !path.empty()) return path;
  std::string quoted = "'";
  for (const char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string launcher(std::size_t ranks) { return ranks > 1 ? fmt::format("mpirun -np {} ", ranks) : std::string(); }

Cancelled interrupted_run(const std::string& where, const std::string& checkpoint_path, const std::string& output,
                          const CheckpointObserver* checkpoints, std::size_t ranks) {
  if (checkpoint_path.empty()) {
    return Cancelled(
        fmt::format("interrupted {}; nothing was saved (give --checkpoint FILE to be able to resume)", where));
  }
  const std::string resume = fmt::format("Resume with:\n  {}gpstream train --resume {} -o {}", launcher(ranks),
                                         shell_quoted(checkpoint_path), shell_quoted(output));
  if (checkpoints == nullptr || checkpoints->last_failure().empty()) {
    return Cancelled(fmt::format("interrupted {}; checkpoint written to {}. {}", where, checkpoint_path, resume));
  }
  if (!checkpoints->last_written_iteration()) {
    return Cancelled(fmt::format("interrupted {}; no checkpoint could be written ({}): rerun the original command",
                                 where, checkpoints->last_failure()));
  }
  return Cancelled(
      fmt::format("interrupted {}; the last checkpoint could not be written ({}): {} holds iteration {}. {}", where,
                  checkpoints->last_failure(), checkpoint_path, *checkpoints->last_written_iteration(), resume));
}

}  // namespace gpstream::cli

#include "api/training_observers.h"

#include "engine/core/error.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpstream {
namespace {

constexpr const char* kLogHeader =
    "iteration,seconds,objective,convergence_measure,kernel_evaluations,gradient_drift,"
    "column_cache_lookups,column_cache_hits,column_cache_disk_hits,column_cache_disk_bytes,"
    "column_cache_seconds_saved\n";

// The length of the log's prefix that a run resumed at `iteration` keeps:
// the header and the whole rows up to that iteration (rows are in order of
// iteration; a torn last row, left by a crash mid-write, goes too).
std::size_t kept_log_length(const std::string& text, std::uint64_t iteration) {
  if (!text.starts_with(kLogHeader)) return 0;  // not a whole header, or not a training log
  std::size_t position = std::strlen(kLogHeader);
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

bool is_training_log(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::string first(std::strlen(kLogHeader), '\0');
  return file.read(first.data(), static_cast<std::streamsize>(first.size())) && first == kLogHeader;
}

TrainingLogObserver::TrainingLogObserver(const std::string& path, std::optional<std::uint64_t> resumed_at,
                                         WarningSink warn)
    : path_(path), warn_(std::move(warn)) {
  descriptor_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  GPSTREAM_CHECK(descriptor_ >= 0, "cannot write the training log '{}': {}", path, std::strerror(errno));
  // A device or FIFO (--log /dev/null) is written as it is: nothing there to cut back.
  struct stat status {};
  if (::fstat(descriptor_, &status) == 0 && !S_ISREG(status.st_mode)) {
    append(kLogHeader);
    return;
  }
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
                 "cannot write the training log '{}': {}", path, std::strerror(errno));
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
  warn_(fmt::format("cannot write the training log '{}': {}; the log ends at its last whole row (the run goes on)",
                    path_, reason));
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

}  // namespace gpstream

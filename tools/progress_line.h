// ProgressLine: progress of long work on stderr. On a terminal one line is
// redrawn in place a few times a second; otherwise (a log file, CI) a plain
// line is printed every few seconds, so logs stay readable.
#pragma once

#include <chrono>
#include <string>

namespace gpstream::cli {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled);
  ~ProgressLine();

  // Seconds since construction.
  double elapsed_seconds() const;
  // Shows `text` if it is time to (or `force`).
  void update(const std::string& text, bool force = false);
  // Ends the live line so that what follows starts on a fresh line.
  void finish();

 private:
  bool enabled_;
  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_shown_;
};

}  // namespace gpstream::cli

#include "tools/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace gpstream::cli {

ProgressLine::ProgressLine(bool enabled)
    : enabled_(enabled),
      terminal_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_shown_(start_) {}

ProgressLine::~ProgressLine() { finish(); }

double ProgressLine::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressLine::update(const std::string& text, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const auto interval = terminal_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(5000);
  if (!force && now - last_shown_ < interval) return;
  last_shown_ = now;
  if (terminal_) {
    std::fprintf(stderr, "\r%s\x1b[K", text.c_str());  // \x1b[K clears the rest of the old line
    drawn_ = true;
  } else {
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  std::fflush(stderr);
}

void ProgressLine::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

}  // namespace gpstream::cli

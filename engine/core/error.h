// Errors and argument checks shared by every gpstream library.
//
// Library code reports failures by throwing gpstream::Error. The message is
// written for the user (it names the file, row, column, option or value at
// fault); the source location is kept separately for debugging, in the way
// faiss's FAISS_THROW_IF_NOT_FMT carries file and line. Nothing in the
// libraries prints or exits: the CLI turns an Error into one line on stderr.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpstream {

class Error : public std::runtime_error {
 public:
  Error(std::string message, const char* source_file = "", int source_line = 0)
      : std::runtime_error(std::move(message)), source_file_(source_file), source_line_(source_line) {}

  // Where in gpstream's sources the error was raised ("" when unknown).
  const char* source_file() const noexcept { return source_file_; }
  int source_line() const noexcept { return source_line_; }

 private:
  const char* source_file_;
  int source_line_;
};

// A value given by the caller (an option, a parameter) that is not valid: the
// command line reports it as a usage error, Python as a ValueError.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// Thrown when a run was asked to stop (Ctrl-C, SIGTERM) before it finished.
class Cancelled : public Error {
 public:
  using Error::Error;
};

// A message names the caller's parameters by their API names in backticks
// (`overwrite`, `drop_invalid`), never in one front end's spelling: each
// front end respells them as its users write them — the command line as its
// options (--force, --drop-invalid: tools/command_line.h), Python as its
// keywords. `spelling` maps a name to that spelling; text between other
// backticks than a parameter's is left as it is.
inline std::string spell_parameters(std::string_view message,
                                    const std::function<std::string(std::string_view name)>& spelling) {
  std::string out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t open = message.find('`', from);
    const std::size_t close = open == std::string_view::npos ? open : message.find('`', open + 1);
    if (close == std::string_view::npos) break;
    const std::string_view name = message.substr(open + 1, close - open - 1);
    const bool parameter = !name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_0123456789") ==
                                                std::string_view::npos;
    out.append(message.substr(from, open - from));
    out += parameter ? spelling(name) : std::string(message.substr(open, close - open + 1));
    from = close + 1;
  }
  out.append(message.substr(from));
  return out;
}

}  // namespace gpstream

// Throws gpstream::Error with a fmt-formatted message and the source location.
#define GPSTREAM_THROW(...) throw ::gpstream::Error(::fmt::format(__VA_ARGS__), __FILE__, __LINE__)

// Throws gpstream::Error with the formatted message unless `condition` holds.
#define GPSTREAM_CHECK(condition, ...) \
  do {                                 \
    if (!(condition)) {                \
      GPSTREAM_THROW(__VA_ARGS__);     \
    }                                  \
  } while (false)

// Throws gpstream::InvalidArgument (a value the caller gave: Python's
// ValueError) with a fmt-formatted message and the source location.
#define GPSTREAM_THROW_ARGUMENT(...) throw ::gpstream::InvalidArgument(::fmt::format(__VA_ARGS__), __FILE__, __LINE__)

// Throws gpstream::InvalidArgument unless `condition` holds.
#define GPSTREAM_CHECK_ARGUMENT(condition, ...) \
  do {                                          \
    if (!(condition)) {                         \
      GPSTREAM_THROW_ARGUMENT(__VA_ARGS__);     \
    }                                           \
  } while (false)

// Helpers shared by the test suites: scratch directories, files, and running
// the gpstream binary as a user would.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace gpstream::testing {

// A fresh directory under the system temp dir, removed with its contents.
class ScratchDirectory {
 public:
  ScratchDirectory();
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const;

 private:
  std::filesystem::path path_;
};

void write_file(const std::string& path, const std::string& contents);
std::string read_file(const std::string& path);
// The rows of numbers of a CSV file with a header line.
std::vector<std::vector<double>> read_numbers(const std::string& path);
// 'path', for a shell command line.
inline std::string quote(const std::string& path) { return "'" + path + "'"; }

// Friedman1's kernel (generate friedman1's ten inputs, five of them noise),
// as train options: the model most command-line tests train.
inline const std::string kFriedman1Kernel =
    " --lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039";

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs a /bin/sh command line with its stdout and stderr captured (stdin
// from `stdin_path`, or /dev/null).
CommandResult run_command(const std::string& command_line, const std::string& stdin_path = "");
// Runs `gpstream <arguments>` (arguments are passed to /bin/sh as written)
// with standard input from `stdin_path` when given.
CommandResult run_gpstream(const std::string& arguments, const std::string& stdin_path = "");

// Starts `gpstream <arguments>` without waiting (arguments passed as they
// are, no shell), its stderr to `stderr_path` ("" for /dev/null); returns its pid.
pid_t spawn_gpstream(const std::vector<std::string>& arguments, const std::string& stderr_path = "");
// Waits for `pid`; its exit code, or 128 + the signal that ended it.
int wait_for(pid_t pid);

// "--memory B" for a budget `extra` bytes above what a gpstream process
// holds before its run (its code and libraries, which the budget counts:
// engine/core/context.h), measured once from a run's budget line.
std::string memory_above_process(std::size_t extra);

// Number of lines of text (a final line without '\n' counts).
std::size_t count_lines(const std::string& text);

}  // namespace gpstream::testing

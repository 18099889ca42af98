#include "test_support.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace gpstream::testing {

ScratchDirectory::ScratchDirectory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "gpstream-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ignored;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ignored);
  std::filesystem::remove_all(path_, ignored);
}

std::vector<std::string> ScratchDirectory::entries() const {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path_))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void write_file(const std::string& path, const std::string& contents) {
  std::ofstream stream(path, std::ios::binary);
  stream << contents;
  if (!stream) throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  std::ostringstream contents;
  contents << stream.rdbuf();
  return contents.str();
}

CommandResult run_command(const std::string& command_line, const std::string& stdin_path) {
  ScratchDirectory capture;
  const std::string out = capture.file("out");
  const std::string err = capture.file("err");
  std::string command = command_line + " >'" + out + "' 2>'" + err + "'";
  command += stdin_path.empty() ? " </dev/null" : " <'" + stdin_path + "'";
  const int status = std::system(command.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out);
  result.err = read_file(err);
  return result;
}

CommandResult run_gpstream(const std::string& arguments, const std::string& stdin_path) {
  return run_command(std::string("'") + GPSTREAM_BINARY + "' " + arguments, stdin_path);
}

pid_t spawn_gpstream(const std::vector<std::string>& arguments, const std::string& stderr_path) {
  std::vector<std::string> words = {GPSTREAM_BINARY};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  const std::string target = stderr_path.empty() ? "/dev/null" : stderr_path;
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, target.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int status = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (status != 0) throw std::runtime_error("cannot start " + words.front());
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::size_t count_lines(const std::string& text) {
  std::size_t lines = 0;
  for (const char c : text) lines += c == '\n' ? 1 : 0;
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

std::vector<std::vector<double>> read_numbers(const std::string& path) {
  std::istringstream text(read_file(path));
  std::string line;
  std::getline(text, line);
  std::vector<std::vector<double>> rows;
  while (std::getline(text, line)) {
    std::vector<double> row;
    std::istringstream fields(line);
    std::string field;
    while (std::getline(fields, field, ',')) row.push_back(std::stod(field));
    rows.push_back(row);
  }
  return rows;
}

}  // namespace gpstream::testing

namespace gpstream::testing {

std::string memory_above_process(std::size_t extra) {
  static const double process_bytes = [] {
    ScratchDirectory directory;
    const std::string data = directory.file("d.h5");
    run_gpstream("generate friedman1 --rows 50 -q -o " + quote(data));
    const CommandResult run = run_gpstream("train " + quote(data) +
                                           " --kernel se --lengthscales 1 --noise-var 0.1 "
                                           "--max-iter 1 --memory 1G -o " +
                                           quote(directory.file("m.h5")));
    // "memory budget 1.0 GiB: 19.7 MiB for the process itself"
    const std::size_t at = run.err.find(" for the process itself");
    const std::size_t start = run.err.rfind(": ", at) + 2;
    const double mebibytes = std::stod(run.err.substr(start, at - start));
    return mebibytes * 1024 * 1024;
  }();
  return " --memory " + std::to_string(static_cast<std::size_t>(process_bytes) + extra);
}

}  // namespace gpstream::testing

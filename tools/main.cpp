// gpstream: git-style front end. Every failure ends here as one line on
// stderr and a non-zero exit code: 1 for errors, 2 for usage mistakes,
// 130 when interrupted.
#include "api/process.h"
#include "tools/command_line.h"
#include "tools/commands.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>

namespace {

void print_usage(std::ostream& out) {
  out << "Usage: gpstream <command> [options]\n\n"
         "Out-of-core Gaussian-process regression.\n\nCommands:\n";
  for (const auto& command : gpstream::cli::kCommands) {
    out << "  " << command.name << std::string(12 - std::string_view(command.name).size(), ' ') << command.summary
        << "\n";
  }
  out << "\nRun 'gpstream <command> --help' for a command's options.\n";
}

}  // namespace

int main(int argc, char** argv) {
  gpstream::initialise_process(argv);
  // Started by mpirun: every rank runs this main; the ranks of one job share MPI_COMM_WORLD.
  gpstream::ProcessRanks process(argc, argv);
  gpstream::Communicator* ranks = &process.communicator();
  const bool distributed = ranks->size() > 1;
  const bool root = ranks->is_root();
  // Rank 0 speaks for the job; another rank reports only what it alone may have met. An error on one
  // rank ends every rank at once (the others would wait for it in their next collective).
  const auto fail = [&](int code) {
    if (distributed && code != 130) {
      std::cerr.flush();
      // Rank 0 may be saying the same error (every rank parses the same options): give it time to,
      // since the abort kills every rank at once.
      if (!root) std::this_thread::sleep_for(std::chrono::seconds(1));
      process.abort_job(code);
    }
    return code;
  };
  // A message in one write: the ranks of a job share stderr, and a message written piece by piece
  // interleaves with another rank's.
  const auto say = [](const std::string& message) {
    const std::string line = gpstream::cli::for_command_line(message) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  };
  const std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) {
    print_usage(std::cerr);
    return 2;
  }
  std::string name = words.front();
  std::vector<std::string> args(words.begin() + 1, words.end());
  if (name == "--help" || name == "-h") {
    print_usage(std::cout);
    return 0;
  }
  if (name == "--version") {
    std::cout << "gpstream " GPSTREAM_VERSION " (OpenBLAS kernels: " << gpstream::blas_kernels() << ")\n";
    return 0;
  }
  if (name == "help" && !args.empty()) {
    name = args.front();
    args = {"--help"};
  }
  for (const auto& command : gpstream::cli::kCommands) {
    if (name != command.name) continue;
    // Which rank says it, when there are several.
    const std::string who = distributed ? fmt::format(" (rank {} of {})", ranks->rank(), ranks->size()) : "";
    try {
      if (!distributed) return command.run(args);
      if (command.run_distributed == nullptr) {
        throw gpstream::cli::UsageError(fmt::format(
            "'{}' runs as one process: run it without mpirun (only train and predict run on several ranks)", name));
      }
      return command.run_distributed(args, *ranks);
    } catch (const gpstream::cli::UsageError& error) {
      // Every rank parses the same options: rank 0 says it for all.
      if (root) say(fmt::format("gpstream {}: {} (see 'gpstream {} --help')", name, error.what(), name));
      return fail(2);
    } catch (const gpstream::Cancelled& error) {
      if (root) say(fmt::format("gpstream {}: {}", name, error.what()));
      return fail(130);
    } catch (const gpstream::MemoryBudgetExceeded& error) {
      say(fmt::format("gpstream {}{}: error: {} (or raise --memory)", name, who, error.what()));
      return fail(1);
    } catch (const gpstream::Error& error) {
      std::string message = fmt::format("gpstream {}{}: error: {}", name, who, error.what());
      if (std::getenv("GPSTREAM_DEBUG") != nullptr && *error.source_file() != '\0') {
        message += fmt::format(" [{}:{}]", error.source_file(), error.source_line());
      }
      say(message);
      return fail(1);
    } catch (const std::bad_alloc&) {
      say(fmt::format("gpstream {}{}: error: out of memory (lower --memory or free some)", name, who));
      return fail(1);
    } catch (const std::exception& error) {
      say(fmt::format("gpstream {}{}: error: {}", name, who, error.what()));
      return fail(1);
    }
  }
  std::cerr << "gpstream: '" << name << "' is not a command\n\n";
  print_usage(std::cerr);
  return 2;
}

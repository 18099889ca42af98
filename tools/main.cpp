// gpstream: git-style front end. Every failure ends here as one line on
// stderr and a non-zero exit code: 1 for errors, 2 for usage mistakes,
// 130 when interrupted.
#include "engine/core/context.h"
#include "engine/core/error.h"
#include "storage/hdf5/hdf5_handle.h"
#include "engine/linalg/blas_core.h"
#include "tools/command_line.h"
#include "tools/commands.h"

#include <cstdlib>
#include <iostream>
#include <string_view>

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
  gpstream::select_blas_core(argv);
  gpstream::hdf5::initialise_library();
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
    std::cout << "gpstream " GPSTREAM_VERSION " (OpenBLAS kernels: " << gpstream::blas_core_name() << ")\n";
    return 0;
  }
  if (name == "help" && !args.empty()) {
    name = args.front();
    args = {"--help"};
  }
  for (const auto& command : gpstream::cli::kCommands) {
    if (name != command.name) continue;
    try {
      return command.run(args);
    } catch (const gpstream::cli::UsageError& error) {
      std::cerr << "gpstream " << name << ": " << error.what() << " (see 'gpstream " << name << " --help')\n";
      return 2;
    } catch (const gpstream::Cancelled& error) {
      std::cerr << "gpstream " << name << ": " << error.what() << "\n";
      return 130;
    } catch (const gpstream::MemoryBudgetExceeded& error) {
      std::cerr << "gpstream " << name << ": error: " << error.what() << " (or raise --memory)\n";
      return 1;
    } catch (const gpstream::Error& error) {
      std::cerr << "gpstream " << name << ": error: " << error.what();
      if (std::getenv("GPSTREAM_DEBUG") != nullptr && *error.source_file() != '\0') {
        std::cerr << " [" << error.source_file() << ":" << error.source_line() << "]";
      }
      std::cerr << "\n";
      return 1;
    } catch (const std::bad_alloc&) {
      std::cerr << "gpstream " << name << ": error: out of memory (lower --memory or free some)\n";
      return 1;
    } catch (const std::exception& error) {
      std::cerr << "gpstream " << name << ": error: " << error.what() << "\n";
      return 1;
    }
  }
  std::cerr << "gpstream: '" << name << "' is not a command\n\n";
  print_usage(std::cerr);
  return 2;
}

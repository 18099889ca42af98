// The gpstream subcommands, one file each (command_<name>.cpp).
#pragma once

#include "api/process.h"

#include <string>
#include <vector>

namespace gpstream::cli {

// Each returns the process exit code; errors are thrown (see main.cpp).
int run_convert(const std::vector<std::string>& args);
int run_generate(const std::vector<std::string>& args);
int run_info(const std::vector<std::string>& args);
int run_hyper(const std::vector<std::string>& args);
// On the ranks of `mpirun -np P gpstream train …` (one rank: a single process).
int run_train(const std::vector<std::string>& args, Communicator& ranks);
int run_train_alone(const std::vector<std::string>& args);
int run_predict(const std::vector<std::string>& args, Communicator& ranks);
int run_predict_alone(const std::vector<std::string>& args);

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
  // Under mpirun with more than one rank; null: the command runs as one process only.
  int (*run_distributed)(const std::vector<std::string>& args, Communicator& ranks);
};

inline constexpr Command kCommands[] = {
    {"convert", "convert a CSV file into a chunked HDF5 dataset", run_convert, nullptr},
    {"generate", "write a synthetic dataset (Friedman1) as HDF5 or CSV", run_generate, nullptr},
    {"info", "describe a gpstream file", run_info, nullptr},
    {"hyper", "learn kernel hyperparameters by marginal likelihood on a random subset", run_hyper, nullptr},
    {"train", "train an exact GP (GBCD and reference solvers), with checkpoints", run_train_alone, run_train},
    {"predict", "predict with a trained model; report RMSE when targets are known", run_predict_alone, run_predict},
};

}  // namespace gpstream::cli

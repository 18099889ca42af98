// The gpstream subcommands, one file each (command_<name>.cpp).
#pragma once

#include <string>
#include <vector>

namespace gpstream::cli {

// Each returns the process exit code; errors are thrown (see main.cpp).
int run_convert(const std::vector<std::string>& args);
int run_generate(const std::vector<std::string>& args);
int run_info(const std::vector<std::string>& args);
int run_hyper(const std::vector<std::string>& args);
int run_train(const std::vector<std::string>& args);
int run_predict(const std::vector<std::string>& args);

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

inline constexpr Command kCommands[] = {
    {"convert", "convert a CSV file into a chunked HDF5 dataset", run_convert},
    {"generate", "write a synthetic dataset (Friedman1) as HDF5 or CSV", run_generate},
    {"info", "describe a gpstream file", run_info},
    {"hyper", "learn kernel hyperparameters by marginal likelihood on a random subset", run_hyper},
    {"train", "train an exact GP (GBCD and reference solvers), with checkpoints", run_train},
    {"predict", "predict with a trained model; report RMSE when targets are known", run_predict},
};

}  // namespace gpstream::cli

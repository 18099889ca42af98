// The benchmark problems shared by the bench programs: the GBCD paper's
// datasets (../shared/data: kin40k, calhouse, with their reference
// hyperparameters) and a generated Friedman1, standardised.
#pragma once

#include "engine/kernels/kernel.h"

#include <boost/program_options.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace gpstream::bench {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start);

struct Problem {
  std::string name;
  std::vector<double> x, y, test_x, test_y;  // standardised
  std::size_t d = 0;
  KernelHyperparameters hyper;  // the reference values of ../shared/data/hyper
};

// A real dataset: a seeded random subset of `subset` training rows (all of
// them when subset ≥ n), the full test set, standardised as the reference
// hyperparameter file says.
Problem load_real(const std::string& name, const std::filesystem::path& data, std::size_t subset, std::uint64_t seed);

// Friedman1 as in the paper: noisy training targets, noise-free test targets,
// standardised with the training set's own statistics.
Problem make_friedman1(const std::filesystem::path& data, std::size_t rows, std::size_t test_rows);

// A CSV of numbers with a header, the last column the target (the datasets
// without a reference file: bcef, sgemm): x (n×d) and y, each column
// standardised by its own mean and (population) standard deviation.
void read_standardised(const std::filesystem::path& path, std::vector<double>& x, std::vector<double>& y,
                       std::size_t& d);

// `rows` random rows of such a dataset (the seed fixed at 7: every likelihood
// bench compares on the same subset), standardised over the whole file.
void read_standardised_subset(const std::filesystem::path& path, std::size_t rows, std::vector<double>& x,
                              std::vector<double>& y, std::size_t& d);

// √Σ v².
double euclidean_norm(const std::vector<double>& v);

// Parses a bench program's command line; prints the options and returns
// false when --help was given.
bool parse_bench_options(int argc, char** argv, const boost::program_options::options_description& options,
                         boost::program_options::variables_map& values);

}  // namespace gpstream::bench

#include "bench/bench_problems.h"

#include "engine/data/friedman1.h"
#include "engine/data/row_source_utilities.h"
#include "engine/data/standardisation.h"
#include "storage/csv/csv_table.h"
#include "storage/hyper/hyperparameter_file.h"

#include <boost/algorithm/string.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>

namespace gpstream::bench {

namespace fs = std::filesystem;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void read_standardised(const std::filesystem::path& path, std::vector<double>& x, std::vector<double>& y,
                       std::size_t& d) {
  std::ifstream stream(path);
  std::string line;
  std::getline(stream, line);
  d = static_cast<std::size_t>(std::count(line.begin(), line.end(), ','));
  while (std::getline(stream, line)) {
    std::stringstream fields(line);
    std::string field;
    for (std::size_t k = 0; k <= d && std::getline(fields, field, ','); ++k)
      (k < d ? x : y).push_back(std::stod(field));
  }
  const std::size_t n = y.size();
  for (std::size_t l = 0; l <= d; ++l) {
    double mean = 0, squares = 0;
    const auto at = [&](std::size_t i) -> double& { return l < d ? x[i * d + l] : y[i]; };
    for (std::size_t i = 0; i < n; ++i) mean += at(i) / static_cast<double>(n);
    for (std::size_t i = 0; i < n; ++i) squares += (at(i) - mean) * (at(i) - mean) / static_cast<double>(n);
    const double spread = squares > 0 ? std::sqrt(squares) : 1.0;
    for (std::size_t i = 0; i < n; ++i) at(i) = (at(i) - mean) / spread;
  }
}

void read_standardised_subset(const std::filesystem::path& path, std::size_t rows, std::vector<double>& x,
                              std::vector<double>& y, std::size_t& d) {
  std::vector<double> all_x, all_y;
  read_standardised(path, all_x, all_y, d);
  x.clear();
  y.clear();
  for (const std::size_t i : random_row_subset(all_y.size(), rows, 7)) {
    x.insert(x.end(), all_x.begin() + static_cast<std::ptrdiff_t>(i * d),
             all_x.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
    y.push_back(all_y[i]);
  }
}

double euclidean_norm(const std::vector<double>& v) {
  double sum = 0;
  for (const double value : v) sum += value * value;
  return std::sqrt(sum);
}

Problem load_real(const std::string& name, const fs::path& data, std::size_t subset, std::uint64_t seed) {
  Problem problem;
  problem.name = name;
  const HyperparameterFile hyper = read_hyperparameter_file((data / "hyper" / (name + ".json")).string());
  problem.hyper = hyper.prior.kernel;
  problem.d = problem.hyper.lengthscales.size();
  const auto header_of = [](const fs::path& csv) {
    std::ifstream stream(csv);
    std::string line;
    std::getline(stream, line);
    std::vector<std::string> names;
    boost::split(names, line, boost::is_any_of(","));
    for (auto& n : names) boost::trim(n);
    return names;
  };
  const fs::path train_csv = data / (name + "_train.csv"), test_csv = data / (name + "_test.csv");
  std::vector<std::string> names = header_of(train_csv);
  const std::string target = names.back();
  names.pop_back();
  CsvInputs train = read_csv_inputs(train_csv.string(), names, target);
  CsvInputs test = read_csv_inputs(test_csv.string(), names, target);
  std::vector<std::size_t> order(train.rows);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 random(seed);
  std::shuffle(order.begin(), order.end(), random);
  order.resize(std::min(subset, train.rows));
  std::sort(order.begin(), order.end());
  for (const std::size_t i : order) {
    problem.x.insert(problem.x.end(), train.x.begin() + static_cast<long>(i * problem.d),
                     train.x.begin() + static_cast<long>((i + 1) * problem.d));
    problem.y.push_back((*train.y)[i]);
  }
  problem.test_x = std::move(test.x);
  problem.test_y = std::move(*test.y);
  const Standardisation& s = *hyper.standardisation;
  s.apply_to_rows(problem.x.data(), problem.y.size(), problem.d);
  s.apply_to_targets(problem.y.data(), problem.y.size());
  s.apply_to_rows(problem.test_x.data(), problem.test_y.size(), problem.d);
  s.apply_to_targets(problem.test_y.data(), problem.test_y.size());
  return problem;
}

Problem make_friedman1(const fs::path& data, std::size_t rows, std::size_t test_rows) {
  Problem problem;
  problem.name = "friedman1";
  problem.d = Friedman1Generator::kColumns;
  problem.hyper = read_hyperparameter_file((data / "hyper" / "friedman1.json").string()).prior.kernel;
  problem.x.resize(rows * problem.d);
  problem.y.resize(rows);
  Friedman1Generator(1, 1.0).generate(rows, problem.x.data(), problem.y.data());
  problem.test_x.resize(test_rows * problem.d);
  problem.test_y.resize(test_rows);
  Friedman1Generator(2, 0.0).generate(test_rows, problem.test_x.data(), problem.test_y.data());
  Standardisation s;
  s.x_mean.assign(problem.d, 0.0);
  s.x_std.assign(problem.d, 0.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t l = 0; l < problem.d; ++l) s.x_mean[l] += problem.x[i * problem.d + l] / static_cast<double>(rows);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t l = 0; l < problem.d; ++l)
      s.x_std[l] += std::pow(problem.x[i * problem.d + l] - s.x_mean[l], 2) / static_cast<double>(rows);
  for (double& v : s.x_std) v = std::sqrt(v);
  for (const double v : problem.y) s.y_mean += v / static_cast<double>(rows);
  double variance = 0;
  for (const double v : problem.y) variance += (v - s.y_mean) * (v - s.y_mean) / static_cast<double>(rows);
  s.y_std = std::sqrt(variance);
  s.apply_to_rows(problem.x.data(), rows, problem.d);
  s.apply_to_targets(problem.y.data(), rows);
  s.apply_to_rows(problem.test_x.data(), test_rows, problem.d);
  s.apply_to_targets(problem.test_y.data(), test_rows);
  return problem;
}

bool parse_bench_options(int argc, char** argv, const boost::program_options::options_description& options,
                         boost::program_options::variables_map& values) {
  boost::program_options::store(boost::program_options::parse_command_line(argc, argv, options), values);
  if (values.count("help") != 0) {
    std::cout << options << "\n";
    return false;
  }
  boost::program_options::notify(values);
  return true;
}

}  // namespace gpstream::bench

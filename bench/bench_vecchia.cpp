// How well the Vecchia likelihood (engine/hyper/vecchia_likelihood.h)
// estimates the exact one: on a random subset of 10,000 rows of each real
// dataset, where a Cholesky factor of K̄ still gives the exact −log p and its
// gradient, both are computed at the hyperparameters learned on 2,000 of
// those rows, for each kernel family and several neighbour counts m. Prints
// the relative errors of the value and of the gradient (the direction the
// search follows) and the time of each; writes vecchia.csv.
#include "bench/bench_problems.h"
#include "engine/core/context.h"
#include "engine/hyper/hyperparameter_search.h"
#include "engine/hyper/vecchia_likelihood.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace po = boost::program_options;
using namespace gpstream;
using namespace gpstream::bench;

int main(int argc, char** argv) {
  po::options_description options("bench_vecchia");
  std::string data, out, datasets, neighbours;
  std::size_t rows = 10000;
  options.add_options()("data", po::value(&data)->required(), "the shared data directory")(
      "out", po::value(&out)->required(), "output directory")(
      "datasets", po::value(&datasets)->default_value("bcef,sgemm,kin40k"), "comma-separated")(
      "rows", po::value(&rows)->default_value(10000), "rows of the subset")(
      "neighbours", po::value(&neighbours)->default_value("10,20,30,50"), "comma-separated m");
  po::variables_map values;
  if (!parse_bench_options(argc, argv, options, values)) return 0;
  std::ofstream csv(std::filesystem::path(out) / "vecchia.csv");
  csv << "dataset,kernel,rows,neighbours,exact_value,vecchia_value,value_relative_error,gradient_relative_error,"
         "gradient_cosine,exact_seconds,vecchia_seconds\n";
  fmt::print("{:<7} {:<9} {:>4} {:>14} {:>14} {:>10} {:>10} {:>8} {:>8} {:>8}\n", "dataset", "kernel", "m",
             "exact -log p", "vecchia", "rel.err", "grad err", "cosine", "exact s", "vecchia s");
  std::stringstream names(datasets);
  for (std::string name; std::getline(names, name, ',');) {
    std::vector<double> x, y;
    std::size_t d = 0;
    read_standardised_subset(std::filesystem::path(data) / (name + "_train.csv"), rows, x, y, d);
    Context context;
    for (const KernelType type : {KernelType::matern12, KernelType::squared_exponential_ard}) {
      // The hyperparameters a user's subset search would find (2,000 of the rows).
      HyperparameterSearchOptions search;
      search.kernel = type;
      search.restarts = 0;
      const std::size_t small = std::min<std::size_t>(2000, y.size());
      const HyperparameterSearchResult learned =
          learn_hyperparameters(context, x.data(), std::span(y).first(small), d, search);
      const KernelHyperparameters& h = learned.hyperparameters;
      auto start = Clock::now();
      MarginalLikelihood exact;
      {
        const ScopedBlasThreads all_cores = context.parallel_blas();
        exact = ExactLikelihood(x.data(), y, d).evaluate(h, {});
      }
      const double exact_seconds = seconds_since(start);
      std::stringstream counts(neighbours);
      for (std::string count; std::getline(counts, count, ',');) {
        start = Clock::now();
        VecchiaLikelihood vecchia(context, x.data(), y, d, {}, {.neighbours = std::stoul(count), .seed = 1});
        vecchia.condition_on(h);
        const MarginalLikelihood estimate = vecchia.evaluate(h, {});
        const double vecchia_seconds = seconds_since(start);
        std::vector<double> difference(exact.gradient.size());
        double dot = 0;
        for (std::size_t j = 0; j < difference.size(); ++j) {
          difference[j] = estimate.gradient[j] - exact.gradient[j];
          dot += estimate.gradient[j] * exact.gradient[j];
        }
        const double value_error = std::abs(estimate.value - exact.value) / std::abs(exact.value);
        const double gradient_error = euclidean_norm(difference) / euclidean_norm(exact.gradient);
        const double cosine = dot / (euclidean_norm(estimate.gradient) * euclidean_norm(exact.gradient));
        fmt::print("{:<7} {:<9} {:>4} {:>14.2f} {:>14.2f} {:>10.2e} {:>10.2e} {:>8.4f} {:>8.1f} {:>8.2f}\n", name,
                   kernel_type_name(type), count, exact.value, estimate.value, value_error, gradient_error, cosine,
                   exact_seconds, vecchia_seconds);
        csv << fmt::format("{},{},{},{},{:.10g},{:.10g},{:.4e},{:.4e},{:.6f},{:.2f},{:.3f}\n", name,
                           kernel_type_name(type), y.size(), count, exact.value, estimate.value, value_error,
                           gradient_error, cosine, exact_seconds, vecchia_seconds);
      }
    }
  }
  return 0;
}

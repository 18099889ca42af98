// How well the all-rows gradient's stochastic estimate
// (engine/hyper/stochastic_gradient.h) matches the exact gradient: on a
// random subset of 10,000 rows of each real dataset, where a Cholesky factor
// of K̄ still gives the exact −log p and its gradient, both are computed at
// the hyperparameters learned on 2,000 of those rows (as bench_vecchia does),
// for several probe counts t and solve tolerances (the probes', and α's),
// over a few probe seeds.
// Prints the relative error of the gradient, its cosine with the exact one,
// how the error compares with the estimate's own covariance (z², about 1
// when it is calibrated), the BCD iterations and the time of each; writes
// stochastic_gradient.csv.
#include "bench/bench_problems.h"
#include "engine/core/context.h"
#include "engine/data/in_memory_row_source.h"
#include "engine/hyper/hyperparameter_search.h"
#include "engine/hyper/stochastic_gradient.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace po = boost::program_options;
using namespace gpstream;
using namespace gpstream::bench;

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> words;
  std::stringstream stream(text);
  for (std::string word; std::getline(stream, word, ',');) words.push_back(word);
  return words;
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description options("bench_stochastic_gradient");
  std::string data, out, datasets, kernels, probes, tolerances, alpha_tolerances;
  std::size_t rows = 10000, seeds = 3, features = StochasticGradientOptions{}.features;
  options.add_options()("data", po::value(&data)->required(), "the shared data directory")(
      "out", po::value(&out)->required(), "output directory")(
      "datasets", po::value(&datasets)->default_value("kin40k,sgemm,bcef"), "comma-separated")(
      "kernels", po::value(&kernels)->default_value("rbf,matern32"), "comma-separated")(
      "rows", po::value(&rows)->default_value(10000), "rows of the subset")(
      "probes", po::value(&probes)->default_value("8,16,32"), "comma-separated t")(
      "tolerances", po::value(&tolerances)->default_value("1e-2,1e-3"), "comma-separated probe solve tolerances")(
      "alpha-tolerances", po::value(&alpha_tolerances)->default_value("1e-4"), "comma-separated tolerances of α's")(
      "seeds", po::value(&seeds)->default_value(3), "probe seeds per setting")(
      "features", po::value(&features)->default_value(features), "random Fourier features per probe")(
      "pathwise", "probes drawn from the GP's prior by random features, not Hutchinson's +-1");
  po::variables_map values;
  if (!parse_bench_options(argc, argv, options, values)) return 0;
  std::ofstream csv(std::filesystem::path(out) / "stochastic_gradient.csv");
  csv << "dataset,kernel,rows,probes,tolerance,alpha_tolerance,seed,gradient_norm,relative_error,cosine,z_squared,iterations,"
         "exact_seconds,solve_seconds,seconds\n";
  fmt::print("{:<7} {:<9} {:>3} {:>7} {:>7} {:>4} {:>10} {:>9} {:>8} {:>7} {:>6} {:>8} {:>8} {:>8}\n", "dataset",
             "kernel", "t", "tol", "α tol", "seed", "|grad|", "rel.err", "cosine", "z^2", "iter", "exact s", "solve s",
             "total s");
  for (const std::string& name : split(datasets)) {
    std::vector<double> x, y;
    std::size_t d = 0;
    read_standardised_subset(std::filesystem::path(data) / (name + "_train.csv"), rows, x, y, d);
    Context context(Context::Settings{.memory_budget_bytes = std::size_t{8} << 30});
    for (const std::string& kernel_name : split(kernels)) {
      // The hyperparameters a user's subset search would find (2,000 of the rows).
      HyperparameterSearchOptions search;
      search.kernel = parse_kernel_type(kernel_name);
      const std::size_t small = std::min<std::size_t>(2000, y.size());
      const KernelHyperparameters h =
          learn_hyperparameters(context, x.data(), std::span(y).first(small), d, search).hyperparameters;
      auto start = Clock::now();
      MarginalLikelihood exact;
      {
        const ScopedBlasThreads all_cores = context.parallel_blas();
        exact = ExactLikelihood(x.data(), y, d).evaluate(h, {});
      }
      const double exact_seconds = seconds_since(start);
      InMemoryRowSource source(x, y, d);
      for (const std::string& t : split(probes)) {
        for (const std::string& tolerance : split(tolerances)) {
          for (const std::string& alpha_tolerance : split(alpha_tolerances)) {
            for (std::size_t seed = 1; seed <= seeds; ++seed) {
              StochasticGradientOptions settings;
              settings.probes = std::stoul(t);
              settings.tolerance = std::stod(tolerance);
              settings.alpha_tolerance = std::stod(alpha_tolerance);
              settings.seed = seed;
              settings.features = features;
              if (values.count("pathwise") != 0) settings.probe_kind = StochasticGradientOptions::Probes::pathwise;
              StochasticGradient estimator(context, source, RowPartition::whole(y.size()), settings);
              const GradientEstimate estimate = estimator.estimate(h);
              const std::size_t p = exact.gradient.size();
              std::vector<double> difference(p);
              double dot = 0, z_squared = 0;
              std::size_t varying = 0;  // components the probes move (an input whose lengthscale is huge: none)
              for (std::size_t j = 0; j < p; ++j) {
                difference[j] = estimate.gradient[j] - exact.gradient[j];
                dot += estimate.gradient[j] * exact.gradient[j];
                if (estimate.covariance[j * p + j] > 0.0) {
                  z_squared += difference[j] * difference[j] / estimate.covariance[j * p + j];
                  ++varying;
                }
              }
              z_squared /= static_cast<double>(std::max<std::size_t>(varying, 1));
              if (std::getenv("BENCH_COMPONENTS") != nullptr) {
                for (std::size_t j = 0; j < p; ++j)
                  fmt::print("  component {}: exact {:.6g} estimate {:.6g} se {:.3g}\n", j, exact.gradient[j],
                             estimate.gradient[j], std::sqrt(estimate.covariance[j * p + j]));
              }
              const double relative = euclidean_norm(difference) / euclidean_norm(exact.gradient);
              const double cosine = dot / (euclidean_norm(estimate.gradient) * euclidean_norm(exact.gradient));
              fmt::print(
                  "{:<7} {:<9} {:>3} {:>7} {:>7} {:>4} {:>10.3g} {:>9.2e} {:>8.4f} {:>7.2f} {:>6} {:>8.1f} {:>8.1f} "
                  "{:>8.1f}\n",
                  name, kernel_name, t, tolerance, alpha_tolerance, seed, euclidean_norm(exact.gradient), relative,
                  cosine, z_squared, estimate.iterations, exact_seconds, estimate.solve_seconds, estimate.seconds);
              std::fflush(stdout);
              csv << fmt::format("{},{},{},{},{},{},{},{:.6g},{:.4e},{:.6f},{:.3f},{},{:.2f},{:.2f},{:.2f}\n", name,
                                 kernel_name, y.size(), t, tolerance, alpha_tolerance, seed,
                                 euclidean_norm(exact.gradient), relative, cosine, z_squared, estimate.iterations,
                                 exact_seconds, estimate.solve_seconds, estimate.seconds);
            }
          }
        }
      }
    }
  }
  return 0;
}

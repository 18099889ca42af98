// Kernel entries per second per core, double against single precision
// (issue 58's roofline probe): for each stationary family of the registry
// and a sum, on one thread, blocks of 500 rows (an active set) against 256
// (a tile), as the BCD family's products compute them —
// Kernel::evaluate_entrywise in double, Kernel::evaluate_single in float —
// at d inputs of random data in lengthscale units. Prints the table and
// writes kernel_entries.csv.
#include "bench/bench_problems.h"
#include "engine/kernels/kernel.h"

#include <fmt/format.h>
#include <tbb/global_control.h>

#include <fstream>
#include <random>

namespace po = boost::program_options;
using namespace gpstream;
using namespace gpstream::bench;

namespace {

// Entries per second of `evaluate` on blocks a × b, repeated for at least `seconds`.
template <typename Evaluate>
double entries_per_second(std::size_t entries, double seconds, Evaluate evaluate) {
  evaluate();  // warm
  std::size_t repeats = 0;
  const auto start = Clock::now();
  do {
    evaluate();
    ++repeats;
  } while (seconds_since(start) < seconds);
  return static_cast<double>(entries * repeats) / seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  po::options_description options("bench_kernel_entries");
  std::string out;
  std::size_t d = 8;
  double seconds = 1.0;
  options.add_options()("out", po::value(&out)->required(), "output directory")(
      "inputs", po::value(&d)->default_value(8), "inputs d")("seconds", po::value(&seconds)->default_value(1.0),
                                                             "seconds per measurement");
  po::variables_map values;
  if (!parse_bench_options(argc, argv, options, values)) return 0;
  const tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
  constexpr std::size_t kActive = 500, kTile = 256;
  std::mt19937_64 random(3);
  std::normal_distribution<double> normal;
  std::vector<double> a(kActive * d), b(kTile * d);
  for (double& value : a) value = normal(random);
  for (double& value : b) value = normal(random);
  std::vector<KernelHyperparameters> kernels;
  for (const KernelType type : kernel_types()) {
    if (default_lengthscale_count(type, d) == 0) continue;  // the stationary families
    kernels.push_back({type, {1.0}, 1.0, 0.1});
  }
  kernels.push_back({KernelType::matern32, {0.3}, 1.0, 0.1, {{KernelType::matern32, {3.0}, 0.5}}});
  std::ofstream csv(std::filesystem::path(out) / "kernel_entries.csv");
  csv << "kernel,inputs,double_entries_per_second,single_entries_per_second,ratio\n";
  fmt::print("entries per second on one core, blocks of {} x {} at d = {}\n", kActive, kTile, d);
  fmt::print("{:<24} {:>12} {:>12} {:>7}\n", "kernel", "double", "single", "ratio");
  std::vector<double> exact(kActive * kTile);
  std::vector<float> single(kActive * kTile);
  for (const KernelHyperparameters& h : kernels) {
    const auto kernel = make_kernel(h, d);
    PreparedRows pa, pb;
    kernel->prepare(a.data(), kActive, pa);
    kernel->prepare(b.data(), kTile, pb);
    const double in_double = entries_per_second(
        exact.size(), seconds, [&] { kernel->evaluate_entrywise(pa.view(d), pb.view(d), exact.data()); });
    const double in_single = entries_per_second(
        single.size(), seconds, [&] { kernel->evaluate_single(pa.view(d), pb.view(d), single.data()); });
    fmt::print("{:<24} {:>12.3g} {:>12.3g} {:>6.2f}x\n", kernel->name(), in_double, in_single, in_single / in_double);
    csv << fmt::format("{},{},{:.4g},{:.4g},{:.3f}\n", kernel->name(), d, in_double, in_single, in_single / in_double);
  }
}

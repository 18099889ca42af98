// I/O benchmark for the foundation (issue: CSV conversion and row streaming).
//
// Measures, in one run, and prints a table and writes CSV:
//   1. `gpstream convert` throughput (MB/s of CSV, rows/s) and peak resident
//      memory, on kin40k_train.csv (when ../shared/data exists) and on a
//      generated Friedman1 CSV of --rows rows (default 10 million, ~2.3 GB);
//   2. block-streaming throughput of /X through Hdf5RowSource + RowBlockStream
//      beside a raw sequential read() of the same file;
//   3. the chunk-size trade-off: streaming and 500-row random gathers for
//      several chunk sizes (the basis of the default chunk size).
// The files are read from the page cache (the machine has the RAM for them),
// so the streaming figures measure gpstream's own overhead, not the disk.
#include "bench/bench_problems.h"
#include "engine/data/row_block_stream.h"
#include "storage/dataset/hdf5_row_source.h"

#include "engine/linalg/blas_core.h"

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct ChildRun {
  double seconds = 0;
  double peak_resident_mib = 0;
};

// Runs a command, waits for it, and returns its wall time and peak RSS.
ChildRun run_child(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  const auto start = Clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
    throw std::runtime_error("cannot start " + command[0]);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(fmt::format("command failed: {}", fmt::join(command, " ")));
  }
  return {seconds_since(start), static_cast<double>(usage.ru_maxrss) / 1024.0};
}

// Reads a whole file sequentially with read() into one 8 MiB buffer.
double raw_read_seconds(const std::string& path) {
  std::vector<char> buffer(8u << 20);
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  const auto start = Clock::now();
  while (::read(fd, buffer.data(), buffer.size()) > 0) {
  }
  const double elapsed = seconds_since(start);
  ::close(fd);
  return elapsed;
}

// Streams /X (no targets) block by block, as a solver does once per
// iteration: `passes` passes over one stream, touching every block so that
// no read can be skipped. Returns the seconds of the fastest pass.
double best_pass_seconds(const std::string& path, std::size_t memory_budget, int passes, double* checksum) {
  gpstream::Hdf5RowSource source(path);
  const std::size_t block_rows = gpstream::block_rows_for_budget(memory_budget, source.columns(), 2,
                                                                 source.preferred_block_alignment(), source.rows());
  gpstream::RowBlockStream stream(source, {.block_rows = block_rows, .prefetch_depth = 1, .with_targets = false});
  double best = 1e300;
  for (int pass = 0; pass < passes; ++pass) {
    stream.rewind();
    const auto start = Clock::now();
    double sum = 0;
    while (const gpstream::RowBlock* block = stream.next()) sum += block->x[block->count * source.columns() - 1];
    best = std::min(best, seconds_since(start));
    *checksum += sum;
  }
  return best;
}

double gather_milliseconds(const std::string& path, std::size_t rows_per_gather, int repeats) {
  gpstream::Hdf5RowSource source(path);
  std::mt19937_64 random(1);
  std::uniform_int_distribution<std::size_t> pick(0, source.rows() - 1);
  std::vector<std::size_t> indices(rows_per_gather);
  std::vector<double> x(rows_per_gather * source.columns());
  double total = 0;
  for (int r = 0; r < repeats; ++r) {
    for (std::size_t& index : indices) index = pick(random);
    const auto start = Clock::now();
    source.gather_rows(indices, x.data(), nullptr);
    total += seconds_since(start);
  }
  return 1000.0 * total / repeats;
}

struct Row {
  std::string benchmark, dataset, metric;
  double value;
  std::string unit;
};

}  // namespace

int main(int argc, char** argv) {
  gpstream::select_blas_core(argv);
  namespace po = boost::program_options;
  std::string gpstream_binary, data_dir, work_dir, csv_out;
  std::uint64_t rows = 10'000'000;
  int repeats = 3;
  po::options_description options("bench_io options");
  // clang-format off
  options.add_options()("help,h", "show this help")
      ("gpstream", po::value(&gpstream_binary)->required(), "path of the gpstream binary")
      ("data", po::value(&data_dir)->default_value("../shared/data"), "directory with kin40k_train.csv (skipped if absent)")
      ("work", po::value(&work_dir)->default_value("out/bench"), "scratch directory for generated files")
      ("rows", po::value(&rows)->default_value(rows), "rows of the generated Friedman1 CSV")
      ("repeats", po::value(&repeats)->default_value(repeats), "repetitions of each timing (the best is reported)")
      ("csv", po::value(&csv_out)->default_value("out/bench/io.csv"), "where to write the results");
  // clang-format on
  po::variables_map values;
  if (!gpstream::bench::parse_bench_options(argc, argv, options, values)) return 0;
  fs::create_directories(work_dir);
  std::vector<Row> results;
  auto report = [&](Row row) {
    fmt::print("{:<28} {:<22} {:<26} {:>12.3f} {}\n", row.benchmark, row.dataset, row.metric, row.value, row.unit);
    std::fflush(stdout);
    results.push_back(std::move(row));
  };
  fmt::print("{:<28} {:<22} {:<26} {:>12} {}\n", "benchmark", "dataset", "metric", "value", "unit");

  // 1. Conversion.
  auto convert = [&](const std::string& csv, const std::string& name) {
    const std::string h5 = (fs::path(work_dir) / (name + ".h5")).string();
    const double csv_mb = static_cast<double>(fs::file_size(csv)) / 1e6;
    ChildRun best{1e300, 0};
    for (int r = 0; r < repeats; ++r) {
      const ChildRun run = run_child({gpstream_binary, "convert", csv, "-o", h5, "--force", "--quiet"});
      best.seconds = std::min(best.seconds, run.seconds);
      best.peak_resident_mib = std::max(best.peak_resident_mib, run.peak_resident_mib);
    }
    const double n = static_cast<double>(gpstream::read_dataset_description(h5).rows);
    report({"convert", name, "CSV size", csv_mb, "MB"});
    report({"convert", name, "wall time", best.seconds, "s"});
    report({"convert", name, "throughput", csv_mb / best.seconds, "MB/s of CSV"});
    report({"convert", name, "rows per second", n / best.seconds / 1e6, "million rows/s"});
    report({"convert", name, "peak resident memory", best.peak_resident_mib, "MiB"});
    return h5;
  };
  const fs::path kin40k = fs::path(data_dir) / "kin40k_train.csv";
  if (fs::exists(kin40k)) {
    convert(kin40k.string(), "kin40k_train");
  } else {
    fmt::print("(skipping kin40k: {} not found)\n", kin40k.string());
  }
  const std::string friedman_csv = (fs::path(work_dir) / fmt::format("friedman1_{}.csv", rows)).string();
  if (!fs::exists(friedman_csv)) {
    run_child({gpstream_binary, "generate", "friedman1", "--rows", std::to_string(rows), "--seed", "1", "-o",
               friedman_csv, "--quiet"});
  }
  const std::string friedman_h5 = convert(friedman_csv, fmt::format("friedman1_{}", rows));

  // 2. Streaming /X against a raw read of the same file.
  const std::size_t budget = 64u << 20;  // blocks of ~32 MiB: the scale a solver streams at
  double checksum = 0;
  raw_read_seconds(friedman_h5);  // warm the page cache
  double best_raw = 1e300;
  for (int r = 0; r < repeats; ++r) best_raw = std::min(best_raw, raw_read_seconds(friedman_h5));
  const double best_stream = best_pass_seconds(friedman_h5, budget, repeats + 1, &checksum);
  const auto description = gpstream::read_dataset_description(friedman_h5);
  const double x_gb = static_cast<double>(description.rows * description.columns * sizeof(double)) / 1e9;
  const double file_gb = static_cast<double>(fs::file_size(friedman_h5)) / 1e9;
  const std::string name = fmt::format("friedman1_{}", rows);
  report({"stream /X", name, "raw read() of the file", file_gb / best_raw, "GB/s"});
  report({"stream /X", name, "RowBlockStream of /X", x_gb / best_stream, "GB/s"});
  report({"stream /X", name, "stream / raw", (x_gb / best_stream) / (file_gb / best_raw), "ratio"});

  // 3. Chunk size: streaming and 500-row random gathers.
  const std::uint64_t chunk_test_rows = std::min<std::uint64_t>(rows, 2'000'000);
  for (const std::size_t chunk_kib : {64, 256, 1024, 4096}) {
    const std::size_t chunk_rows = chunk_kib * 1024 / (10 * sizeof(double));
    const std::string path = (fs::path(work_dir) / fmt::format("chunks_{}k.h5", chunk_kib)).string();
    run_child({gpstream_binary, "generate", "friedman1", "--rows", std::to_string(chunk_test_rows), "-o", path,
               "--chunk-rows", std::to_string(chunk_rows), "--force", "--quiet"});
    raw_read_seconds(path);
    const double best = best_pass_seconds(path, budget, repeats + 1, &checksum);
    const double gb = static_cast<double>(chunk_test_rows * 10 * sizeof(double)) / 1e9;
    const std::string label = fmt::format("chunk {} KiB", chunk_kib);
    report({"chunk size", label, "stream /X", gb / best, "GB/s"});
    report({"chunk size", label, "gather 500 random rows", gather_milliseconds(path, 500, 5), "ms"});
    fs::remove(path);
  }

  fs::create_directories(fs::path(csv_out).parent_path());
  std::ofstream csv(csv_out);
  csv << "benchmark,dataset,metric,value,unit\n";
  for (const Row& row : results)
    csv << fmt::format("{},{},{},{},{}\n", row.benchmark, row.dataset, row.metric, row.value, row.unit);
  fmt::print("(checksum {:.3g})\nwrote {}\n", checksum, csv_out);
  return 0;
}

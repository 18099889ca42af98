// gpstream generate friedman1 --rows N --seed S -o OUT.h5|OUT.csv
#include "api/datasets.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/interrupt_handler.h"
#include "tools/progress_line.h"

#include <fmt/format.h>

namespace gpstream::cli {

int run_generate(const std::vector<std::string>& args) {
  CommandSpec spec;
  spec.name = "generate";
  spec.usage = "gpstream generate friedman1 --rows N [--seed S] -o OUT.h5|OUT.csv [options]";
  spec.description =
      "Write Friedman's first regression problem (the GBCD paper's synthetic set):\n"
      "x ~ U[0,1]^10, y = 10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise.\n"
      "Rows are written as they are drawn, in bounded memory for any N. An output\n"
      "ending in .csv is written as CSV, anything else as a gpstream dataset.";
  std::string problem;
  std::string output;
  std::uint64_t rows = 0;
  std::uint64_t seed = 0;  // the schema's default, as the option is read
  double noise = 1.0;
  DatasetOutputOptions output_options;
  // clang-format off
  spec.options.add_options()
      ("problem", po::value(&problem)->required(), "the dataset to generate: friedman1")
      ("output,o", po::value(&output)->required(), "file to write (.h5 dataset or .csv)")
      ("rows", po::value(&rows)->required(), "number of rows")
      ("noise", po::value(&noise)->default_value(1.0), "standard deviation of the Gaussian noise on y")
      ("noise-free", "no noise on y (for test sets); the inputs equal those of the same seed with noise")
      ("quiet,q", "no progress or summary on stderr");
  // clang-format on
  add_parameter(spec.options, "random_state", seed);  // the schema's seed, as every command's
  output_options.add(spec.options);
  spec.positional.add("problem", 1);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;
  if (problem != "friedman1") throw UsageError(fmt::format("unknown problem \"{}\" (available: friedman1)", problem));
  if (rows == 0) throw UsageError("--rows must be at least 1");
  if (values.count("noise-free") != 0) noise = 0.0;
  if (!(noise >= 0.0)) throw UsageError(fmt::format("--noise must be >= 0, not {}", noise));
  const bool quiet = values.count("quiet") != 0;

  StopFlag stop;
  InterruptHandler interrupts(stop);
  ProgressLine progress(!quiet && output != "-");
  write_friedman1(output, rows, seed, noise, output_options.writer_options(values), stop, [&](std::uint64_t done) {
    progress.update(fmt::format("generate: {} of {} rows ({:.0f}%)", format_count(done), format_count(rows),
                                100.0 * static_cast<double>(done) / static_cast<double>(rows)));
  });
  progress.finish();
  if (!quiet && output != "-") {
    fmt::print(stderr, "wrote {}: {} rows of friedman1 (seed {}, noise {}) in {:.2f} s\n", output, format_count(rows),
               seed, noise, progress.elapsed_seconds());
  }
  return 0;
}

}  // namespace gpstream::cli

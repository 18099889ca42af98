// gpstream generate friedman1 --rows N --seed S -o OUT.h5|OUT.csv
#include "engine/core/error.h"
#include "engine/data/friedman1.h"
#include "storage/csv/csv_writer.h"
#include "storage/dataset/dataset_writer.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/interrupt_handler.h"
#include "tools/progress_line.h"

#include <fmt/format.h>

#include <algorithm>

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
  std::uint64_t seed = 1;
  double noise = 1.0;
  DatasetOutputOptions output_options;
  // clang-format off
  spec.options.add_options()
      ("problem", po::value(&problem)->required(), "the dataset to generate: friedman1")
      ("output,o", po::value(&output)->required(), "file to write (.h5 dataset or .csv)")
      ("rows", po::value(&rows)->required(), "number of rows")
      ("seed", po::value(&seed)->default_value(1), "random seed; the same seed gives the same rows")
      ("noise", po::value(&noise)->default_value(1.0), "standard deviation of the Gaussian noise on y")
      ("noise-free", "no noise on y (for test sets); the inputs equal those of the same seed with noise")
      ("quiet,q", "no progress or summary on stderr");
  // clang-format on
  output_options.add(spec.options);
  spec.positional.add("problem", 1);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;
  if (problem != "friedman1") throw UsageError(fmt::format("unknown problem \"{}\" (available: friedman1)", problem));
  if (rows == 0) throw UsageError("--rows must be at least 1");
  if (values.count("noise-free") != 0) noise = 0.0;
  if (!(noise >= 0.0)) throw UsageError(fmt::format("--noise must be >= 0, not {}", noise));
  DatasetWriterOptions writer_options = output_options.writer_options(values);
  const bool quiet = values.count("quiet") != 0;

  std::vector<std::string> feature_names;
  for (std::size_t j = 1; j <= Friedman1Generator::kColumns; ++j) feature_names.push_back(fmt::format("x{}", j));
  const bool as_csv = output.ends_with(".csv") || output == "-";

  // Exactly one of the two writers is used.
  std::unique_ptr<CsvWriter> csv;
  std::unique_ptr<DatasetWriter> dataset;
  if (as_csv) {
    std::vector<std::string> header = feature_names;
    header.emplace_back("y");
    csv = std::make_unique<CsvWriter>(output, header, writer_options.overwrite);
  } else {
    writer_options.source = fmt::format("friedman1 rows={} seed={} noise={}", rows, seed, noise);
    dataset = std::make_unique<DatasetWriter>(output, feature_names, "y", writer_options);
  }

  StopFlag stop;
  InterruptHandler interrupts(stop);
  ProgressLine progress(!quiet && output != "-");
  Friedman1Generator generator(seed, noise);
  constexpr std::size_t kBlockRows = 1u << 16;
  const std::size_t columns = Friedman1Generator::kColumns;
  std::vector<double> x(kBlockRows * columns);
  std::vector<double> y(kBlockRows);
  std::vector<double> row(columns + 1);
  for (std::uint64_t done = 0; done < rows;) {
    if (stop.requested()) throw Cancelled(fmt::format("generation of {} interrupted; nothing was written", output));
    const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(kBlockRows, rows - done));
    generator.generate(count, x.data(), y.data());
    if (dataset) {
      dataset->append_rows(count, x.data(), y.data());
    } else {
      for (std::size_t i = 0; i < count; ++i) {
        std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(i * columns), columns, row.begin());
        row[columns] = y[i];
        csv->write_row(row);
      }
    }
    done += count;
    progress.update(fmt::format("generate: {} of {} rows ({:.0f}%)", format_count(done), format_count(rows),
                                100.0 * static_cast<double>(done) / static_cast<double>(rows)));
  }
  if (dataset) {
    dataset->finish();
  } else {
    csv->finish();
  }
  progress.finish();
  if (!quiet && output != "-") {
    fmt::print(stderr, "wrote {}: {} rows of friedman1 (seed {}, noise {}) in {:.2f} s\n", output, format_count(rows),
               seed, noise, progress.elapsed_seconds());
  }
  return 0;
}

}  // namespace gpstream::cli

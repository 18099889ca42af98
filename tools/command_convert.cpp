// gpstream convert IN.csv -o OUT.h5
#include "api/datasets.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/interrupt_handler.h"
#include "tools/progress_line.h"

#include <fmt/format.h>

#include <boost/algorithm/string/classification.hpp>
#include <boost/algorithm/string/split.hpp>

namespace gpstream::cli {
namespace {

constexpr std::uint64_t kProgressThresholdBytes = 8u << 20;  // smaller inputs finish before progress would help

char parse_delimiter(const std::string& text) {
  if (text == "tab" || text == "\\t" || text == "\t") return '\t';
  if (text.size() != 1)
    throw UsageError(fmt::format("--delimiter: \"{}\" is not one character (use 'tab' for a tab)", text));
  return text.front();
}

std::string progress_text(const CsvImportProgress& progress, double seconds) {
  const double rate = seconds > 0 ? static_cast<double>(progress.bytes) / seconds : 0.0;
  std::string text = fmt::format("convert: {} rows, {}", format_count(progress.rows),
                                 format_bytes(static_cast<double>(progress.bytes)));
  if (progress.total_bytes && *progress.total_bytes > 0) {
    text += fmt::format(" of {} ({:.0f}%)", format_bytes(static_cast<double>(*progress.total_bytes)),
                        100.0 * static_cast<double>(progress.bytes) / static_cast<double>(*progress.total_bytes));
  }
  return text + fmt::format(", {}/s", format_bytes(rate));
}

}  // namespace

int run_convert(const std::vector<std::string>& args) {
  CommandSpec spec;
  spec.name = "convert";
  spec.usage = "gpstream convert IN.csv -o OUT.h5 [options]";
  spec.description =
      "Convert a CSV file ('-' reads standard input) into a gpstream dataset: /X float64 [n, d]\n"
      "chunked by rows, /y float64 [n], names and per-column mean and standard deviation, in one\n"
      "streaming pass with constant memory. Columns are named in the header or numbered from 1.";
  std::string input;
  std::string output;
  std::string delimiter;
  std::string target;
  std::string columns;
  DatasetOutputOptions output_options;
  // clang-format off
  spec.options.add_options()
      ("input", po::value(&input)->required(), "CSV file, or - for standard input")
      ("output,o", po::value(&output)->required(), "dataset file to write (HDF5)")
      ("header", "the first line is a header (default: detected)")
      ("no-header", "the first line is data")
      ("delimiter", po::value(&delimiter)->default_value(","), "field separator: one character, or 'tab'")
      ("target", po::value(&target), "target column, by name or number (default: the last column)")
      ("columns", po::value(&columns), "input columns, comma-separated names or numbers (default: all but the target)")
      ("drop-invalid", "skip rows with a missing, NaN or infinite value instead of failing")
      ("quiet,q", "no progress or summary on stderr");
  // clang-format on
  output_options.add(spec.options);
  spec.positional.add("input", 1);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;

  CsvImportOptions options;
  options.delimiter = parse_delimiter(delimiter);
  if (values.count("header") != 0 && values.count("no-header") != 0)
    throw UsageError("--header and --no-header contradict each other");
  if (values.count("header") != 0) options.header = HeaderMode::present;
  if (values.count("no-header") != 0) options.header = HeaderMode::absent;
  options.target = target;
  if (values.count("columns") != 0) {
    boost::split(options.inputs, columns, boost::is_any_of(","));
    for (const std::string& column : options.inputs) {
      if (column.empty()) {
        throw UsageError(fmt::format("--columns '{}': a column is empty; give names or numbers separated by commas, or "
                                     "leave --columns out for every column but the target",
                                     columns));
      }
    }
  }
  options.drop_invalid = values.count("drop-invalid") != 0;
  const DatasetWriterOptions writer_options = output_options.writer_options(values);
  const bool quiet = values.count("quiet") != 0;

  StopFlag stop;
  InterruptHandler interrupts(stop);
  ProgressLine progress_line(!quiet);
  const auto on_progress = [&](const CsvImportProgress& progress) {
    const bool large = !progress.total_bytes || *progress.total_bytes >= kProgressThresholdBytes;
    if (large) progress_line.update(progress_text(progress, progress_line.elapsed_seconds()));
  };
  check_distinct_files({{"the input", input}}, {{"-o", output}});
  const CsvImportResult result = convert_csv(input, output, options, writer_options, on_progress, &stop);
  progress_line.finish();

  if (!quiet) {
    const double seconds = progress_line.elapsed_seconds();
    const DatasetDescription& dataset = result.dataset;
    fmt::print(stderr, "wrote {}: {} rows x {} inputs, target \"{}\", {}{}\n", dataset.path, format_count(dataset.rows),
               dataset.columns, dataset.target_name, format_bytes(static_cast<double>(dataset.file_bytes)),
               result.had_header ? "" : " (no header line: columns named col1, col2, ...)");
    if (result.rows_dropped > 0)
      fmt::print(stderr, "dropped {} rows with invalid values\n", format_count(result.rows_dropped));
    fmt::print(stderr, "read {} of CSV in {:.2f} s ({}/s)\n", format_bytes(static_cast<double>(result.bytes_read)),
               seconds, format_bytes(seconds > 0 ? static_cast<double>(result.bytes_read) / seconds : 0.0));
  }
  return 0;
}

}  // namespace gpstream::cli

#include "api/datasets.h"

#include "engine/core/error.h"
#include "engine/data/friedman1.h"
#include "storage/csv/csv_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <system_error>

namespace gpstream {

CsvImportResult convert_csv(const std::string& csv_path, const std::string& output_path,
                            const CsvImportOptions& options, const DatasetWriterOptions& writer_options,
                            const std::function<void(const CsvImportProgress&)>& progress, const StopFlag* stop) {
  std::error_code failed;
  if (csv_path != "-" && std::filesystem::equivalent(csv_path, output_path, failed)) {
    throw InvalidArgument(
        fmt::format("the output '{}' is the input CSV: writing it would destroy the input", output_path));
  }
  return import_csv(csv_path, output_path, options, writer_options, progress, stop);
}

void write_dataset(const std::string& path, const DatasetArrays& arrays, const DatasetWriterOptions& options) {
  const DatasetDescription description = describe_arrays(arrays);  // checks every value, names the columns
  DatasetWriter writer(path, description.feature_names, description.target_name, options);
  writer.append_rows(arrays.rows, arrays.x, arrays.y);
  writer.finish();
}

void write_friedman1(const std::string& path, std::uint64_t rows, std::uint64_t seed, double noise,
                     DatasetWriterOptions options, const StopFlag& stop,
                     const std::function<void(std::uint64_t)>& progress) {
  constexpr std::size_t columns = Friedman1Generator::kColumns;
  std::vector<std::string> feature_names;
  for (std::size_t j = 1; j <= columns; ++j) feature_names.push_back(fmt::format("x{}", j));
  // Exactly one of the two writers is used.
  std::unique_ptr<CsvWriter> csv;
  std::unique_ptr<DatasetWriter> dataset;
  if (path.ends_with(".csv") || path == "-") {
    std::vector<std::string> header = feature_names;
    header.emplace_back("y");
    csv = std::make_unique<CsvWriter>(path, header, options.overwrite);
  } else {
    options.source = fmt::format("friedman1 rows={} seed={} noise={}", rows, seed, noise);
    dataset = std::make_unique<DatasetWriter>(path, feature_names, "y", options);
  }
  Friedman1Generator generator(seed, noise);
  constexpr std::size_t kBlockRows = 1u << 16;
  std::vector<double> x(kBlockRows * columns);
  std::vector<double> y(kBlockRows);
  std::vector<double> row(columns + 1);
  for (std::uint64_t done = 0; done < rows;) {
    if (stop.requested()) throw Cancelled(fmt::format("generation of {} interrupted; nothing was written", path));
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
    if (progress) progress(done);
  }
  if (dataset) {
    dataset->finish();
  } else {
    csv->finish();
  }
}

}  // namespace gpstream

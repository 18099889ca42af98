#include "api/datasets.h"

#include "engine/core/error.h"

#include <fmt/format.h>

#include <filesystem>
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

}  // namespace gpstream

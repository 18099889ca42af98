// gpstream info FILE.h5
#include "storage/dataset/dataset_format.h"
#include "tools/command_line.h"
#include "tools/commands.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpstream::cli {

int run_info(const std::vector<std::string>& args) {
  CommandSpec spec;
  spec.name = "info";
  spec.usage = "gpstream info FILE.h5";
  spec.description = "Describe a gpstream file: its kind, shape, column names and statistics, chunk layout and size.";
  std::string path;
  spec.options.add_options()("file", po::value(&path)->required(), "a gpstream HDF5 file");
  spec.positional.add("file", 1);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;

  const DatasetDescription dataset = read_dataset_description(path);
  fmt::print("file         {}\n", dataset.path);
  fmt::print("kind         {} (version {})\n", kDatasetFormat, dataset.version);
  fmt::print("rows (n)     {}\n", format_count(dataset.rows));
  fmt::print("inputs (d)   {}\n", dataset.columns);
  fmt::print("target       {}\n", dataset.target_name);
  fmt::print("fingerprint  {}\n", dataset.fingerprint);
  if (!dataset.source.empty()) fmt::print("source       {}\n", dataset.source);
  if (!dataset.created_by.empty()) fmt::print("created by   {}\n", dataset.created_by);
  const std::size_t chunk_bytes = dataset.chunk_rows * dataset.columns * sizeof(double);
  fmt::print("chunks       {} rows x {} columns ({}), {}\n", format_count(dataset.chunk_rows), dataset.columns,
             format_bytes(static_cast<double>(chunk_bytes)),
             dataset.compression_level > 0 ? fmt::format("deflate level {} with shuffle", dataset.compression_level)
                                           : std::string("uncompressed"));
  const double raw_bytes =
      static_cast<double>(dataset.rows) * static_cast<double>(dataset.columns + 1) * sizeof(double);
  fmt::print("size         {} on disk, {} of data ({} uncompressed)\n",
             format_bytes(static_cast<double>(dataset.file_bytes)),
             format_bytes(static_cast<double>(dataset.data_bytes)), format_bytes(raw_bytes));

  std::size_t width = dataset.target_name.size();
  for (const std::string& name : dataset.feature_names) width = std::max(width, name.size());
  width = std::max<std::size_t>(width, 6);
  fmt::print("\n{:<{}}  {:>14}  {:>14}\n", "column", width, "mean", "std");
  for (std::size_t j = 0; j < dataset.columns; ++j) {
    fmt::print("{:<{}}  {:>14.6g}  {:>14.6g}\n", dataset.feature_names[j], width, dataset.x_mean[j], dataset.x_std[j]);
  }
  fmt::print("{:<{}}  {:>14.6g}  {:>14.6g}  (target)\n", dataset.target_name, width, dataset.y_mean, dataset.y_std);
  return 0;
}

}  // namespace gpstream::cli

// The gpstream dataset file (HDF5), documented once here and in docs/files.md:
//
//   /X   float64 [n, d], chunked by rows (chunk = [chunk_rows, d]), optional deflate
//   /y   float64 [n],    chunked alike
//   root attributes:
//     format        "gpstream-dataset"
//     version       1
//     feature_names d texts          target_name  text
//     x_mean, x_std d numbers        y_mean, y_std numbers
//                   (population standard deviation, computed by Welford's
//                    algorithm in the conversion pass)
//     fingerprint   16 hex digits: XXH3-64 of /X and /y contents and shape;
//                   models and checkpoints use it to recognise their data
//     source        where the rows came from (a CSV path, "friedman1 seed=…")
//     created_by    "gpstream <version>"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpstream {

inline constexpr const char* kDatasetFormat = "gpstream-dataset";
inline constexpr std::int64_t kDatasetVersion = 1;

// Everything known about a dataset file without reading its rows.
struct DatasetDescription {
  std::string path;
  std::size_t rows = 0;
  std::size_t columns = 0;
  std::vector<std::string> feature_names;
  std::string target_name;
  std::vector<double> x_mean;
  std::vector<double> x_std;
  double y_mean = 0.0;
  double y_std = 0.0;
  std::string fingerprint;
  std::string source;
  std::string created_by;
  std::int64_t version = 0;
  std::size_t chunk_rows = 0;    // rows per HDF5 chunk of /X
  int compression_level = 0;     // deflate level, 0 when uncompressed
  std::uint64_t file_bytes = 0;  // size of the file on disk
  std::uint64_t data_bytes = 0;  // bytes /X and /y occupy in the file
};

// Reads and validates the description; throws a clear error for a file that
// is not a gpstream dataset, a newer version, or inconsistent shapes.
DatasetDescription read_dataset_description(const std::string& path);

// Default rows per chunk: about 1 MiB of /X per chunk (see docs/benchmarks.md, "Chunk size").
std::size_t default_chunk_rows(std::size_t columns);

}  // namespace gpstream

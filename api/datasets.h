// Datasets, what gpstream trains on: a CSV file converted into a gpstream
// dataset (HDF5: /X, /y, names, statistics, fingerprint) in one streaming
// pass (storage/csv/csv_import.h), or arrays in memory written as one. What
// any gpstream file holds: file_description.h.
#pragma once

#include "engine/core/stop_flag.h"
#include "storage/csv/csv_import.h"
#include "storage/dataset/dataset_writer.h"
#include "storage/dataset/training_rows.h"

#include <functional>
#include <string>

namespace gpstream {

// `gpstream convert`: refuses an output that is the input; a stop request
// (`stop`) or an error leaves no output file.
CsvImportResult convert_csv(const std::string& csv_path, const std::string& output_path,
                            const CsvImportOptions& options, const DatasetWriterOptions& writer_options,
                            const std::function<void(const CsvImportProgress&)>& progress = {},
                            const StopFlag* stop = nullptr);

// The arrays as a dataset file (statistics and fingerprint as `convert` computes them).
void write_dataset(const std::string& path, const DatasetArrays& arrays, const DatasetWriterOptions& options);

// `gpstream generate friedman1`: Friedman's first regression problem (engine/data/friedman1.h) of `rows`
// rows, y's noise of standard deviation `noise`, written as it is drawn, in bounded memory for any number
// of rows: as CSV to a path ending in .csv (or "-", standard output), else as a dataset. `progress` hears
// the rows written so far; a stop request (`stop`) ends it with Cancelled and nothing written.
void write_friedman1(const std::string& path, std::uint64_t rows, std::uint64_t seed, double noise,
                     DatasetWriterOptions options, const StopFlag& stop,
                     const std::function<void(std::uint64_t)>& progress = {});

}  // namespace gpstream

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

}  // namespace gpstream

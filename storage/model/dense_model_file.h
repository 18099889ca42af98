// The model file (HDF5): what `gpstream predict` needs, and a stable,
// documented product of training (docs/files.md).
//
//   root attributes: format "gpstream-model", version 2, model_type "dense",
//     kernel, lengthscales, gamma, signal_variance, noise_variance,
//     standardised, x_mean, x_std, y_mean, y_std,
//     dataset_path, dataset_fingerprint, rows, columns, feature_names, target_name,
//     solver, stop_reason, iterations, convergence_measure, tolerance,
//     training_seconds, kernel_evaluations, created_by,
//     contents_checksum (version 2: XXH3 of everything else, checked on
//     reading; hdf5/contents_checksum.h)
//   /alpha  float64 [n]   weights α = K̄⁻¹y in standardised units
#pragma once

#include "engine/dense/dense_model.h"
#include "storage/output/atomic_output_file.h"

#include <string>

namespace gpstream {

inline constexpr const char* kModelFormat = "gpstream-model";
inline constexpr std::int64_t kModelVersion = 2;  // 2: the contents' checksum (hdf5/contents_checksum.h)

void write_dense_model(const std::string& path, const DenseModel& model, ExistingOutput existing);
DenseModel read_dense_model(const std::string& path);

}  // namespace gpstream

// The sparse model file (HDF5): model_type "sparse", for every sparse model
// (engine/sparse/sparse_model.h). Documented in docs/files.md.
//
//   root attributes: format "gpstream-model", version 1, model_type "sparse",
//     method (sd, sr, sgma, mpgp, sggp, nystrom), variance_form, the model
//     description as dense models have it (kernel, standardisation,
//     dataset_path, dataset_fingerprint, rows, columns, feature_names,
//     target_name, training summary), basis_size, diagnostic_names +
//     diagnostic_values (gap, max_abs_weight, …)
//   /basis_rows       float64 [m, d]  standardised inputs
//   /basis_indices    float64 [m]     their training rows
//   /weights          float64 [m]     β
//   /variance_factor  float64 [m, m]  lower Cholesky factor of the variance form's matrix
//   /basis_factor     float64 [m, m]  chol(K_B + jitter I), projected-process form only
//   /training_weights float64 [n]     nystrom only
#pragma once

#include "engine/sparse/sparse_model.h"
#include "storage/output/atomic_output_file.h"

#include <string>

namespace gpstream {

void write_sparse_model(const std::string& path, const SparseModel& model, ExistingOutput existing);
SparseModel read_sparse_model(const std::string& path);

// "dense" or "sparse", after checking the file is a gpstream model.
std::string model_type_of(const std::string& path);

}  // namespace gpstream

// Predictions of the exact GP from its weights α = K̄⁻¹y:
//   mean(x*) = k*ᵀ α                                 (GBCD paper eq. 1)
#pragma once

#include "engine/kernels/kernel_matrix.h"

#include <span>
#include <vector>

namespace gpstream {

// Predictive means for `count` test rows (standardised, count×d) from the
// training rows behind `training`: one streamed pass over the training rows
// per block of up to `test_block_rows` test rows.
std::vector<double> predict_mean(KernelMatrix& training, std::span<const double> alpha, const double* test_rows,
                                 std::size_t count, std::size_t test_block_rows = 16384);

}  // namespace gpstream

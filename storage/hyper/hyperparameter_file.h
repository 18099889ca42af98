// Hyperparameter files (JSON), in the format of ../shared/data/hyper/*.json:
//   { "signal_variance": s², "length_scales": [ℓ…] (or "gamma": [γ…]),
//     "noise_variance": σ², "kernel_name": "se-ard" (optional, default se-ard),
//     "standardisation": { "x_mean": […], "x_std": […], "y_mean": …, "y_std": … } (optional) }
// A standardisation in the file is the one the values were learned under,
// and training uses it instead of the dataset's own statistics.
#pragma once

#include "engine/data/standardisation.h"
#include "engine/kernels/kernel.h"

#include <optional>
#include <string>

namespace gpstream {

struct HyperparameterFile {
  KernelHyperparameters hyperparameters;
  std::optional<Standardisation> standardisation;
};

// Throws naming the file and the field at fault.
HyperparameterFile read_hyperparameter_file(const std::string& path);

}  // namespace gpstream

// DenseModel: the product of training an exact GP — weights α = K̄⁻¹y over
// the training rows, with everything needed to predict from them.
#pragma once

#include "engine/data/standardisation.h"
#include "engine/kernels/kernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gpstream {

struct TrainingSummary {
  std::string solver;
  std::string stop_reason;
  std::uint64_t iterations = 0;
  double gradient_max_norm = 0.0;  // ‖K̄α − y‖∞ at the end (standardised units)
  double tolerance = 0.0;
  double seconds = 0.0;
  std::uint64_t kernel_evaluations = 0;
};

struct DenseModel {
  KernelHyperparameters hyperparameters;
  Standardisation standardisation;
  std::vector<double> alpha;  // n weights (standardised units)
  // The training rows are referenced, not copied: prediction streams them.
  std::string dataset_path;
  std::string dataset_fingerprint;
  std::size_t rows = 0;
  std::size_t columns = 0;
  std::vector<std::string> feature_names;
  std::string target_name;
  TrainingSummary training;
};

}  // namespace gpstream

// ModelDescription: what every trained model says about itself, dense or
// sparse — its kernel, the standardisation its inputs and outputs go
// through, the training data it came from, and how training went. Model
// types extend it with their weights.
#pragma once

#include "engine/data/standardisation.h"
#include "engine/kernels/kernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gpstream {

struct TrainingSummary {
  std::string solver;  // the dense solver, or the sparse model's method
  std::string stop_reason;
  std::uint64_t iterations = 0;
  // The convergence measure at the end: ‖K̄α − y‖∞ (standardised units) for
  // dense solvers; the gap (sggp) or relative trace residual of a greedy basis.
  double convergence_measure = 0.0;  // its final value (IterativeMethod::convergence_measure)
  double tolerance = 0.0;
  double seconds = 0.0;
  std::uint64_t kernel_evaluations = 0;
};

struct ModelDescription {
  KernelHyperparameters hyperparameters;
  Standardisation standardisation;
  std::string dataset_path;  // the training dataset
  std::string dataset_fingerprint;
  std::size_t rows = 0;     // n, its rows
  std::size_t columns = 0;  // d, its inputs
  std::vector<std::string> feature_names;
  std::string target_name;
  TrainingSummary training;
};

}  // namespace gpstream

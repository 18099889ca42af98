// ModelDescription: what every trained model says about itself, dense or
// sparse — its prior (kernel, noise and mean), the standardisation its
// inputs and outputs go through, the training data it came from, and how
// training went. Model types extend it with their weights.
#pragma once

#include "engine/data/standardisation.h"
#include "engine/kernels/gaussian_process_prior.h"

#include <cstdint>
#include <span>
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
  // The kernel entries of the solver's products: "double", "single", or
  // "single, then double from iteration N" (solvers/solver_state.h,
  // PrecisionRecord), and the exact residuals in double that checked
  // single precision's convergence claims.
  std::string precision = "double";
  std::uint64_t exact_residuals_in_single_precision = 0;
};

struct ModelDescription {
  GaussianProcessPrior prior;  // in the units `standardisation` makes
  Standardisation standardisation;
  std::string dataset_path;  // the training dataset
  std::string dataset_fingerprint;
  std::size_t rows = 0;     // n, its rows
  std::size_t columns = 0;  // d, its inputs
  std::vector<std::string> feature_names;
  std::string target_name;
  TrainingSummary training;
};

// Throws, naming `source` (the model file, or what is being trained), unless
// the standardisation is valid (Standardisation::validate) and the kernel's
// variances stay finite in the target's units (s²·y_std², σ²·y_std²): a
// model must not predict infinite variances.
void validate_model_description(const ModelDescription& description, const std::string& source);

// Throws naming `source`, `what` (a model's "/alpha") and the first entry
// that is not a finite number.
void check_finite_values(std::span<const double> values, const std::string& what, const std::string& source);

}  // namespace gpstream

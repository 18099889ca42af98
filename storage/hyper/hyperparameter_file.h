// Hyperparameter files (JSON), in the format of ../shared/data/hyper/*.json:
//   { "signal_variance": s², "length_scales": [ℓ…] (or "gamma": [γ…]),
//     "noise_variance": σ², "kernel_name": "se-ard" (optional, default se-ard),
//     "standardisation": { "x_mean": […], "x_std": […], "y_mean": …, "y_std": … } (optional),
//     "mean": { "intercept": …, "inputs": […], "coefficients": […] } (optional),
//     "input_names": [name…] (optional: the inputs the values are for, in their order) }
// A standardisation in the file is the one the values were learned under,
// and training uses it instead of the dataset's own statistics.
// `gpstream hyper` writes the same format, plus how the values were learned
// ("hyper_subset", "optimizer", "dataset"), which readers ignore.
#pragma once

#include "engine/data/standardisation.h"
#include "engine/kernels/gaussian_process_prior.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpstream {

struct HyperparameterFile {
  GaussianProcessPrior prior;  // in the units the standardisation below makes
  // The one the prior was learned under (none: the dataset's own statistics).
  std::optional<Standardisation> standardisation;
  // The inputs the per-input values are for, in their order (empty: a file that does not name them).
  std::vector<std::string> input_names;
};

// How learned values came about, recorded next to them.
struct HyperparameterProvenance {
  double negative_log_marginal_likelihood = 0.0;  // over `rows` rows, standardised units
  std::string objective;                          // "exact on a random subset", "Vecchia (m = 30) on all rows"
  std::size_t rows = 0;
  // Each kernel compared (`--kernel auto`): its name and −log p; the chosen one is the file's kernel.
  std::vector<std::pair<std::string, double>> candidates;
  std::size_t subset_size = 0;
  std::uint64_t seed = 0;
  std::size_t restarts = 0;
  double tolerance = 0.0;
  std::size_t evaluations = 0;  // over all starts
  double seconds = 0.0;
  std::string dataset_path, dataset_fingerprint;
  std::vector<std::string> input_names;  // the dataset's, in the order of the values
};

// Throws naming the file and the field at fault.
HyperparameterFile read_hyperparameter_file(const std::string& path);

// Puts the file's per-input values — every term's lengthscales, the
// standardisation's inputs, the mean's inputs — in the order of `names`, the
// inputs of `dataset`: by name when the file names its inputs (throws naming
// those the dataset does not have), else in order when the counts agree, and
// then returns a note that says so (else "").
std::string match_inputs(HyperparameterFile& file, const std::vector<std::string>& names, const std::string& path,
                         const std::string& dataset);

// Writes a prior learned under `standardisation` (atomically; refuses an
// existing file unless `overwrite`).
void write_hyperparameter_file(const std::string& path, const GaussianProcessPrior& prior,
                               const Standardisation& standardisation, const HyperparameterProvenance& provenance,
                               bool overwrite);

}  // namespace gpstream

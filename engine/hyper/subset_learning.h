// Hyperparameter learning as the hyper command and train (when it learns them) do
// it (GBCD paper §3): a seeded random subset of the (standardised) training
// rows, gathered into memory, and the marginal-likelihood search of
// hyperparameter_search.h on it.
#pragma once

#include "engine/core/context.h"
#include "engine/data/row_partition.h"
#include "engine/data/row_source.h"
#include "engine/data/standardisation.h"
#include "engine/hyper/hyperparameter_search.h"

#include <cstdint>
#include <limits>

namespace gpstream {

struct SubsetLearningOptions {
  std::size_t subset = 2000;  // rows, GBCD paper §3
  std::size_t restarts = 2;   // as the reference files in shared/data/hyper
  double tolerance = 1e-4;    // GBCD paper §3
  double min_noise_variance = 1e-6;
  std::size_t max_evaluations = 500;             // per start
  StartingPoint start;                           // the user's part of the first start (standardised units)
  MeanFunction mean;                             // the prior mean's basis, fitted jointly
  SearchJournal* journal = nullptr;              // every evaluation through it (hyper/search_journal.h)
  std::vector<KernelType> further_terms;         // families of a sum's terms after the first (values informed)
  std::optional<KernelHyperparameters> initial;  // the whole first start, shape and values
  std::vector<double> curvature;  // of −log p on these rows in θ, to search with (HyperparameterSearchOptions)
  double least_decrease = 0.0;    // HyperparameterSearchOptions'
  double skip_restarts_above = std::numeric_limits<double>::infinity();  // HyperparameterSearchOptions'
};

struct LearnedOnSubset {
  HyperparameterSearchResult search;
  std::size_t subset_size = 0;
  std::size_t evaluations = 0;
  double seconds = 0.0;
};

// The memory a search on `rows` rows of d inputs holds: the rows and targets, and K̄ with its derivative
// workspace (two rows×rows matrices). learn_on_subset reserves it in the Context's budget.
std::size_t subset_learning_bytes(std::size_t rows, std::size_t d);

// Draws `subset` rows without replacement, gathers them and learns
// `kernel`'s hyperparameters, reporting each evaluation to the Context's
// observers. The Context's seed draws the subset and the restarts. A subset
// larger than the rows is an error naming both.
LearnedOnSubset learn_on_subset(Context& context, RowSource& rows, KernelType kernel,
                                const SubsetLearningOptions& options);
// The same over rows partitioned among the ranks of the Context's
// communicator (`rows` are this rank's): the subset is drawn over all n and
// collected from its owners, every rank searches alike, and rank 0's
// hyperparameters are every rank's (so that no rounding of a rank's own
// threads can set them apart).
LearnedOnSubset learn_on_subset(Context& context, RowSource& rows, const RowPartition& partition, KernelType kernel,
                                const SubsetLearningOptions& options);

// Hyperparameters in the units of standardisation `to` that describe the
// same function as `hyperparameters` under `from`: ℓ_l·x_std_from/x_std_to
// (one shared lengthscale scales by the mean ratio), and s², σ² by
// (y_std_from/y_std_to)². A standardisation that leaves the inputs as they
// are has x_std = 1. Used to start a search from values learned elsewhere.
KernelHyperparameters restandardised(const KernelHyperparameters& hyperparameters, const Standardisation& from,
                                     const Standardisation& to);

}  // namespace gpstream

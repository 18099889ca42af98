#include "engine/hyper/subset_learning.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/partitioned_rows.h"
#include "engine/data/row_source_utilities.h"

#include <algorithm>

#include <chrono>

namespace gpstream {

std::size_t subset_learning_bytes(std::size_t rows, std::size_t d) {
  return sizeof(double) * checked_add(checked_multiply(rows, d + 1), checked_multiply(rows, rows, 2));
}

LearnedOnSubset learn_on_subset(Context& context, RowSource& rows, KernelType kernel,
                                const SubsetLearningOptions& options) {
  return learn_on_subset(context, rows, RowPartition::whole(rows.rows()), kernel, options);
}

LearnedOnSubset learn_on_subset(Context& context, RowSource& rows, const RowPartition& partition, KernelType kernel,
                                const SubsetLearningOptions& options) {
  const std::uint64_t seed = context.seed();
  const std::size_t n = partition.global_rows;
  GPSTREAM_CHECK_ARGUMENT(options.subset >= 2, "the hyperparameter subset needs at least 2 rows, not {}",
                          options.subset);
  GPSTREAM_CHECK(options.subset <= n, "the hyperparameter subset of {} rows is larger than the {} training rows",
                 options.subset, n);
  GPSTREAM_CHECK(rows.has_targets(), "the training rows have no targets to learn hyperparameters from");

  const std::size_t d = rows.columns();
  const std::vector<std::size_t> subset = random_row_subset(n, options.subset, seed);
  const MemoryReservation memory =
      context.memory().reserve(fmt::format("the hyperparameter search on {} rows", subset.size()),
                               subset_learning_bytes(subset.size(), d), "use a smaller subset");
  std::vector<double> x, y;
  Communicator& ranks = context.communicator();
  collect_partitioned_rows(ranks, rows, partition, subset, x, nullptr, &y);  // from their owners

  HyperparameterSearchOptions search;
  search.kernel = kernel;
  search.restarts = options.restarts;
  search.tolerance = options.tolerance;
  search.max_evaluations = options.max_evaluations;
  search.min_noise_variance = options.min_noise_variance;
  search.seed = seed;
  search.start = options.start;
  search.mean = options.mean;
  search.journal = options.journal;
  search.further_terms = options.further_terms;
  search.initial = options.initial;
  search.curvature = options.curvature;
  search.least_decrease = options.least_decrease;
  search.skip_restarts_above = options.skip_restarts_above;
  const auto started = std::chrono::steady_clock::now();
  LearnedOnSubset learned;
  learned.search = learn_hyperparameters(context, x.data(), y, d, search);
  learned.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  learned.subset_size = subset.size();
  for (const SearchStart& start : learned.search.starts) learned.evaluations += start.evaluations;
  if (ranks.size() > 1) {
    KernelHyperparameters& h = learned.search.hyperparameters;
    std::vector<double>& beta = learned.search.mean_coefficients;
    std::vector<double> values = hyperparameter_values(h);
    const std::size_t kernel_values = values.size();
    values.insert(values.end(), beta.begin(), beta.end());
    ranks.broadcast(values, 0);
    h = with_values(h, std::span(values).first(kernel_values));
    std::copy(values.begin() + static_cast<std::ptrdiff_t>(kernel_values), values.end(), beta.begin());
  }
  return learned;
}

namespace {

// One term's lengthscales by the ratio of the input spreads, its s² by that of the target variances; a family's
// own parameters are dimensionless (kernel.h) and stay.
void restandardise_term(KernelTerm& term, const Standardisation& from, const Standardisation& to,
                        double variance_ratio) {
  const std::size_t count = term.lengthscales.size();
  if (count > 0 && (from.standardises_inputs() || to.standardises_inputs())) {
    const std::size_t d = from.standardises_inputs() ? from.x_std.size() : to.x_std.size();
    GPSTREAM_CHECK(!from.standardises_inputs() || !to.standardises_inputs() || from.x_std.size() == to.x_std.size(),
                   "the standardisations have {} and {} inputs", from.x_std.size(), to.x_std.size());
    // Columns with zero spread keep their scale (Standardisation::apply_to_rows).
    const auto spread = [](const Standardisation& s, std::size_t l) {
      return s.standardises_inputs() && s.x_std[l] > 0 ? s.x_std[l] : 1.0;
    };
    std::vector<double> ratio(d);
    for (std::size_t l = 0; l < d; ++l) ratio[l] = spread(from, l) / spread(to, l);
    if (count == d) {
      for (std::size_t l = 0; l < d; ++l) term.lengthscales[l] *= ratio[l];
    } else {
      double mean_ratio = 0.0;
      for (const double r : ratio) mean_ratio += r / static_cast<double>(d);
      for (double& lengthscale : term.lengthscales) lengthscale *= mean_ratio;
    }
  }
  term.signal_variance *= variance_ratio;
}

}  // namespace

KernelHyperparameters restandardised(const KernelHyperparameters& hyperparameters, const Standardisation& from,
                                     const Standardisation& to) {
  GPSTREAM_CHECK(from.y_std > 0 && to.y_std > 0, "a target spread must be positive ({} and {})", from.y_std, to.y_std);
  const double variance_ratio = (from.y_std / to.y_std) * (from.y_std / to.y_std);
  KernelHyperparameters result = hyperparameters;
  for (std::size_t t = 0; t < result.term_count(); ++t) restandardise_term(result.term(t), from, to, variance_ratio);
  result.noise_variance *= variance_ratio;
  return result;
}

}  // namespace gpstream

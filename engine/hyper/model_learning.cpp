#include "engine/hyper/model_learning.h"

#include "engine/hyper/sum_starts.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/core/work_progress.h"
#include "engine/data/partitioned_rows.h"
#include "engine/data/row_source_utilities.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <limits>
#include <numeric>
#include <optional>

namespace gpstream {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every row of the run and its target, on every rank (step 2 conditions any row on any other).
void gather_all_rows(Context& context, RowSource& rows, const RowPartition& partition, std::vector<double>& x,
                     std::vector<double>& y) {
  const std::size_t n = partition.global_rows, d = rows.columns();
  if (context.communicator().size() == 1) {
    x.resize(checked_multiply(n, d));
    y.resize(n);
    rows.read_rows(0, n, x.data(), y.data());
    return;
  }
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  collect_partitioned_rows(context.communicator(), rows, partition, all, x, nullptr, &y);
}

// Step 2 for one candidate: rounds of conditioning sets and searches from the subset's optimum; a search that
// cannot bring the objective below `give_up_above` stops there (racing).
void refine_on_all_rows(Context& context, VecchiaLikelihood& vecchia, Likelihood& objective, std::size_t candidate,
                        const ModelLearningOptions& options, CandidateFit& fit,
                        double give_up_above = std::numeric_limits<double>::infinity()) {
  const auto started = std::chrono::steady_clock::now();
  HyperparameterSearchOptions search;
  search.kernel = fit.hyperparameters.type;
  search.min_noise_variance = options.subset.min_noise_variance;
  // The subset's precision per row: its relative tolerance scaled by the subset's share of the rows.
  search.tolerance = options.subset.tolerance * static_cast<double>(std::max<std::size_t>(fit.subset.subset_size, 1)) /
                     static_cast<double>(vecchia.rows());
  search.max_evaluations = options.max_evaluations;
  search.give_up_above = give_up_above;
  WorkProgress progress(context, options.rounds);
  KernelHyperparameters h = fit.hyperparameters;
  std::vector<double> beta = fit.mean_coefficients;
  for (std::size_t round = 0; round < options.rounds; ++round) {
    // The sets for the lengthscales reached; when they no longer change much, the search has its answer.
    const double changed = vecchia.condition_on(h);
    if (round > 0 && changed < 0.01) break;
    const SearchStart result =
        objective.has_information()
            ? fisher_scoring_from(context, objective, h, beta, candidate * options.rounds + round, search, progress)
            : search_from(context, objective, h, beta, candidate * options.rounds + round, search, progress);
    h = result.optimum;
    beta = result.optimum_mean;
    fit.objective = result.objective;
    fit.all_rows_evaluations += result.evaluations;
    ++fit.rounds;
    if (result.gave_up) {
      fit.raced = true;
      break;
    }
  }
  fit.hyperparameters = h;
  fit.mean_coefficients = beta;
  fit.all_rows_seconds = seconds_since(started);
}

VecchiaCheck check_vecchia(Context& context, const std::vector<double>& x, const std::vector<double>& y, std::size_t d,
                           const ModelLearningOptions& options, const CandidateFit& fit) {
  const std::size_t n = y.size(), rows = std::min(n, options.subset.subset);
  std::vector<double> sample_x(checked_multiply(rows, d)), sample_y(rows);
  const std::vector<std::size_t> sample = random_row_subset(n, rows, context.seed() + 7919);
  for (std::size_t i = 0; i < rows; ++i) {
    std::copy_n(x.data() + sample[i] * d, d, sample_x.data() + i * d);
    sample_y[i] = y[sample[i]];
  }
  ExactLikelihood exact(sample_x.data(), sample_y, d, options.mean);
  VecchiaLikelihood vecchia(context, sample_x.data(), sample_y, d, options.mean, options.vecchia);
  vecchia.condition_on(fit.hyperparameters);
  const MarginalLikelihood reference = exact.evaluate(fit.hyperparameters, fit.mean_coefficients);
  const MarginalLikelihood estimate = vecchia.evaluate(fit.hyperparameters, fit.mean_coefficients);
  VecchiaCheck check;
  check.rows = rows;
  check.error_per_row = std::abs(estimate.value - reference.value) / static_cast<double>(rows);
  check.trusted = check.error_per_row <= options.trusted_error_per_row;
  return check;
}

// Step 2': the chosen candidate by the exact likelihood on ever larger subsets, each from the last optimum.
void refine_on_larger_subsets(Context& context, RowSource& rows, const RowPartition& partition,
                              const ModelLearningOptions& options, SearchJournal* journal, LearnedModel& learned) {
  CandidateFit& fit = learned.candidates.at(learned.chosen);
  const std::size_t n = partition.global_rows, d = rows.columns();
  SubsetLearningOptions rung = options.subset;
  rung.mean = options.mean;
  rung.journal = journal;
  rung.restarts = 0;  // near the optimum already: one start from the last rung's
  // A rung must fit in what the budget has left, on every rank alike (a rank's budget counts its own process).
  const auto affordable = [&](std::size_t subset) {
    return !context.communicator().any(subset_learning_bytes(subset, d) > context.memory().available());
  };
  const std::size_t largest = std::min(options.exact_rows, n);
  const std::size_t first = std::min(2 * fit.subset.subset_size, largest);
  // A rung searches from a model of the curvature, as L-BFGS cannot (it starts each rung with none; measured in
  // docs/benchmarks.md): the exact Hessian at the subset's optimum, then each rung's model as its search corrected
  // it, scaled by the rows (−log p sums over them).
  std::vector<double> curvature;  // of −log p on `curvature_rows` rows
  std::size_t curvature_rows = 0;
  if (options.carry_curvature && rung.mean.empty() && first > rung.subset && affordable(first)) {
    curvature = subset_hessian(context, rows, partition, fit.hyperparameters, fit.subset.subset_size, journal);
    curvature_rows = n;  // subset_hessian's scale
    learned.evaluations += log_parameters(fit.hyperparameters).size() + 1;
  }
  for (std::size_t size = first; size > rung.subset && affordable(size); size = std::min(2 * size, largest)) {
    rung.subset = size;
    rung.initial = fit.hyperparameters;                                      // the whole start, added terms included
    if (!rung.mean.empty()) rung.mean.coefficients = fit.mean_coefficients;  // β's start (a joint fit)
    rung.curvature = curvature;
    // A rung's optimum is an estimate from a random subset, its error far above the tolerance's worth of a
    // near-zero objective: it stops where a step predicts less than the tolerance per row.
    rung.least_decrease = options.subset.tolerance * static_cast<double>(size);
    const double scale = static_cast<double>(size) / static_cast<double>(std::max<std::size_t>(curvature_rows, 1));
    for (double& entry : rung.curvature) entry *= scale;
    LearnedOnSubset result = learn_on_subset(context, rows, partition, fit.hyperparameters.type, rung);
    if (!curvature.empty()) {
      curvature = result.search.curvature;
      curvature_rows = size;
    }
    fit.hyperparameters = result.search.hyperparameters;
    fit.mean_coefficients = result.search.mean_coefficients;
    fit.objective = result.search.objective;
    learned.evaluations += result.evaluations;
    learned.rows = size;
    learned.refinements.push_back(std::move(result));
  }
}

// Step 2'': the chosen candidate on all rows by the exact likelihood's stochastic gradient, the curvature from a
// random subset of at most `curvature_rows` rows (the ladder's last rung's size, or the subset's).
void refine_by_stochastic_gradient_on_all_rows(Context& context, RowSource& rows, const RowPartition& partition,
                                               const ModelLearningOptions& options, SearchJournal* journal,
                                               LearnedModel& learned) {
  CandidateFit& fit = learned.candidates.at(learned.chosen);
  const std::size_t n = partition.global_rows;
  const std::size_t learned_on = learned.all_rows ? fit.subset.subset_size : learned.rows;
  const std::vector<double> hessian = subset_hessian(context, rows, partition, fit.hyperparameters,
                                                     std::min(learned_on, options.curvature_rows), journal);
  StochasticRefinementOptions stochastic = options.stochastic;
  stochastic.min_noise_variance = options.subset.min_noise_variance;
  stochastic.gradient.seed = context.seed();
  learned.stochastic =
      refine_by_stochastic_gradient(context, rows, partition, fit.hyperparameters, hessian, stochastic, journal);
  fit.hyperparameters = learned.stochastic->hyperparameters;
  learned.evaluations += 1 + log_parameters(fit.hyperparameters).size() + learned.stochastic->estimates;
  learned.rows = n;
}

// The criterion candidates are compared on: −log p plus ½ (parameters) log(rows) [Schwarz78].
double information_criterion(const CandidateFit& fit, double rows) {
  const std::size_t parameters = log_parameters(fit.hyperparameters).size() + fit.mean_coefficients.size();
  return fit.objective + 0.5 * static_cast<double>(parameters) * std::log(rows);
}

// Racing: the objective on `rows` rows below which `fit` (a step 3 sum when `fit.composed`, with its margin)
// would beat the best criterion of `others` refined so far; +∞ without racing.
double race_mark(const std::vector<CandidateFit>& others, const CandidateFit& fit, std::size_t rows,
                 const ModelLearningOptions& options) {
  if (!options.race) return std::numeric_limits<double>::infinity();
  double best = std::numeric_limits<double>::infinity();
  for (const CandidateFit& other : others) best = std::min(best, other.criterion);
  const double n = static_cast<double>(rows);
  const double penalty =
      information_criterion(fit, n) - fit.objective + (fit.composed ? options.sum_margin_per_row * n : 0.0);
  return best - penalty;
}

// Step 3: sums of the chosen family at separated scales. Two starts of two terms — a longer term beside the
// chosen fit's, or a shorter one where the rows resolve it — and a term over the coordinates plus one over the
// covariates where the inputs split so; then, from the better pair where it beats the chosen fit, a third term
// on the same side. Each refined on all rows from its start and compared on the same criterion: at most 4 fits.
void compose_sums(Context& context, VecchiaLikelihood& vecchia, Likelihood& objective, const std::vector<double>& x,
                  const std::vector<double>& y, std::size_t d, const ModelLearningOptions& options,
                  LearnedModel& learned) {
  const CandidateFit base = learned.best();
  if (options.max_terms < 2 || base.hyperparameters.term_count() > 1 || !is_stationary(base.hyperparameters) ||
      base.hyperparameters.lengthscales.empty()) {
    return;
  }
  const std::size_t n = y.size();
  std::vector<double> extent(d, 0.0);  // each input's range over the rows
  for (std::size_t l = 0; l < d; ++l) {
    double low = x[l], high = x[l];
    for (std::size_t i = 1; i < n; ++i) low = std::min(low, x[i * d + l]), high = std::max(high, x[i * d + l]);
    extent[l] = high - low;
  }
  const double noise = base.hyperparameters.noise_variance;
  const auto fit_from = [&](const SumStart& start, std::size_t index) {
    CandidateFit fit;
    fit.composed = true;
    fit.hyperparameters = start.with_noise(noise);
    fit.name = kernel_name(fit.hyperparameters);
    fit.mean_coefficients = base.mean_coefficients;
    fit.subset.subset_size = base.subset.subset_size;  // the precision the search asks for per row
    refine_on_all_rows(context, vecchia, objective, index, options, fit,
                       race_mark(learned.candidates, fit, n, options));
    learned.evaluations += fit.all_rows_evaluations;
    fit.check = check_vecchia(context, x, y, d, options, fit);
    // A term whose lengthscales the rows do not resolve (the median nearest row beyond one of them) is noise by
    // another name: its sum would lower the noise variance without describing the field (bcef: a third term
    // at 0.0016, 1.3 of them between nearest rows, took the noise from 0.044 to 0.0045).
    fit.resolved = median_neighbour_distance(x, d, shortest_lengthscales(fit.hyperparameters)) < 1.0;
    fit.compared = fit.check.trusted && fit.resolved;
    // A sum must also win by options.sum_margin_per_row nats a row beyond the BIC (see the option).
    fit.criterion = fit.compared ? information_criterion(fit, static_cast<double>(n)) +
                                       options.sum_margin_per_row * static_cast<double>(n)
                                 : std::numeric_limits<double>::infinity();
    learned.candidates.push_back(fit);
    return learned.candidates.size() - 1;
  };
  const SumStart single = sum_start_of(base.hyperparameters);
  const double ratio = options.scale_ratio;
  std::size_t index = learned.candidates.size();
  const std::size_t longer = fit_from(with_term(single, ratio, extent), index++);
  // A shorter term only where the rows resolve it: the median distance between nearest rows, in the chosen
  // fit's lengthscales, below 1/ratio (else the term would see its neighbours at more than one lengthscale,
  // and act as noise).
  const bool resolved = median_neighbour_distance(x, d, base.hyperparameters.lengthscales) * ratio < 1.0;
  const std::size_t shorter = resolved ? fit_from(with_term(single, 1 / ratio, extent), index++) : longer;
  // Beside them, a term on the coordinates plus one on the covariates, where the inputs split so.
  if (const std::optional<SumStart> split = split_by_inputs(base.hyperparameters)) fit_from(*split, index++);
  const bool long_side = learned.candidates[longer].criterion <= learned.candidates[shorter].criterion;
  const CandidateFit& pair = learned.candidates[long_side ? longer : shorter];
  if (options.max_terms >= 3 && pair.criterion < base.criterion) {
    fit_from(with_term(sum_start_of(pair.hyperparameters), long_side ? ratio : 1 / ratio, extent), index++);
  }
}

// Steps 1 to 3 and the refinements (docs/model.md) for a mean that is empty or fitted jointly on its basis.
LearnedModel learn_candidates(Context& context, RowSource& rows, const RowPartition& partition,
                              const ModelLearningOptions& options, SearchJournal* journal) {
  const auto started = std::chrono::steady_clock::now();
  LearnedModel learned;
  const std::size_t n = partition.global_rows, d = rows.columns();
  const auto stationary = [](const KernelHyperparameters& shape) { return is_stationary(shape); };
  const bool all_rows = options.all_rows && n > options.subset.subset &&
                        std::all_of(options.kernels.begin(), options.kernels.end(), stationary);
  // Step 2's rows, gathered once (the checks sample them).
  std::vector<double> x, y;
  MemoryReservation memory;
  if (all_rows) {
    memory = context.memory().reserve(fmt::format("all {} rows in memory for the Vecchia likelihood", n),
                                      checked_multiply(n, d + 1, sizeof(double)), "learn on the subset only");
    gather_all_rows(context, rows, partition, x, y);
  }

  // Step 1 for every candidate, then step 2 for each where every candidate's check trusts the Vecchia likelihood
  // (the candidates are compared on one objective).
  SubsetLearningOptions subset = options.subset;
  subset.mean = options.mean;
  subset.journal = journal;
  bool trusted = all_rows;
  for (const KernelHyperparameters& shape : options.kernels) {
    subset.further_terms.clear();
    for (std::size_t t = 1; t < shape.term_count(); ++t) subset.further_terms.push_back(shape.term(t).type);
    CandidateFit fit;
    // Racing the restarts: against the best criterion on the same subset so far.
    subset.skip_restarts_above = std::numeric_limits<double>::infinity();
    if (options.race) {
      for (const CandidateFit& other : learned.candidates) {
        subset.skip_restarts_above = std::min(
            subset.skip_restarts_above, information_criterion(other, static_cast<double>(other.subset.subset_size)));
      }
    }
    fit.subset = learn_on_subset(context, rows, partition, shape.type, subset);
    fit.hyperparameters = fit.subset.search.hyperparameters;
    fit.name = kernel_name(fit.hyperparameters);
    fit.mean_coefficients = fit.subset.search.mean_coefficients;
    fit.objective = fit.subset.search.objective;
    learned.evaluations += fit.subset.evaluations;
    if (all_rows) {
      fit.check = check_vecchia(context, x, y, d, options, fit);
      trusted = trusted && fit.check.trusted;
    }
    learned.candidates.push_back(std::move(fit));
  }
  // Step 2's likelihood, made once where it is trusted: every candidate is compared on the same random order.
  std::unique_ptr<VecchiaLikelihood> vecchia;
  std::optional<JournaledLikelihood> journaled;
  if (trusted) {
    vecchia = std::make_unique<VecchiaLikelihood>(context, x.data(), y, d, options.mean, options.vecchia);
    if (journal != nullptr) journaled.emplace(*vecchia, *journal);
  }
  Likelihood* all_rows_objective = journaled ? static_cast<Likelihood*>(&*journaled) : vecchia.get();
  // Best on the subset first, so that racing has its mark early: each raced against those refined before it.
  std::vector<std::size_t> order(learned.candidates.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return learned.candidates[a].objective < learned.candidates[b].objective;
  });
  std::vector<CandidateFit> refined;
  for (const std::size_t c : order) {
    CandidateFit& fit = learned.candidates[c];
    if (trusted) {
      refine_on_all_rows(context, *vecchia, *all_rows_objective, c, options, fit, race_mark(refined, fit, n, options));
      learned.evaluations += fit.all_rows_evaluations;
    }
    fit.criterion = information_criterion(fit, static_cast<double>(trusted ? n : fit.subset.subset_size));
    refined.push_back(fit);
  }
  const auto best = [&] {
    std::size_t chosen = 0;
    for (std::size_t c = 1; c < learned.candidates.size(); ++c) {
      if (learned.candidates[c].criterion < learned.candidates[chosen].criterion) chosen = c;
    }
    return chosen;
  };
  learned.chosen = best();
  if (trusted) {  // step 3: on the same all-rows objective only
    compose_sums(context, *vecchia, *all_rows_objective, x, y, d, options, learned);
    learned.chosen = best();
  }
  learned.all_rows = trusted;
  learned.declined = all_rows && !trusted;
  learned.rows = trusted ? n : learned.candidates.front().subset.subset_size;
  if (learned.declined) refine_on_larger_subsets(context, rows, partition, options, journal, learned);
  // Step 2'': from the Vecchia optimum or the ladder's (unless its last rung had all the rows already).
  const bool exact_already = learned.declined && learned.rows >= n;
  if (options.stochastic.max_steps > 0 && options.mean.empty() && (learned.all_rows || learned.declined) &&
      !exact_already) {
    refine_by_stochastic_gradient_on_all_rows(context, rows, partition, options, journal, learned);
  }
  learned.mean = options.mean;
  learned.seconds = seconds_since(started);
  return learned;
}

}  // namespace

LearnedModel learn_model(Context& context, RowSource& rows, const RowPartition& partition,
                         const ModelLearningOptions& options, SearchJournal* journal) {
  GPSTREAM_CHECK(!options.kernels.empty(), "no kernel to learn");
  const bool least_squares = options.mean_fit == ModelLearningOptions::MeanFit::least_squares;
  if (!options.mean.empty() && (least_squares || options.leave_out_redundant_mean_inputs)) {
    // β by least squares, first (one pass): the basis the trend can use, and, for OLS, its coefficients.
    LeastSquaresTrend trend;
    if (options.leave_out_redundant_mean_inputs) {
      trend = least_squares_trend(context.communicator(), rows, partition, options.mean);
    } else {
      trend.mean = options.mean;
      trend.mean.coefficients =
          least_squares_coefficients(context.communicator(), rows, partition, options.mean, options.input_names);
    }
    ModelLearningOptions reduced = options;
    reduced.leave_out_redundant_mean_inputs = false;
    reduced.mean = trend.mean;
    reduced.mean.coefficients.clear();
    LearnedModel learned;
    if (least_squares) {  // the kernel on the residual, with no mean left to fit
      MeanResidualRowSource residual(rows, trend.mean);
      reduced.mean = {};
      learned = learn_candidates(context, residual, partition, reduced, journal);
      for (CandidateFit& fit : learned.candidates) fit.mean_coefficients = trend.mean.coefficients;
    } else {  // jointly with the kernel, on the basis it can use
      learned = learn_candidates(context, rows, partition, reduced, journal);
    }
    learned.mean = trend.mean;
    learned.mean.coefficients.clear();
    learned.mean_inputs_left_out = trend.left_out;
    return learned;
  }
  return learn_candidates(context, rows, partition, options, journal);
}

GaussianProcessPrior learned_prior(const LearnedModel& learned) {
  GaussianProcessPrior prior{learned.best().hyperparameters, learned.mean};
  prior.mean.coefficients = learned.best().mean_coefficients;
  if (prior.mean.empty()) prior.mean = {};
  return prior;
}

}  // namespace gpstream

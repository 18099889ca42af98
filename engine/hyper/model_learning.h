// Learning the model — the kernel family, its hyperparameters and the prior
// mean's coefficients — as `hyper` and `train --learn-hyper` do it:
//
//  1. on a random subset of rows (2,000), by the exact marginal likelihood
//     with random restarts (subset_learning.h), for every candidate kernel:
//     one (a sum kernel too), or the four stationary ARD families of
//     `--kernel auto`;
//  2. on all n rows, by the Vecchia likelihood (vecchia_likelihood.h), from
//     each candidate's subset optimum: a few rounds, the conditioning sets
//     recomputed for the lengthscales reached — where a subset cannot see
//     the optimum (a random 2% of 10⁵ rows has ~7× the data's spacing);
//     Step 2 runs only where the Vecchia likelihood can be trusted: at each
//     candidate's subset optimum it is compared with the exact likelihood on
//     a sample of rows (VecchiaCheck); where it is off (inputs of many
//     dimensions, lengthscales long against the rows' spacing: kin40k, sgemm)
//     its optimum would be worse than the subset's, and learning stays there.
//  2'. where step 2 declines, the chosen candidate is refined instead by the
//     exact likelihood on larger random subsets — twice the rows each rung,
//     from the last rung's optimum, up to `exact_rows` (8,000): on kin40k
//     the noise variance learned on 2,000 rows is 3.5× the one on 10,000
//     and the test RMSE 24 % worse (docs/model.md). O(s³) a rung, so the
//     ladder stops where its factor stops being affordable.
//  2''. when asked (stochastic.max_steps > 0), the chosen candidate on all
//     n rows by the exact likelihood's stochastic gradient
//     (stochastic_refinement.h): Newton steps from step 2's or 2''s
//     optimum, the curvature from a subset, until the gradient is zero
//     within its estimate's error. Not where the rungs reached all n rows,
//     or where the mean is fitted jointly (its β would need more solves).
//  3. the candidate with the lowest −log p on all rows (on the subset when
//     step 2 is off), penalised by its parameters' count as the Bayesian
//     information criterion does: the kernel chosen by evidence.
//
// A journal (search_journal.h) records every evaluation of all three steps,
// so that a checkpointed learning resumes to the same bits.
#pragma once

#include "engine/core/context.h"
#include "engine/data/row_partition.h"
#include "engine/data/row_source.h"
#include "engine/hyper/search_journal.h"
#include "engine/hyper/stochastic_refinement.h"
#include "engine/hyper/subset_learning.h"
#include "engine/hyper/vecchia_likelihood.h"
#include "engine/kernels/gaussian_process_prior.h"

#include <optional>
#include <string>
#include <vector>

namespace gpstream {

// The terms `auto` composes up to where the front ends learn with their
// defaults (`max_terms` of gpstream hyper, train --learn-hyper, Python's learn).
inline constexpr std::size_t kAutomaticMaxTerms = 3;

struct ModelLearningOptions {
  // The kernels' shapes (types; sums have added terms), their values learned: one, or the candidates of `auto`.
  std::vector<KernelHyperparameters> kernels = {KernelHyperparameters{}};
  MeanFunction mean;  // the prior mean's basis
  // The default trend: inputs that are constant or a combination of the others are left out (and said
  // which) instead of refused, as an explicitly named input is (data/mean_function.h).
  bool leave_out_redundant_mean_inputs = false;
  std::vector<std::string> input_names;  // for messages ("the mean's input \"x7\" is constant")
  // How β is fitted: by ordinary least squares first, the kernel then learned on the residual (restricted spatial
  // regression, data/mean_function.h), or jointly with the kernel by maximum likelihood (generalised least squares).
  enum class MeanFit { least_squares, generalised_least_squares } mean_fit = MeanFit::least_squares;
  SubsetLearningOptions subset;  // step 1 (its mean and journal are set from here)
  bool all_rows = true;          // step 2
  VecchiaOptions vecchia;
  std::size_t rounds = 3;             // conditioning-set rounds of step 2, at most
  std::size_t max_evaluations = 300;  // per round of step 2
  // When the Vecchia likelihood is trusted (VecchiaCheck): its error per row at most this (nats).
  double trusted_error_per_row = 0.01;
  // Step 2': where step 2 declines, the chosen candidate's exact refinement on subsets of up to this many rows
  // (no larger than the subset: off).
  std::size_t exact_rows = 8000;
  // Whether step 2''s rungs search from a curvature carried from rung to rung — the exact Hessian at the
  // subset's optimum first, by differences of its gradient (p + 1 evaluations on the subset) — by quasi-Newton
  // steps [NocedalWright06 §6.1]; false: by L-BFGS from none, as always where the mean is fitted jointly (the
  // subset's Hessian is the kernel's alone).
  bool carry_curvature = true;
  // Step 2'': after step 2', on all rows (stochastic.max_steps = 0: off); the curvature it starts from on a
  // subset of at most this many rows (of the last rung's).
  StochasticRefinementOptions stochastic;
  std::size_t curvature_rows = 4000;
  // Step 3, after step 2 on all rows: sums of up to this many terms of the chosen family at separated scales,
  // each started from the chosen fit and refined on all rows, compared with it on the same objective
  // (compose_sums in model_learning.cpp; 1: none). The search of [Duvenaud13] restricted to sums of one
  // family across scales, where real fields with gaps need more than one roughness.
  std::size_t max_terms = 1;
  double scale_ratio = 5;  // between the lengthscales a new term starts at and its neighbour's
  // What a sum must gain over the single kernel beyond the BIC's penalty, in nats per row. The BIC counts
  // every row as independent evidence, and a spatial field's rows are not: at n = 10⁵ a gain of a few
  // thousandths of a nat per row passes it. Measured (docs/model.md): bcef's best pair gained 0.0036 a row and
  // predicted its test region worse (6.96 m against 6.64 m); a generated two-scale field's sum gained 0.0089 a
  // row and predicted 20 % better; the satellite set's sum, 0.011 a row, 25 % better.
  double sum_margin_per_row = 0.005;
  // Racing [issue 57]: steps 2 and 3 refine the candidates best first (step 2 in the order of their subset
  // criteria), and a candidate's Fisher scoring stops where its objective, less kRaceMargin times the decrease
  // its quadratic model predicts, could not make its criterion beat the best so far (docs/model.md).
  bool race = true;
};

// The Vecchia likelihood against the exact one on as many random rows as
// the subset has, at a candidate's subset optimum: on bcef it is within
// 4e-4 relative (m = 30, 10,000 rows), on kin40k and sgemm (8 and 14
// inputs, long lengthscales) off by 40-140 % with a gradient that points
// elsewhere (bench/bench_vecchia.cpp, docs/model.md).
// The value, not the gradient, is compared: at the subset's optimum the
// exact gradient is near zero, and its direction is noise.
struct VecchiaCheck {
  std::size_t rows = 0;
  double error_per_row = 0.0;  // |−log p (Vecchia) − (−log p (exact))| / rows, in nats
  bool trusted = false;
};

// One candidate kernel's fits.
struct CandidateFit {
  std::string name;        // kernel_name(): "matern12", "matern12+rbf"
  LearnedOnSubset subset;  // step 1
  VecchiaCheck check;      // before step 2
  // Step 2 (or step 1's result without it): the optimum and −log p there.
  KernelHyperparameters hyperparameters;
  std::vector<double> mean_coefficients;
  double objective = 0.0;
  // What candidates are compared on: the objective plus ½ (parameters) log(rows) — the Bayesian information
  // criterion's penalty [Schwarz78]; the same for the four families of `auto`, which have as many parameters.
  // A sum of step 3 adds sum_margin_per_row for every row: it must win by more than that.
  double criterion = 0.0;
  std::size_t all_rows_evaluations = 0, rounds = 0;
  double all_rows_seconds = 0.0;
  // Step 3's sums have no subset fit (their start is the chosen fit's, split across scales); one whose Vecchia
  // check fails at its optimum is not compared (criterion +inf: the rows' objective cannot be trusted for it).
  // Not compared either where a term's lengthscales are shorter than the rows resolve (the median distance
  // between nearest rows beyond one lengthscale): such a term acts as noise.
  bool composed = false;
  bool resolved = true;
  bool compared = true;
  // Stopped by racing (ModelLearningOptions::race): its objective could not reach the best candidate's
  // criterion, its model's predicted decrease granted kRaceMargin times over (hyper/hyperparameter_search.h).
  bool raced = false;
};

struct LearnedModel {
  std::vector<CandidateFit> candidates;
  std::size_t chosen = 0;  // the candidate with the lowest criterion
  bool all_rows = false;   // whether the objectives are over all rows (Vecchia) or the subset's (exact)
  bool declined = false;   // step 2 was asked for but not run: a candidate's VecchiaCheck failed
  // Step 2': the chosen candidate's rungs on larger subsets, in order (its hyperparameters and objective are
  // the last one's).
  std::vector<LearnedOnSubset> refinements;
  // Step 2'': the chosen candidate on all rows by stochastic gradient steps (its hyperparameters are its answer;
  // its objective stays the last rung's: the steps estimate the gradient, not the value).
  std::optional<StochasticRefinement> stochastic;
  std::size_t rows = 0;  // the rows the chosen candidate's hyperparameters were learned on
  MeanFunction mean;     // the prior mean's basis learned (the options', less the inputs left out)
  std::vector<std::size_t> mean_inputs_left_out;
  double seconds = 0.0;
  std::size_t evaluations = 0;

  const CandidateFit& best() const { return candidates.at(chosen); }
};

// Learns from `rows` (this rank's, standardised; all n of them are gathered
// in memory on every rank for step 2, reserved in the Context's budget).
// The Context's seed draws the subset, the restarts and the random order.
// Reports every evaluation to the Context's observers (done: the candidate
// and round). With a `journal`, evaluations it holds are replayed.
LearnedModel learn_model(Context& context, RowSource& rows, const RowPartition& partition,
                         const ModelLearningOptions& options, SearchJournal* journal = nullptr);

// The prior learned: the chosen candidate's kernel and the mean's basis with its coefficients (the
// targets the solver then sees are the residuals of the mean).
GaussianProcessPrior learned_prior(const LearnedModel& learned);

}  // namespace gpstream

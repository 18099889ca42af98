// Learning the model (hyper/model_learning.h): the kernel chosen by evidence,
// the mean by least squares, and a search resumed from its journal.
#include "engine/core/progress.h"
#include "engine/data/mean_function.h"
#include "engine/hyper/hyperparameter_search.h"
#include "engine/hyper/model_learning.h"
#include "engine/hyper/sum_starts.h"
#include "tests/engine/problems.h"

#include <doctest/doctest.h>

#include <algorithm>

#include <cmath>
#include <limits>
#include <random>

using namespace gpstream;
using namespace gpstream::testing;

namespace {

ModelLearningOptions compare_kernels(std::size_t subset, bool all_rows) {
  ModelLearningOptions options;
  options.kernels.clear();
  for (const KernelType type : kAutoKernelCandidates)
    options.kernels.push_back(KernelHyperparameters(type, {}, 1.0, 0.1));
  options.subset.subset = subset;
  options.subset.restarts = 1;
  options.all_rows = all_rows;
  options.vecchia.neighbours = 20;
  return options;
}

}  // namespace

TEST_CASE("auto picks the kernel that generated the data: Matérn 1/2 from a rough GP, rbf from a smooth one") {
  Context context({.seed = 3});
  for (const auto& [type, expected] :
       {std::pair{KernelType::matern12, "matern12"}, std::pair{KernelType::squared_exponential_ard, "rbf"}}) {
    CAPTURE(expected);
    const Problem p = draw_from_gp({type, {0.8, 1.1}, 1.0, 0.01}, 700, 17);
    InMemoryRowSource rows = p.source();
    const LearnedModel learned =
        learn_model(context, rows, RowPartition::whole(p.rows()), compare_kernels(500, /*all_rows=*/true));
    CAPTURE(learned.best().objective);
    REQUIRE(learned.candidates.size() == 4);
    // The rough GP's Vecchia likelihood (m = 20) is within 0.01 nats per row of the exact one, and learning goes on
    // to all rows; the smooth GP's is not (0.02: a smooth field's rows inform each other from far), and it stays
    // with the subset's optimum.
    CHECK(learned.all_rows == (type == KernelType::matern12));
    for (const CandidateFit& fit : learned.candidates) {
      CAPTURE(fit.name);
      CAPTURE(fit.check.error_per_row);
      if (type == KernelType::matern12 || fit.name == "rbf") CHECK(fit.check.trusted == (type == KernelType::matern12));
    }
    CHECK(learned.best().name == expected);
  }
}

TEST_CASE("where the Vecchia likelihood is off the exact one, learning stays with the subset's optimum") {
  // A smooth GP conditioned on 2 neighbours a row: the approximation misses most of each row's information.
  const Problem p = draw_from_gp({KernelType::squared_exponential_ard, {0.8, 1.1}, 1.0, 0.01}, 700, 17);
  InMemoryRowSource rows = p.source();
  ModelLearningOptions options = compare_kernels(500, /*all_rows=*/true);
  options.vecchia.neighbours = 2;
  options.exact_rows = 0;            // without step 2' (the next test)
  options.stochastic.max_steps = 0;  // nor step 2
  Context context({.seed = 3});
  const LearnedModel declined = learn_model(context, rows, RowPartition::whole(p.rows()), options);
  CHECK(declined.declined);
  CHECK_FALSE(declined.all_rows);
  for (const CandidateFit& fit : declined.candidates) {
    CAPTURE(fit.name);
    CHECK(fit.check.rows == 500);
    CHECK_FALSE(fit.check.trusted);
    CHECK(fit.check.error_per_row > options.trusted_error_per_row);
  }
  // The same as learning on the subset alone, to the bit.
  options.all_rows = false;
  Context alone({.seed = 3});
  const LearnedModel subset = learn_model(alone, rows, RowPartition::whole(p.rows()), options);
  CHECK_FALSE(subset.declined);
  REQUIRE(subset.candidates.size() == declined.candidates.size());
  CHECK(subset.chosen == declined.chosen);
  for (std::size_t c = 0; c < subset.candidates.size(); ++c) {
    CHECK(log_parameters(subset.candidates[c].hyperparameters) ==
          log_parameters(declined.candidates[c].hyperparameters));
  }
}

TEST_CASE(
    "where the Vecchia likelihood is off, the chosen kernel is refined on larger subsets up to the exact "
    "optimum on all rows") {
  const Problem p = draw_from_gp({KernelType::squared_exponential_ard, {0.8, 1.1}, 1.0, 0.01}, 900, 17);
  InMemoryRowSource rows = p.source();
  ModelLearningOptions options = compare_kernels(200, /*all_rows=*/true);
  options.vecchia.neighbours = 2;
  options.exact_rows = 900;  // rungs of 400, 800, then all 900 rows
  Context context({.seed = 3});
  const LearnedModel learned = learn_model(context, rows, RowPartition::whole(p.rows()), options);
  REQUIRE(learned.declined);
  REQUIRE(learned.refinements.size() == 3);
  CHECK(learned.refinements[0].subset_size == 400);
  CHECK(learned.refinements[1].subset_size == 800);
  CHECK(learned.refinements[2].subset_size == 900);
  CHECK(learned.rows == 900);
  const CandidateFit& best = learned.best();
  CHECK(best.objective == learned.refinements.back().search.objective);

  // The last rung is the exact likelihood on all 900 rows: the refined point is its optimum (the gradient there
  // is a small fraction of the one at the 200-row subset's optimum: a rung stops where a step would gain less than
  // the tolerance per row, 0.09 nats), at least as good as a search on all rows from the data-informed start, and
  // better than the subset's optimum.
  ExactLikelihood exact(p.x.data(), p.y, p.d);
  const MarginalLikelihood at_subset_optimum = exact.evaluate(best.subset.search.hyperparameters, {});
  const MarginalLikelihood at_refined = exact.evaluate(best.hyperparameters, {});
  CHECK(at_refined.value == doctest::Approx(best.objective).epsilon(1e-9));
  CHECK(at_refined.value < at_subset_optimum.value - 1.0);
  const auto largest = [](const std::vector<double>& values) {
    double result = 0.0;
    for (const double value : values) result = std::max(result, std::abs(value));
    return result;
  };
  CHECK(largest(at_refined.gradient) < 0.1 * largest(at_subset_optimum.gradient));
  SubsetLearningOptions direct = options.subset;
  direct.subset = 900;
  Context direct_context({.seed = 3});
  const LearnedOnSubset all = learn_on_subset(direct_context, rows, best.hyperparameters.type, direct);
  CHECK(at_refined.value <= all.search.objective + 0.01);

  // In a 6 MiB budget the 800-row rung (K̄ and its workspace: 10 MB) does not fit: the ladder stops after the
  // 400-row rung, which is the same as above.
  Context small({.memory_budget_bytes = std::size_t{6} << 20, .seed = 3});
  const LearnedModel stopped = learn_model(small, rows, RowPartition::whole(p.rows()), options);
  REQUIRE(stopped.refinements.size() == 1);
  CHECK(stopped.rows == 400);
  CHECK(log_parameters(stopped.best().hyperparameters) ==
        log_parameters(learned.refinements.front().search.hyperparameters));
}

TEST_CASE("the ladder's rungs, searched from a carried curvature, reach L-BFGS's optimum in fewer evaluations") {
  // Six inputs, three of them irrelevant (their lengthscales drift along a flat likelihood), as the wide sets
  // where the ladder runs.
  const Problem p =
      draw_from_gp({KernelType::squared_exponential_ard, {0.8, 1.1, 1.5, 1e3, 1e3, 1e3}, 1.0, 0.01}, 1000, 23);
  InMemoryRowSource rows = p.source();
  ModelLearningOptions options;
  options.kernels = {KernelHyperparameters(KernelType::squared_exponential_ard, {}, 1.0, 0.1)};
  options.subset.subset = 250;
  options.subset.restarts = 0;
  options.vecchia.neighbours = 2;  // declined: the ladder runs
  options.exact_rows = 1000;       // rungs of 500 and 1,000 rows: the last is all of them
  const auto rung_evaluations = [](const LearnedModel& learned) {
    std::size_t evaluations = 0;
    for (const LearnedOnSubset& rung : learned.refinements) evaluations += rung.evaluations;
    return evaluations;
  };
  Context carried_context({.seed = 3});
  const LearnedModel carried = learn_model(carried_context, rows, RowPartition::whole(p.rows()), options);
  options.carry_curvature = false;
  Context plain_context({.seed = 3});
  const LearnedModel plain = learn_model(plain_context, rows, RowPartition::whole(p.rows()), options);
  REQUIRE(carried.declined);
  REQUIRE(carried.refinements.size() == 2);
  REQUIRE(plain.refinements.size() == 2);
  CAPTURE(carried.refinements.back().search.starts.front().stop_reason);
  CAPTURE(plain.refinements.back().search.starts.front().stop_reason);
  CAPTURE(rung_evaluations(carried));
  CAPTURE(rung_evaluations(plain));
  // The exact likelihood on all 1,000 rows at both answers: as low within the tolerance's worth, and the
  // carried search's gradient as small in the parameters the data inform.
  ExactLikelihood exact(p.x.data(), p.y, p.d);
  const MarginalLikelihood at_carried = exact.evaluate(carried.best().hyperparameters, {});
  const MarginalLikelihood at_plain = exact.evaluate(plain.best().hyperparameters, {});
  CHECK(at_carried.value <= at_plain.value + 1e-3 * std::abs(at_plain.value));
  for (std::size_t j = 0; j < 3; ++j) {
    CHECK(std::log(carried.best().hyperparameters.lengthscales[j]) ==
          doctest::Approx(std::log(plain.best().hyperparameters.lengthscales[j])).epsilon(0.02).scale(1.0));
  }
  CHECK(2 * rung_evaluations(carried) <= rung_evaluations(plain));
  // The evaluations counted include the curvature's on the subset (p + 1).
  CHECK(carried.evaluations == carried.candidates.front().subset.evaluations +
                                   log_parameters(carried.best().hyperparameters).size() + 1 +
                                   rung_evaluations(carried));
}

TEST_CASE("the mean by least squares is the normal equations' solution, and learning models its residual") {
  Problem p = make_problem(900, 2, 61);
  for (std::size_t i = 0; i < p.rows(); ++i) p.y[i] += 1.5 - 0.8 * p.x[i * 2 + 1];  // a trend in x₂
  InMemoryRowSource rows = p.source();
  MeanFunction mean = parse_mean_function("linear:x2", {"x1", "x2"});
  SingleProcess alone;
  const std::vector<double> beta = least_squares_coefficients(alone, rows, RowPartition::whole(p.rows()), mean, {});
  // The 2×2 normal equations by hand.
  double n = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
  for (std::size_t i = 0; i < p.rows(); ++i) {
    const double x = p.x[i * 2 + 1];
    n += 1, sx += x, sxx += x * x, sy += p.y[i], sxy += x * p.y[i];
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx), intercept = (sy - slope * sx) / n;
  REQUIRE(beta.size() == 2);
  CHECK(beta[0] == doctest::Approx(intercept).epsilon(1e-10));
  CHECK(beta[1] == doctest::Approx(slope).epsilon(1e-10));
  // A constant input cannot carry a trend: said, naming it.
  Problem flat = p;
  for (std::size_t i = 0; i < flat.rows(); ++i) flat.x[i * 2] = 3.0;
  InMemoryRowSource flat_rows = flat.source();
  CHECK_THROWS_WITH_AS(least_squares_coefficients(alone, flat_rows, RowPartition::whole(flat.rows()),
                                                  parse_mean_function("linear", {"a", "b"}), {"a", "b"}),
                       doctest::Contains("input \"a\" is constant"), Error);

  Context context;
  ModelLearningOptions options;
  options.mean = mean;
  options.subset.subset = 300;
  options.subset.restarts = 0;
  options.all_rows = false;
  const LearnedModel learned = learn_model(context, rows, RowPartition::whole(p.rows()), options);
  CHECK(learned.best().mean_coefficients == beta);
}

TEST_CASE(
    "with all-rows steps, the chosen kernel ends at the exact likelihood's optimum over all rows, after the "
    "ladder or after the Vecchia likelihood") {
  for (const KernelType type : {KernelType::squared_exponential_ard, KernelType::matern12}) {
    CAPTURE(kernel_type_name(type));
    const Problem p = draw_from_gp({type, {0.8, 1.1}, 1.0, 0.01}, 800, 17);
    InMemoryRowSource rows = p.source();
    ModelLearningOptions options = compare_kernels(200, /*all_rows=*/true);
    options.kernels = {KernelHyperparameters(type, {}, 1.0, 0.1)};
    // rbf: the Vecchia likelihood (m = 2) is declined, and no rung: the refinement starts from the 200-row
    // subset's optimum, far from all rows'; matern12: trusted (m = 20), its optimum already close to the exact one.
    const bool declined = type == KernelType::squared_exponential_ard;
    if (declined) options.vecchia.neighbours = 2;
    options.exact_rows = 0;
    Context before_context({.seed = 3});
    const LearnedModel before = learn_model(before_context, rows, RowPartition::whole(p.rows()), options);
    CHECK(before.all_rows == (type == KernelType::matern12));
    CHECK_FALSE(before.stochastic);

    options.stochastic.max_steps = 8;
    options.stochastic.gradient.probes = 32;
    options.stochastic.gradient.tolerance = 1e-6;
    Context context({.seed = 3});
    const LearnedModel learned = learn_model(context, rows, RowPartition::whole(p.rows()), options);
    REQUIRE(learned.stochastic);
    CHECK(learned.rows == 800);
    // The exact optimum over all 800 rows, from the same start.
    SubsetLearningOptions direct = options.subset;
    direct.subset = p.rows();
    direct.initial = before.best().hyperparameters;
    direct.restarts = 0;
    Context direct_context({.seed = 3});
    const KernelHyperparameters optimum = learn_on_subset(direct_context, rows, type, direct).search.hyperparameters;
    const std::vector<double> from = log_parameters(before.best().hyperparameters),
                              to = log_parameters(learned.best().hyperparameters), target = log_parameters(optimum);
    double distance_before = 0.0, distance_after = 0.0;
    for (std::size_t k = 0; k < target.size(); ++k) {
      CAPTURE(k);
      distance_before += std::pow(from[k] - target[k], 2);
      distance_after += std::pow(to[k] - target[k], 2);
      CHECK(std::abs(to[k] - target[k]) <= 4.0 * learned.stochastic->standard_errors[k] + 0.02);
    }
    CAPTURE(learned.stochastic->stop_reason);
    CAPTURE(std::sqrt(distance_before));
    // From far, most of the way there; from near, no farther than the estimate's own error allows.
    if (declined) CHECK(std::sqrt(distance_after) < 0.5 * std::sqrt(distance_before));
  }
}

TEST_CASE("a learning resumed from its journal ends where the uninterrupted one does, bit for bit") {
  const Problem p = make_problem(1500, 2, 62);
  InMemoryRowSource rows = p.source();
  ModelLearningOptions options = compare_kernels(300, /*all_rows=*/true);
  options.kernels.resize(2);
  options.mean = parse_mean_function("constant", {"x1", "x2"});
  Context whole_context;
  SearchJournal whole;
  const LearnedModel uninterrupted = learn_model(whole_context, rows, RowPartition::whole(p.rows()), options, &whole);
  REQUIRE(whole.entries().size() > 40);

  // Stopped after 37 evaluations (as Ctrl-C would: between two of them), then resumed from what was recorded.
  class StopAfter final : public RunObserver {
   public:
    StopAfter(StopFlag& flag, std::size_t evaluations) : flag_(flag), left_(evaluations) {}
    void on_iteration(const IterationReport&) override {
      if (--left_ == 0) flag_.request();
    }

   private:
    StopFlag& flag_;
    std::size_t left_;
  };
  StopFlag stop;
  StopAfter after(stop, 37);
  Context interrupted_context;
  interrupted_context.set_stop_flag(&stop);
  SearchJournal partial;
  {
    const Context::ObserverScope observe(interrupted_context, {&after});
    CHECK_THROWS_AS(learn_model(interrupted_context, rows, RowPartition::whole(p.rows()), options, &partial),
                    Cancelled);
  }
  REQUIRE(partial.entries().size() >= 37);
  REQUIRE(partial.entries().size() < whole.entries().size());
  Context resumed_context;
  SearchJournal replay(partial.entries(), partial.warm_start);
  const LearnedModel resumed = learn_model(resumed_context, rows, RowPartition::whole(p.rows()), options, &replay);
  CHECK(replay.entries().size() == whole.entries().size());
  CHECK(resumed.best().name == uninterrupted.best().name);
  CHECK(log_parameters(resumed.best().hyperparameters) == log_parameters(uninterrupted.best().hyperparameters));
  CHECK(resumed.best().mean_coefficients == uninterrupted.best().mean_coefficients);
  CHECK(resumed.best().objective == uninterrupted.best().objective);
}

TEST_CASE("auto composes: a sum of a short and a long term from a two-scale field, a single kernel from one scale") {
  // A field of a short and a long Matérn 3/2 term, and one of a single scale; 1,500 rows on [−2, 2]².
  const KernelHyperparameters two_scales{
      KernelType::matern32, {0.15, 0.15}, 0.5, 0.01, {{KernelType::matern32, {1.5, 1.5}, 1.0}}};
  const KernelHyperparameters one_scale{KernelType::matern32, {0.4, 0.4}, 1.0, 0.01};
  for (const bool two : {true, false}) {
    CAPTURE(two);
    const Problem p = draw_from_gp(two ? two_scales : one_scale, 1500, 23);
    InMemoryRowSource rows = p.source();
    ModelLearningOptions options = compare_kernels(400, /*all_rows=*/true);
    options.max_terms = 3;
    Context context({.seed = 5});
    const LearnedModel learned = learn_model(context, rows, RowPartition::whole(p.rows()), options);
    REQUIRE(learned.all_rows);
    const auto composed = std::count_if(learned.candidates.begin(), learned.candidates.end(),
                                        [](const CandidateFit& fit) { return fit.composed; });
    CHECK(composed >= 2);  // a longer and a shorter term were tried (and a third where a pair won)
    const CandidateFit& best = learned.best();
    CAPTURE(best.name);
    CAPTURE(best.criterion);
    for (const CandidateFit& fit : learned.candidates) {
      CAPTURE(fit.name);
      CAPTURE(fit.criterion);
      CHECK(fit.criterion >= best.criterion);
      if (fit.composed) CHECK(fit.hyperparameters.added.size() >= 1);
    }
    if (two) {
      REQUIRE(best.hyperparameters.added.size() >= 1);
      // Its terms span the two scales: the shortest near 0.15, the longest beyond 0.6.
      std::vector<double> scales = {best.hyperparameters.lengthscales[0]};
      for (const KernelTerm& term : best.hyperparameters.added) scales.push_back(term.lengthscales[0]);
      const auto [shortest, longest] = std::minmax_element(scales.begin(), scales.end());
      CHECK(*shortest < 0.3);
      CHECK(*longest > 0.6);
    } else {
      CHECK(best.hyperparameters.added.empty());
    }
  }
}

TEST_CASE("racing stops the sums that cannot catch the chosen kernel, and chooses what the full comparison does") {
  const KernelHyperparameters one_scale{KernelType::matern32, {0.4, 0.4}, 1.0, 0.01};
  const Problem p = draw_from_gp(one_scale, 1500, 23);
  InMemoryRowSource rows = p.source();
  ModelLearningOptions options = compare_kernels(400, /*all_rows=*/true);
  options.kernels = {KernelHyperparameters(KernelType::matern32, {}, 1.0, 0.1)};
  options.max_terms = 3;
  const auto learn = [&](bool race) {
    options.race = race;
    Context context({.seed = 5});
    return learn_model(context, rows, RowPartition::whole(p.rows()), options);
  };
  const LearnedModel full = learn(false), raced = learn(true);
  REQUIRE(full.all_rows);
  CHECK(raced.chosen == full.chosen);
  CHECK(log_parameters(raced.best().hyperparameters) == log_parameters(full.best().hyperparameters));
  std::size_t stopped = 0, full_evaluations = 0, raced_evaluations = 0;
  for (const CandidateFit& fit : raced.candidates) {
    stopped += fit.raced ? 1 : 0;
    raced_evaluations += fit.all_rows_evaluations;
    CHECK(fit.criterion >= raced.best().criterion);
  }
  for (const CandidateFit& fit : full.candidates) {
    CHECK_FALSE(fit.raced);
    full_evaluations += fit.all_rows_evaluations;
  }
  CHECK(stopped >= 1);
  CHECK(raced_evaluations < full_evaluations);
}

TEST_CASE("racing the restarts: a family whose first start trails by more than the margin skips its restarts") {
  // A smooth field: rbf, searched first, leads; the rougher families trail it.
  const KernelHyperparameters smooth{KernelType::squared_exponential_ard, {0.6, 0.6}, 1.0, 0.001};
  const Problem p = draw_from_gp(smooth, 600, 31);
  InMemoryRowSource rows = p.source();
  ModelLearningOptions options = compare_kernels(600, /*all_rows=*/false);
  const auto learn = [&](bool race) {
    options.race = race;
    Context context({.seed = 5});
    return learn_model(context, rows, RowPartition::whole(p.rows()), options);
  };
  const LearnedModel full = learn(false), raced = learn(true);
  CHECK(raced.best().name == full.best().name);
  CHECK(log_parameters(raced.best().hyperparameters) == log_parameters(full.best().hyperparameters));
  std::size_t skipped = 0;
  for (std::size_t c = 0; c < raced.candidates.size(); ++c) {
    const HyperparameterSearchResult& search = raced.candidates[c].subset.search;
    CHECK(full.candidates[c].subset.search.restarts_skipped == 0);
    if (search.restarts_skipped == 0) continue;
    ++skipped;
    // Only a first start that trailed the best criterion of the candidates before it by the margin.
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t b = 0; b < c; ++b) {
      const CandidateFit& before = raced.candidates[b];
      best = std::min(best,
                      before.subset.search.objective +
                          0.5 * static_cast<double>(log_parameters(before.hyperparameters).size()) * std::log(600.0));
    }
    CHECK(search.starts.size() == 1);
    CHECK(search.objective +
              0.5 * static_cast<double>(log_parameters(search.hyperparameters).size()) * std::log(600.0) >
          best + kRestartMargin);
  }
  CHECK(skipped >= 1);
}

TEST_CASE("step 3's starts: a term at a separated scale, a split of the inputs, and whether rows resolve a term") {
  // A term added beside the longest, capped at twice the rows' extent, taking a third of the variance.
  const KernelHyperparameters chosen(KernelType::matern12, {0.035, 0.034, 5.97}, 0.9, 0.04);
  const SumStart longer = with_term(sum_start_of(chosen), 5.0, {4.0, 4.0, 4.0});
  REQUIRE(longer.terms.size() == 2);
  CHECK(longer.terms[1].lengthscales[0] == doctest::Approx(0.175));
  CHECK(longer.terms[1].lengthscales[1] == doctest::Approx(0.17));
  CHECK(longer.terms[1].lengthscales[2] == 8.0);  // 5 × 5.97, capped at twice the extent
  CHECK(longer.terms[0].signal_variance + longer.terms[1].signal_variance == doctest::Approx(0.9));
  CHECK(longer.terms[1].signal_variance == doctest::Approx(0.3));
  // A shorter one goes first: the Vecchia sets follow the first term.
  const SumStart shorter = with_term(sum_start_of(chosen), 0.2, {4.0, 4.0, 4.0});
  CHECK(shorter.terms[0].lengthscales[0] == doctest::Approx(0.007));
  CHECK(kernel_name(shorter.with_noise(0.04)) == "matern12+matern12");

  // bcef's lengthscales split into the coordinates and the covariate: each term ignores the other group.
  const std::optional<SumStart> split = split_by_inputs(chosen);
  REQUIRE(split.has_value());
  REQUIRE(split->terms.size() == 2);
  CHECK(split->terms[0].lengthscales == std::vector<double>{0.035, 0.034, kLongestLengthscale});
  CHECK(split->terms[1].lengthscales == std::vector<double>{kLongestLengthscale, kLongestLengthscale, 5.97});
  CHECK(split->terms[0].signal_variance == doctest::Approx(0.6));
  // No split for two inputs, for lengthscales within a factor 10, or for an input already switched off.
  CHECK_FALSE(split_by_inputs({KernelType::matern12, {0.03, 5.0}, 1.0, 0.1}).has_value());
  CHECK_FALSE(split_by_inputs({KernelType::matern12, {0.3, 0.5, 2.0}, 1.0, 0.1}).has_value());
  CHECK_FALSE(split_by_inputs({KernelType::matern12, {0.03, 0.05, kLongestLengthscale}, 1.0, 0.1}).has_value());
  // The widest ratio between neighbours decides where the groups part.
  const std::optional<SumStart> three = split_by_inputs({KernelType::matern12, {0.01, 0.2, 0.25, 30.0}, 1.0, 0.1});
  REQUIRE(three.has_value());
  CHECK(three->terms[0].lengthscales[2] == 0.25);
  CHECK(three->terms[1].lengthscales[3] == 30.0);

  // Rows on a unit grid: the nearest row 1 apart, so 2 lengthscales of 0.5, 0.5 of lengthscales of 2.
  std::vector<double> grid;
  for (int i = 0; i < 20; ++i)
    for (int j = 0; j < 20; ++j) grid.insert(grid.end(), {static_cast<double>(i), static_cast<double>(j)});
  CHECK(median_neighbour_distance(grid, 2, {0.5}) == doctest::Approx(2.0));
  CHECK(median_neighbour_distance(grid, 2, {2.0, 2.0}) == doctest::Approx(0.5));
  CHECK(shortest_lengthscales(KernelHyperparameters(KernelType::matern32, {0.3, 2.0}, 1.0, 0.1,
                                                    {KernelTerm(KernelType::matern32, {1.0, 0.5}, 1.0)})) ==
        std::vector<double>{0.3, 0.5});
}

TEST_CASE("a composed search resumed from its journal ends where the uninterrupted one does, bit for bit") {
  const KernelHyperparameters two_scales{
      KernelType::matern32, {0.15, 0.15}, 0.5, 0.01, {{KernelType::matern32, {1.5, 1.5}, 1.0}}};
  const Problem p = draw_from_gp(two_scales, 800, 29);
  InMemoryRowSource rows = p.source();
  ModelLearningOptions options = compare_kernels(300, /*all_rows=*/true);
  options.kernels = {KernelHyperparameters(KernelType::matern32, {}, 1.0, 0.1)};
  options.max_terms = 3;
  Context whole_context;
  SearchJournal whole;
  const LearnedModel uninterrupted = learn_model(whole_context, rows, RowPartition::whole(p.rows()), options, &whole);
  REQUIRE(uninterrupted.candidates.size() >= 3);
  // Cut inside the composed fits: the journal of the single kernel and part of the sums.
  const std::size_t single_evaluations =
      uninterrupted.candidates.front().subset.evaluations + uninterrupted.candidates.front().all_rows_evaluations;
  REQUIRE(whole.entries().size() > single_evaluations + 2);
  const std::size_t cut = single_evaluations + (whole.entries().size() - single_evaluations) / 2;
  std::vector<SearchJournal::Entry> recorded(whole.entries().begin(), whole.entries().begin() + static_cast<long>(cut));
  SearchJournal replay(std::move(recorded));
  Context resumed_context;
  const LearnedModel resumed = learn_model(resumed_context, rows, RowPartition::whole(p.rows()), options, &replay);
  CHECK(replay.entries().size() == whole.entries().size());
  REQUIRE(resumed.candidates.size() == uninterrupted.candidates.size());
  CHECK(resumed.chosen == uninterrupted.chosen);
  for (std::size_t c = 0; c < resumed.candidates.size(); ++c) {
    CAPTURE(c);
    CHECK(log_parameters(resumed.candidates[c].hyperparameters) ==
          log_parameters(uninterrupted.candidates[c].hyperparameters));
    CHECK(resumed.candidates[c].objective == uninterrupted.candidates[c].objective);
  }
}

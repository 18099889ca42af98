#include "api/parameter_schema.h"

#include "api/job_specification.h"

#include "engine/core/error.h"
#include "engine/dense/dense_variance.h"
#include "engine/hyper/model_learning.h"
#include "engine/kernels/kernel.h"
#include "engine/solvers/dense_solver.h"
#include "engine/sparse/committee_machine.h"
#include "engine/sparse/greedy_basis_selection.h"
#include "engine/sparse/inducing_objective.h"
#include "engine/training/training_method.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpstream {
namespace {

Parameter whole(std::string name, std::string option, std::string default_text, double minimum, std::string help,
                bool python = false) {
  return {.name = std::move(name),
          .option = std::move(option),
          .kind = ParameterKind::whole_number,
          .default_text = std::move(default_text),
          .minimum = minimum,
          .help = std::move(help),
          .python = python};
}
Parameter positive(std::string name, std::string option, std::string default_text, std::string help,
                   bool python = false) {
  return {.name = std::move(name),
          .option = std::move(option),
          .kind = ParameterKind::real,
          .default_text = std::move(default_text),
          .minimum = 0,
          .minimum_excluded = true,
          .help = std::move(help),
          .python = python};
}
Parameter path(std::string name, std::string option, std::string help) {
  return {.name = std::move(name), .option = std::move(option), .kind = ParameterKind::path, .help = std::move(help)};
}
Parameter choice(std::string name, std::string option, std::string default_text, std::string help, bool python = false,
                 std::vector<std::string> choices = {}) {
  return {.name = std::move(name),
          .option = std::move(option),
          .kind = ParameterKind::text,
          .default_text = std::move(default_text),
          .choices = std::move(choices),
          .help = std::move(help),
          .python = python};
}

// `model`'s: the exact GP, or a sparse model.
std::vector<std::string> model_choices() {
  std::vector<std::string> names{std::string(kDenseModel)};
  for (std::string& name : training_method_list(/*dense=*/false)) names.push_back(std::move(name));
  return names;
}

// The method a configuration names; null when it names none (yet).
const TrainingMethod* method_in(const TrainingConfiguration& configuration) {
  return find_training_method(configuration.solver.name);
}
bool dense_method(const TrainingConfiguration& configuration) {
  const TrainingMethod* method = method_in(configuration);
  return method != nullptr && method->dense();
}
bool sparse_method(const TrainingConfiguration& configuration) {
  const TrainingMethod* method = method_in(configuration);
  return method != nullptr && !method->dense();
}
// Whether the method's tolerance is `tol`, else `gap` (TrainingMethod::stops_at_tol).
bool stops_at_tol(const TrainingConfiguration& configuration) {
  const TrainingMethod* method = method_in(configuration);
  return method != nullptr && method->stops_at_tol();
}

// A stored value of the kind the parameter takes, checked against its range.
std::int64_t stored_whole(const Parameter& parameter, const StoredValue& value) {
  const std::int64_t* whole = std::get_if<std::int64_t>(&value);
  GPSTREAM_CHECK(whole != nullptr, "`{}` is not stored as a whole number", parameter.name);
  check_parameter(parameter, static_cast<double>(*whole));
  return *whole;
}
double stored_real(const Parameter& parameter, const StoredValue& value) {
  const double* real = std::get_if<double>(&value);
  GPSTREAM_CHECK(real != nullptr, "`{}` is not stored as a number", parameter.name);
  check_parameter(parameter, *real);
  return *real;
}
const std::string& stored_text(const Parameter& parameter, const StoredValue& value) {
  const std::string* text = std::get_if<std::string>(&value);
  GPSTREAM_CHECK(text != nullptr, "`{}` is not stored as text", parameter.name);
  return *text;
}
std::int64_t as_stored(std::size_t count) { return static_cast<std::int64_t>(count); }

// Each parameter a TrainingConfiguration holds, and where: the one place
// that maps the schema onto the configuration (checkpoints store through it).
void bind_configuration_fields(std::vector<Parameter>& parameters) {
  using Field = Parameter::Field;
  using C = TrainingConfiguration;
  constexpr auto always = [](const C&) { return true; };
  // A parameter of some methods alone (TrainingMethod::parameters) is held
  // by theirs: stored_parameters() keeps it only where the method lists it.
  constexpr auto own_method = [](const C& c) { return method_in(c) != nullptr; };
  const auto bind = [&](std::string_view name, Field field) {
    for (Parameter& parameter : parameters) {
      if (parameter.name == name) {
        parameter.field = field;
        return;
      }
    }
    GPSTREAM_CHECK(false, "no parameter `{}` in the schema to bind", name);
  };
  const auto method_name = Field{nullptr, [](const C& c) -> StoredValue { return c.solver.name; },
                                 [](const Parameter& p, C& c, const StoredValue& v) {
                                   const TrainingMethod* method = find_training_method(stored_text(p, v));
                                   GPSTREAM_CHECK_ARGUMENT(method != nullptr && method->dense() == (p.name == "solver"),
                                                           "`{}`: unknown \"{}\"", p.name, stored_text(p, v));
                                   c.solver.name = stored_text(p, v);
                                 }};
  bind("solver", {dense_method, method_name.get, method_name.set});
  bind("model", {sparse_method, method_name.get, method_name.set});
  const auto size =
      Field{nullptr, [](const C& c) -> StoredValue { return as_stored(c.solver.active_set_size); },
            [](const Parameter& p, C& c, const StoredValue& v) { c.solver.active_set_size = stored_whole(p, v); }};
  bind("active_set_size", {dense_method, size.get, size.set});
  bind("basis_size", {sparse_method, size.get, size.set});
  bind("candidates",
       {always, [](const C& c) -> StoredValue { return as_stored(c.solver.candidates); },
        [](const Parameter& p, C& c, const StoredValue& v) { c.solver.candidates = stored_whole(p, v); }});
  bind("subspace_steps",
       {dense_method, [](const C& c) -> StoredValue { return as_stored(c.solver.subspace_steps); },
        [](const Parameter& p, C& c, const StoredValue& v) { c.solver.subspace_steps = stored_whole(p, v); }});
  bind("precision", {dense_method, [](const C& c) -> StoredValue { return c.solver.precision; },
                     [](const Parameter& p, C& c, const StoredValue& v) {
                       (void)single_precision_wanted(stored_text(p, v));  // checks the choice
                       c.solver.precision = stored_text(p, v);
                     }});
  // Any 64 bits are a seed, stored as the signed integer of the same bits.
  bind("random_state", {always, [](const C& c) -> StoredValue { return static_cast<std::int64_t>(c.seed); },
                        [](const Parameter& p, C& c, const StoredValue& v) {
                          const std::int64_t* bits = std::get_if<std::int64_t>(&v);
                          GPSTREAM_CHECK(bits != nullptr, "`{}` is not stored as a whole number", p.name);
                          c.seed = static_cast<std::uint64_t>(*bits);
                        }});
  const auto tolerance =
      Field{nullptr, [](const C& c) -> StoredValue { return c.job.stopping.tolerance; },
            [](const Parameter& p, C& c, const StoredValue& v) { c.job.stopping.tolerance = stored_real(p, v); }};
  bind("tol", {stops_at_tol, tolerance.get, tolerance.set});
  bind("gap", {[](const C& c) { return method_in(c) != nullptr && !stops_at_tol(c); }, tolerance.get, tolerance.set});
  // 0 stands for "no limit", as the parameters take it.
  bind("max_iter", {always,
                    [](const C& c) -> StoredValue {
                      const std::uint64_t limit = c.job.stopping.max_iterations;
                      return limit == std::numeric_limits<std::uint64_t>::max() ? 0 : static_cast<std::int64_t>(limit);
                    },
                    [](const Parameter& p, C& c, const StoredValue& v) {
                      const std::int64_t limit = stored_whole(p, v);
                      c.job.stopping.max_iterations =
                          limit == 0 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(limit);
                    }});
  bind("time_limit", {always,
                      [](const C& c) -> StoredValue {
                        const double limit = c.job.stopping.time_limit_seconds;
                        return std::isinf(limit) ? 0.0 : limit;
                      },
                      [](const Parameter& p, C& c, const StoredValue& v) {
                        const double limit = stored_real(p, v);
                        c.job.stopping.time_limit_seconds =
                            limit == 0 ? std::numeric_limits<double>::infinity() : limit;
                      }});
  bind("refresh_every",
       {always, [](const C& c) -> StoredValue { return static_cast<std::int64_t>(c.job.stopping.refresh_every); },
        [](const Parameter& p, C& c, const StoredValue& v) { c.job.stopping.refresh_every = stored_whole(p, v); }});
  bind("checkpoint_every",
       {always, [](const C& c) -> StoredValue { return c.job.checkpoint_every_seconds; },
        [](const Parameter& p, C& c, const StoredValue& v) { c.job.checkpoint_every_seconds = stored_real(p, v); }});
  bind("info_pivots",
       {own_method, [](const C& c) -> StoredValue { return as_stored(c.cholqr.information_pivots); },
        [](const Parameter& p, C& c, const StoredValue& v) { c.cholqr.information_pivots = stored_whole(p, v); }});
  bind("objective", {own_method, [](const C& c) -> StoredValue { return inducing_objective_name(c.cholqr.objective); },
                     [](const Parameter& p, C& c, const StoredValue& v) {
                       c.cholqr.objective = parse_inducing_objective(stored_text(p, v));
                     }});
  bind("fixed_hyper",
       {own_method, [](const C& c) -> StoredValue { return std::int64_t{!c.cholqr.learn_hyperparameters}; },
        [](const Parameter& p, C& c, const StoredValue& v) {
          const std::int64_t* given = std::get_if<std::int64_t>(&v);
          GPSTREAM_CHECK(given != nullptr && (*given == 0 || *given == 1), "`{}` is not stored as a switch", p.name);
          c.cholqr.learn_hyperparameters = *given == 0;
        }});
  bind("novelty", {own_method, [](const C& c) -> StoredValue { return c.online.novelty; },
                   [](const Parameter& p, C& c, const StoredValue& v) { c.online.novelty = stored_real(p, v); }});
  bind("passes", {own_method, [](const C& c) -> StoredValue { return as_stored(c.online.passes); },
                  [](const Parameter& p, C& c, const StoredValue& v) { c.online.passes = stored_whole(p, v); }});
}

// The training job's methods (`solver`, `model`) and their own parameters.
std::vector<Parameter> method_parameters() {
  return {
      // The registry's first dense method (auto) chooses for the user.
      choice("solver", "solver", training_methods().front().name,
             "the exact GP's solver: " + training_method_help(/*dense=*/true), false, training_method_list(true)),
      choice("model", "model", std::string(kDenseModel),
             "dense (the exact GP, by `solver`), or a sparse model (docs/sparse-models.md): " +
                 training_method_help(/*dense=*/false),
             false, model_choices()),
      whole(
          "basis_size", "basis", std::to_string(SparseMethodOptions{}.basis_size), 1,
          "sparse models: basis size m (rows of the subset for sd; predict's srm-trans: test rows per block, the basis of "
          "each SR fit)",
          true),
      positive("gap", "gap", fmt::format("{:g}", default_tolerance(ToleranceMeaning::gap)),
               "sggp: stop when the relative gap of the bounds falls below this"),
      whole("info_pivots", "info-pivots", std::to_string(CholQrOptions{}.information_pivots), 1,
            "cholqr: information pivots z ranking the swap candidates"),
      choice("objective", "objective", inducing_objective_name(CholQrOptions{}.objective),
             "cholqr: var (variational free energy) or mle (projected-process likelihood)", false,
             {inducing_objective_name(InducingObjective::variational),
              inducing_objective_name(InducingObjective::likelihood)}),
      {.name = "fixed_hyper",
       .option = "fixed-hyper",
       .kind = ParameterKind::flag,
       .help = "cholqr: keep the hyperparameters; only the inducing set is optimised"},
      {.name = "novelty",
       .option = "novelty",
       .kind = ParameterKind::real,
       .default_text = fmt::format("{:g}", OnlineGpOptions{}.novelty),
       .minimum = 0,
       .maximum = 1,
       .maximum_excluded = true,
       .help = "online: a row joins the basis when its novelty exceeds this fraction of its prior variance"},
      whole("passes", "passes", std::to_string(OnlineGpOptions{}.passes), 1, "online: passes over the data"),
      whole("active_set_size", "active-set", std::to_string(SolverOptions{}.active_set_size), 1,
            "active set size m (gbcd, bcd-*)"),
      whole("candidates", "candidates", std::to_string(kGreedyCandidates), 1,
            fmt::format("random candidates kappa per greedy step (gbcd {}; sgma, mpgp, sggp {})", kGreedyCandidates,
                        kBasisCandidates)),
      whole("subspace_steps", "subspace-steps", std::to_string(SolverOptions{}.subspace_steps), 0,
            "gbcd, bcd-*: past steps each iteration re-optimises along with its block (subspace acceleration; 0: "
            "the papers' plain BCD)"),
  };
}

// The rest of the training job's: how it runs, stops and what its kernel is.
std::vector<Parameter> run_parameters() {
  const std::string tolerance_help = fmt::format(
      "dense solvers: stop when the relative residual |K alpha - y|/|y| <= tol, which keeps the RMS error of the "
      "predicted means at the training inputs below tol x RMS(y) (default {:g}); cholqr: when an epoch decreases its "
      "objective by less than tol, relatively (default {:g})",
      default_tolerance(ToleranceMeaning::relative_residual), default_tolerance(ToleranceMeaning::relative_decrease));
  return {
      choice("precision", "precision", SolverOptions{}.precision,
             "gbcd, bcd-*, cg, pcg: the kernel entries of their products (and gbcd's greedy scores): auto "
             "(single precision, twice the entries per second; the final |K alpha - y|/|y| computed exactly in "
             "double, and a run whose exact residual misses tol continues in double, saying so) or double",
             true, {"auto", "double"}),
      whole("random_state", "seed", std::to_string(TrainingConfiguration{}.seed), 0,
            "random seed of every random choice (the learning subset and restarts, the solvers', the sparse models', "
            "predict's variance solves and bcm's k-means, generate's rows): the same seed gives the same result",
            true),
      positive("tol", "tol", "", tolerance_help, true),
      whole("max_iter", "max-iter", "", 0, "stop after this many iterations in all, resumptions included (0: no limit)",
            true),
      {.name = "time_limit",
       .option = "time-limit",
       .kind = ParameterKind::real,
       .minimum = 0,
       .help = "stop after this many seconds of work in all, resumptions included: train's training, predict's "
               "variances (which publishes the rows done); 0: no limit"},
      whole("refresh_every", "refresh-every", std::to_string(StoppingRule{}.refresh_every), 0,
            "recompute g exactly every K iterations and report the drift (0: never)"),
      // No one default: it depends on `learn_hyper` (default_kernel()).
      choice("kernel", "kernel", "",
             fmt::format("{}, a sum of them (`matern12+rbf`), or auto (learned; default {} when the model is learned: "
                         "`learn_hyper`, gpstream hyper, unless an `init` file names one; else {})",
                         kernel_names(), default_kernel(/*learning=*/true), default_kernel(/*learning=*/false)),
             true),
      positive("checkpoint_every", "checkpoint-every", fmt::format("{:g}", TrainingJob{}.checkpoint_every_seconds),
               "seconds between checkpoints (predict --variance: writes of the rows done to its output, which "
               "--resume continues)"),
      {.name = "learn_hyper",
       .option = "learn-hyper",
       .kind = ParameterKind::flag,
       .help = "learn the model first, as gpstream hyper does: the kernel (default auto), its hyperparameters and the "
               "mean (with `kernel`, `mean`, `learn_on`, `subset`, ...); Python's optimizer='lbfgs'"},
      {.name = "standardise",
       .option = "no-standardise",
       .kind = ParameterKind::flag,
       .help = "given: inputs and targets as they are, not standardised (Python's standardise=False)"},
      {.name = "length_scale",
       .option = "lengthscales",
       .kind = ParameterKind::reals,
       .minimum = 0,
       .minimum_excluded = true,
       .help = "comma-separated lengthscales (one per input, or one for all)",
       .python = true},
      positive("signal_variance", "signal-var", "", "signal variance s^2 (train: 1 unless a `hyper` file gives it)",
               true),
      positive("noise_variance", "noise-var", "", "noise variance sigma^2", true),
      {.name = "kernel_parameters",
       .option = "kernel-parameters",
       .kind = ParameterKind::named_values,
       .help = "the kernel's own parameters beyond lengthscales and variances, by the names its family declares "
               "(rq: alpha=2); each not given takes the start its family declares (train) or is learned from it",
       .python = true},
      {.name = "memory",
       .option = "memory",
       .kind = ParameterKind::byte_size,
       .help = "memory budget of the whole process, counted from its own code and libraries (about 20 MiB) up: what "
               "a run holds in proportion to the data (vectors, rows, factors, caches, blocks in flight) is reserved "
               "in it; a solver's fixed workspace (gbcd: about 30 MiB at `active_set_size` 500), thread stacks and "
               "BLAS buffers are not (e.g. 512M, 8G; default: 3/4 of the RAM, or of the container's memory limit, "
               "shared by the MPI ranks on this machine)",
       .python = true},
  };
}

// The training job's (`gpstream train`, Python's estimator where marked), in the order the help lists them.
std::vector<Parameter> training_parameters() {
  std::vector<Parameter> parameters = method_parameters();
  for (Parameter& parameter : run_parameters()) parameters.push_back(std::move(parameter));
  return parameters;
}

// The hyperparameter search's (`gpstream hyper`, `train --learn-hyper`; engine/hyper/model_learning.h).
std::vector<Parameter> learning_parameters() {
  const LearningRequest request;
  const SubsetLearningOptions& subset = request.subset;
  const StochasticGradientOptions& stochastic = request.stochastic.gradient;
  return {
      path("init", "init",
           "start the search from this hyperparameter file (JSON); `length_scale`, `gamma`, `signal_variance` and "
           "`noise_variance` override its values, and values given by neither are informed by the data"),
      whole("subset", "subset", std::to_string(subset.subset), 2,
            "rows the marginal likelihood is computed on (random, without replacement; all rows of a smaller dataset)"),
      whole("restarts", "restarts", std::to_string(subset.restarts), 0,
            "random restarts of the optimiser after the fixed start"),
      positive("hyper_tol", "hyper-tol", fmt::format("{:g}", subset.tolerance),
               "stop when the objective and every log-hyperparameter change by less"),
      positive("min_noise", "min-noise", fmt::format("{:g}", subset.min_noise_variance),
               "lower bound of the noise variance (standardised targets)"),
      whole("max_evaluations", "max-evaluations", std::to_string(subset.max_evaluations), 1,
            "objective evaluations per start"),
      choice("mean", "mean", request.mean,
             "prior mean of the target, a trend the GP models the residual of: none, constant, linear (in every "
             "input), or linear:INPUT,... (by name or number)",
             true),
      choice("mean_fit", "mean-fit", request.mean_fit,
             "ols: the trend by least squares, the kernel learned on its residual (restricted spatial regression: the "
             "trend keeps the covariates' effect far from the training rows); gls: jointly with the kernel by maximum "
             "likelihood",
             true, {"ols", "gls"}),
      choice("learn_on", "learn-on", request.learn_on,
             "all: refine the subset's optimum on every row by the Vecchia likelihood (nearest-neighbour "
             "conditionals); subset: the subset's exact likelihood only",
             true, {"all", "subset"}),
      whole("vecchia_neighbours", "vecchia-neighbours", std::to_string(request.vecchia_neighbours), 1,
            "`learn_on` all: conditioning rows per row of the Vecchia likelihood"),
      whole("max_terms", "max-terms", std::to_string(request.max_terms), 1,
            "`kernel` auto, `learn_on` all: after the single kernels, sums of the chosen one's family at separated "
            "scales (a longer or a shorter term beside it, then a third), refined on all rows and kept where the "
            "evidence over all rows says so; up to this many terms (1: single kernels only)"),
      whole("exact_rows", "exact-rows", std::to_string(request.exact_rows), 0,
            "`learn_on` all, where the Vecchia likelihood is not accurate enough: refine the chosen kernel by the "
            "exact likelihood on random subsets of twice the rows each time, up to this many (O(rows^3) time, "
            "16 rows^2 bytes; `subset` or less: off)"),
      whole("all_rows_steps", "all-rows-steps", std::to_string(request.stochastic.max_steps), 0,
            "`learn_on` all: refine on all rows by Newton steps on the exact likelihood's stochastic gradient, at most "
            "this many gradient estimates (each t + 1 GBCD solves and a pass over all pairs of rows; 0: off)",
            true),
      whole("probes", "probes", std::to_string(stochastic.probes), 4,
            fmt::format("random probe vectors t of each all-rows gradient estimate (Hutchinson's trace estimator; "
                        "its error falls as 1/sqrt(t); a multiple of {})",
                        stochastic.groups)),
      {.name = "all_rows_tol",
       .option = "all-rows-tol",
       .kind = ParameterKind::real,
       .default_text = fmt::format("{:g}", stochastic.tolerance),
       .minimum = 0,
       .minimum_excluded = true,
       .maximum = 1,
       .maximum_excluded = true,
       .help = fmt::format("relative residual of the all-rows estimates' probe solves (alpha's: {:g}, or this if "
                           "smaller)",
                           stochastic.alpha_tolerance)},
  };
}

// The kernel-column cache's (`train`, `predict`; engine/kernels/column_cache_setup.h).
std::vector<Parameter> cache_parameters() {
  return {
      choice(
          "cache", "cache", to_string(ColumnCacheSettings{}.mode),
          "kernel-column cache for what reuses kernel columns (train: the bcd family and the greedy bases sgma, "
          "mpgp, sggp; predict: the gbcd variance route): off, ram, disk (RAM, and columns evicted from it on disk), or auto (RAM where computing a kernel "
          "entry is measured to cost more than reading it, disk where also more than reading it from disk); "
          "results are bitwise the same either way at the same `precision` (whose auto takes double with the "
          "cache on: its columns are exact)",
          false,
          {to_string(ColumnCacheMode::off), to_string(ColumnCacheMode::ram), to_string(ColumnCacheMode::disk),
           to_string(ColumnCacheMode::automatic)}),
      path("cache_dir", "cache-dir",
           "directory for the cache's disk tier and for predict's variance factor on disk, files deleted when the "
           "run ends (default: the output file's directory)"),
      {.name = "cache_disk",
       .option = "cache-disk",
       .kind = ParameterKind::byte_size,
       .help = "size of the cache's disk tier, e.g. 20G (default: half the directory's free space, and at most a "
               "column per training row)"},
  };
}

// Prediction's (`predict`): the variances' (`--variance`, Python's predict(return_std);
// engine/dense/dense_variance.h) and the committee machine's.
std::vector<Parameter> prediction_parameters() {
  const VarianceOptions variance;
  const CommitteeOptions committee;
  return {
      choice("variance_method", "variance-method", to_string(variance.method),
             "dense models: cholesky (K factorised once: exact, n^2 doubles of `memory`), gbcd (batched solves, O(n) "
             "memory per row), auto: cholesky when it fits and costs less, else gbcd; or nearest: an upper bound, "
             "each row conditioned on its `neighbours` training rows of highest covariance (one process)",
             true,
             {to_string(VarianceMethod::automatic), to_string(VarianceMethod::cholesky),
              to_string(VarianceMethod::gbcd), to_string(VarianceMethod::nearest)}),
      whole("neighbours", "neighbours", std::to_string(variance.neighbours), 1,
            "`variance_method` nearest: training rows each test row is conditioned on (more: closer to the exact "
            "variance, M^3/3 flops a row)",
            true),
      positive("variance_tol", "variance-tol", fmt::format("{:g}", variance.tolerance),
               "gbcd: bound on each row's relative variance error, |computed - exact| / exact"),
      whole("batch_rows", "batch-rows", std::to_string(variance.batch_rows), 0,
            "dense models: test rows solved together (0: as many as `memory` allows, up to 1024; 256 where the gbcd "
            "route starts each batch locally)"),
      // The variance solves' GBCD, apart from training's: larger blocks pay there (docs/variance.md).
      whole("variance_active_set_size", "variance-active-set", std::to_string(variance.active_set_size), 1,
            "gbcd: active set size m of the variance solves (training's `active_set_size` is its own)"),
      whole("variance_candidates", "variance-candidates", std::to_string(variance.candidates), 1,
            "gbcd: random candidates kappa per greedy step of the variance solves"),
      // The committee machine's (predict --model bcm; engine/sparse/committee_machine.h).
      whole("modules", "modules", "", 1, "bcm: k-means modules M (default: the training rows / `module_size`)"),
      whole("module_size", "module-size", std::to_string(committee.module_size), 1,
            "bcm: training rows per module, when `modules` is not given"),
      whole("query_block", "query-block", "", 1, "bcm: test rows predicted jointly (default: `module_size`)"),
  };
}

std::vector<Parameter> make_schema_parameters() {
  std::vector<Parameter> parameters = training_parameters();
  for (auto [group, members] : {std::pair{ParameterGroup::learning, learning_parameters()},
                                {ParameterGroup::cache, cache_parameters()},
                                {ParameterGroup::prediction, prediction_parameters()}}) {
    for (Parameter& parameter : members) {
      parameter.group = group;
      parameters.push_back(std::move(parameter));
    }
  }
  bind_configuration_fields(parameters);
  return parameters;
}

}  // namespace

std::string Parameter::expected() const {
  if (!choices.empty()) {
    std::string names;
    for (std::size_t c = 0; c < choices.size(); ++c) {
      names += (c == 0 ? "" : c + 1 == choices.size() ? " or " : ", ") + choices[c];
    }
    return names;
  }
  std::string range;
  if (std::isfinite(minimum)) range = fmt::format("{} {:g}", minimum_excluded ? "above" : "at least", minimum);
  if (std::isfinite(maximum)) {
    range += fmt::format("{}{} {:g}", range.empty() ? "" : " and ", maximum_excluded ? "below" : "at most", maximum);
  }
  if (kind == ParameterKind::whole_number) return range.empty() ? "a whole number" : "a whole number, " + range;
  if (kind == ParameterKind::real && minimum == 0 && minimum_excluded && !std::isfinite(maximum))
    return "a positive, finite number";
  return range.empty() ? "a finite number" : "a finite number, " + range;
}

std::span<const Parameter> schema_parameters() {
  static const std::vector<Parameter> parameters = make_schema_parameters();
  return parameters;
}

const Parameter* find_parameter(std::string_view name) {
  for (const Parameter& parameter : schema_parameters()) {
    if (parameter.name == name) return &parameter;
  }
  return nullptr;
}

const Parameter* find_parameter_by_option(std::string_view option) {
  for (const Parameter& parameter : schema_parameters()) {
    if (parameter.option == option) return &parameter;
  }
  return nullptr;
}

void check_parameter(const Parameter& parameter, double value) {
  const bool in_range = (parameter.minimum_excluded ? value > parameter.minimum : value >= parameter.minimum) &&
                        (parameter.maximum_excluded ? value < parameter.maximum : value <= parameter.maximum);
  const bool whole = parameter.kind != ParameterKind::whole_number || value == std::floor(value);
  GPSTREAM_CHECK_ARGUMENT(std::isfinite(value) && in_range && whole, "`{}`={:g}: give {}", parameter.name, value,
                          parameter.expected());
}

void check_parameter(std::string_view name, double value) {
  const Parameter* parameter = find_parameter(name);
  GPSTREAM_CHECK(parameter != nullptr, "no parameter `{}` in the schema", name);
  check_parameter(*parameter, value);
}

void check_choice(const Parameter& parameter, std::string_view value) {
  const bool chosen = parameter.choices.empty() ||
                      std::find(parameter.choices.begin(), parameter.choices.end(), value) != parameter.choices.end();
  GPSTREAM_CHECK_ARGUMENT(chosen, "`{}`=\"{}\": choose {}", parameter.name, value, parameter.expected());
}

void check_choice(std::string_view name, std::string_view value) {
  const Parameter* parameter = find_parameter(name);
  GPSTREAM_CHECK(parameter != nullptr, "no parameter `{}` in the schema", name);
  check_choice(*parameter, value);
}

std::vector<StoredParameter> stored_parameters(const TrainingConfiguration& configuration) {
  std::vector<StoredParameter> stored;
  for (const Parameter& parameter : schema_parameters()) {
    const Parameter::Field& field = parameter.field;
    if (field.get == nullptr || !field.holds(configuration)) continue;
    // A method's own parameter (cholqr's `info_pivots`) only where the method takes it.
    const std::string takers = methods_taking(parameter.name);
    if (!takers.empty()) {
      const std::span<const char* const> own = method_in(configuration)->parameters;
      if (std::find(own.begin(), own.end(), std::string_view(parameter.name)) == own.end()) continue;
    }
    stored.push_back({parameter.name, field.get(configuration)});
  }
  return stored;
}

void restore_parameters(std::span<const StoredParameter> parameters, TrainingConfiguration& configuration,
                        const std::string& source) {
  for (const StoredParameter& stored : parameters) {
    const Parameter* parameter = find_parameter(stored.name);
    try {
      GPSTREAM_CHECK(parameter != nullptr && parameter->field.set != nullptr,
                     "`{}` is not a parameter of a training job", stored.name);
      parameter->field.set(*parameter, configuration, stored.value);
    } catch (const Error& error) {
      throw Error(fmt::format("{}: {}; start the run again", source, error.what()));
    }
  }
  GPSTREAM_CHECK(method_in(configuration) != nullptr, "{}: names no solver or model; start the run again", source);
}

std::string parameter_table_markdown() {
  std::string out;
  for (const auto& [group, heading] :
       {std::pair{ParameterGroup::training, "The training job (`gpstream train`; Python's estimator where marked)"},
        {ParameterGroup::learning,
         "The hyperparameter search (`gpstream hyper`, and `gpstream train` when it learns them)"},
        {ParameterGroup::cache, "The kernel-column cache (`gpstream train`, `gpstream predict`)"},
        {ParameterGroup::prediction,
         "Prediction (`gpstream predict`: the variances, as Python's `predict(X, return_std=True)`, and the "
         "committee machine, `--model bcm`)"}}) {
    out += fmt::format("{}{}:\n\n", out.empty() ? "" : "\n", heading);
    out +=
        "| parameter | option | in Python's estimator | default | takes | what it is |\n"
        "|---|---|---|---|---|---|\n";
    for (const Parameter& parameter : schema_parameters()) {
      if (parameter.group != group) continue;
      std::string takes;
      switch (parameter.kind) {
        case ParameterKind::whole_number:
        case ParameterKind::real:
          takes = parameter.expected();
          break;
        case ParameterKind::reals:
          takes = "positive numbers, comma-separated";
          break;
        case ParameterKind::text:
          takes = parameter.choices.empty() ? "a name" : parameter.expected();
          break;
        case ParameterKind::named_values:
          takes = "name=value pairs, comma-separated";
          break;
        case ParameterKind::path:
          takes = "a path";
          break;
        case ParameterKind::flag:
          takes = "(a switch)";
          break;
        case ParameterKind::byte_size:
          takes = "a size";
          break;
      }
      // Parameters in the help as the options of the table's second column.
      std::string help = spell_parameters(parameter.help, [](std::string_view name) {
        const Parameter* named = find_parameter(name);
        return named != nullptr ? fmt::format("`--{}`", named->option) : fmt::format("`{}`", name);
      });
      for (std::size_t at = help.find('|'); at != std::string::npos; at = help.find('|', at + 2)) help.insert(at, "\\");
      out += fmt::format("| `{}` | `--{}` | {} | {} | {} | {} |\n", parameter.name, parameter.option,
                         parameter.python ? "yes" : "",
                         parameter.default_text.empty() ? "" : "`" + parameter.default_text + "`", takes, help);
    }
  }
  return out;
}

}  // namespace gpstream

// gpstream predict MODEL.h5 INPUTS.h5|INPUTS.csv -o PREDICTIONS.csv
// gpstream predict --model srm-trans DATA.h5 INPUTS.h5|INPUTS.csv --hyper H.json -o PREDICTIONS.csv
#include "api/prediction_files.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/interrupt_handler.h"
#include "tools/progress_line.h"
#include "tools/training_observers.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cmath>

namespace gpstream::cli {
namespace {

struct PredictOptions {
  std::string model, data, inputs, output, truth, hyper;
  std::string data_path;  // srm-trans, bcm: the training dataset (the first argument)
  std::vector<std::string> arguments;
  std::size_t basis = 0;       // the options' fields: the schema's defaults as they are read
  CommitteeOptions committee;  // bcm
  VarianceOptions variance;
  ColumnCacheOptions cache;  // the gbcd variance route
  std::string variance_method;
  double time_limit = 0;
  double checkpoint_every = 0;
  bool with_variance = false, latent = false, quiet = false, resume = false;

  bool committee_machine() const { return transductive_method() == TransductiveSettings::Method::committee; }
  bool transductive() const { return transductive_method().has_value(); }
  std::optional<TransductiveSettings::Method> transductive_method() const { return find_transductive_method(model); }
};

// Checks the options and sets the model, inputs and training data paths from the arguments.
void validate(PredictOptions& options, const po::variables_map& values) {
  options.quiet = values.count("quiet") != 0;
  options.with_variance = values.count("variance") != 0;
  options.latent = values.count("latent") != 0;
  options.resume = values.count("resume") != 0;
  options.variance.noisy = !options.latent;
  options.cache.validate(values);
  try {
    options.variance.method = parse_variance_method(options.variance_method);
  } catch (const Error& error) {
    throw UsageError(fmt::format("--variance-method: {}", error.what()));
  }
  if (options.time_limit > 0) options.variance.time_limit_seconds = options.time_limit;
  if (options.resume && !options.with_variance) throw UsageError("--resume continues a run with --variance");
  if (options.resume && is_standard_stream(options.output)) throw UsageError("--resume needs the file of the run it continues (-o)");
  const bool committee = options.committee_machine();
  const bool transductive = options.transductive();
  if (!committee) reject_options(values, {"modules", "module-size", "query-block"}, "--model bcm");
  if (transductive) {
    if (options.arguments.size() != 2) {
      throw UsageError(fmt::format("--model {} takes two arguments: DATA.h5 INPUTS", options.model));
    }
    options.data_path = options.arguments[0];
    options.inputs = options.arguments[1];
    if (options.hyper.empty()) {
      throw UsageError(fmt::format("--model {} needs the kernel's --hyper file (from gpstream hyper)", options.model));
    }
    if (committee) reject_options(values, {"basis"}, "--model srm-trans; bcm takes --module-size");
    if (committee && values.count("modules") != 0 && given(values, "module-size"))
      throw UsageError("give --modules or --module-size, not both");
  } else {
    if (!options.model.empty()) options.arguments.insert(options.arguments.begin(), options.model);
    if (options.arguments.size() != 2) throw UsageError("give the model file and the inputs: MODEL.h5 INPUTS");
    options.model = options.arguments[0];
    options.inputs = options.arguments[1];
    if (!options.hyper.empty()) {
      throw UsageError("--hyper is for --model srm-trans or bcm; a model file holds its hyperparameters");
    }
  }
  if (options.latent && !options.with_variance) throw UsageError("--latent needs --variance");
  if (given(values, "neighbours") && options.variance.method != VarianceMethod::nearest)
    throw UsageError("--neighbours is for --variance-method nearest");
  options.committee.seed = options.variance.seed;
}

// What predicts: a model file, or (srm-trans, bcm) the hyperparameters and the training rows.
std::unique_ptr<Predictor> open_predictor(Context& context, const PredictOptions& options) {
  if (!options.transductive()) return open_model_predictor(context, options.model, options.data);
  if (options.committee_machine() && options.committee.modules > 0) {
    const std::size_t rows = read_dataset_description(options.data_path).rows;
    if (options.committee.modules > rows) {
      throw UsageError(fmt::format("--modules {} is more than the {} training rows", options.committee.modules, rows));
    }
  }
  return open_transductive_predictor(context,
                                     {.method = *options.transductive_method(),
                                      .data_path = options.data_path,
                                      .hyper_path = options.hyper,
                                      .block_rows = options.basis,
                                      .committee = options.committee});
}

// The command's side of a prediction: the writer (rank 0), the progress
// line and Ctrl-C for each long phase.
class CommandSink final : public PredictionSink {
 public:
  CommandSink(Context& context, const PredictOptions& options, PredictionTableWriter* writer)
      : context_(context), options_(options), writer_(writer) {}

  void means(std::span<const double> mean) override {
    if (writer_ != nullptr) writer_->set_means(mean);
  }
  void variances(std::size_t first, std::span<const double> latent) override {
    if (writer_ != nullptr) writer_->write_variances(first, latent);
  }
  void begin_phase(const PredictionPhase& phase) override {
    // The variances' work begins (their route chosen and accepted): the means are published at once.
    if (writer_ != nullptr && writer_->rows() > 0) writer_->publish_means();
    if (!options_.quiet) {
      if (phase.rows_done > 0) {
        fmt::print(stderr, "predict: resuming: rows 1-{} of {} have variances in '{}'\n", phase.rows_done,
                   writer_ != nullptr ? writer_->rows() : 0, options_.output);
      }
      if (!phase.description.empty()) fmt::print(stderr, "predict: {}\n", phase.description);
    }
    interrupts_.emplace(context_);
    progress_.emplace(!options_.quiet);
    observer_.emplace(*progress_, phase.name, phase.tolerance, phase.measure, 0, phase.work_unit);
    scope_.emplace(context_, std::vector<RunObserver*>{&*observer_});
  }
  void end_phase() override {
    scope_.reset();
    if (progress_) progress_->finish();
    observer_.reset();
    progress_.reset();
    interrupts_.reset();
  }

 private:
  Context& context_;
  const PredictOptions& options_;
  PredictionTableWriter* writer_;
  std::optional<ContextInterrupts> interrupts_;
  std::optional<ProgressLine> progress_;
  std::optional<ProgressLineObserver> observer_;
  std::optional<Context::ObserverScope> scope_;
};

// The test inputs (with targets from --truth when given), refused when empty.
TestSet load_test_set(const PredictOptions& options, const ModelDescription& model_description) {
  TestSet test = read_test_set(options.inputs, model_description);
  GPSTREAM_CHECK(test.rows > 0, "'{}' has no rows to predict", options.inputs);
  if (!options.truth.empty()) {
    const TestSet truth = read_test_set(options.truth, model_description);
    GPSTREAM_CHECK(truth.y && truth.rows == test.rows, "--truth: '{}' does not hold {} targets named \"{}\"",
                   options.truth, test.rows, model_description.target_name);
    test.y = truth.y;
  }
  return test;
}

// The summary on stderr, and the metrics when the targets are known.
void report(const PredictOptions& options, const TestSet& test, const ModelDescription& model,
            const PredictionReport& predictions, const PredictiveDistribution& distribution) {
  const Standardisation& standardisation = model.standardisation;
  const std::vector<double>& mean = distribution.mean;
  const std::vector<double>& variance = distribution.variance;
  if (options.quiet) return;
  fmt::print(stderr, "predict: {} rows; {}\n", format_count(test.rows), predictions.how);
  if (options.with_variance) {
    fmt::print(stderr, "predict: variances of {}\n",
               options.latent ? "f* (latent, noise excluded)" : "y* (noise included)");
  }
  if (predictions.negative_variances > 0) {
    fmt::print(stderr, "predict: warning: the variance formula gave {} negative latent variances, written as 0{}\n",
               predictions.negative_variances,
               predictions.reduced_rank
                   ? " (the Nystrom approximation underestimates K there; Schwaighofer & Tresp 2003 section 4.2)"
                   : "");
  }
  if (test.y) {
    // Against the training targets' mean and variance (eq. 16, the SNLP's trivial model). SNLP and coverage
    // use the variance written: of y* for noisy targets, of f* (--latent) for noise-free ones.
    const PredictionMetrics metrics = evaluate_predictions(*test.y, mean, variance, standardisation.y_mean,
                                                           standardisation.y_std * standardisation.y_std);
    // Four significant digits: fixed decimals would print an SMSE of 7e-7 as "0.000001".
    fmt::print(stderr,
               "predict: RMSE {:.4g} (GBCD paper eq. 16: the RMSE over the standard deviation of the training "
               "targets the model was standardised with, {:.4g})\n",
               metrics.normalised_rmse, standardisation.y_std);
    fmt::print(stderr, "predict: SMSE {:.4g}, MAE {:.4g}\n", metrics.smse, metrics.mae);
    if (metrics.snlp) {
      fmt::print(stderr,
                 "predict: SNLP (cholqr paper eq. 22; below 0 beats predicting the training mean) {:.4g}, coverage "
                 "of mean +- 2 std {:.4g} (variance of {}; 0.954 for calibrated error bars)\n",
                 *metrics.snlp, *metrics.coverage, options.latent ? "f*" : "y*");
    }
  }
}

// "interrupted: 3,072 of 10,000 rows have variances ...; resume with: gpstream predict ... --resume"
std::string stopped_variances_message(const PredictOptions& options, const PredictionTableWriter& writer,
                                      const std::vector<std::string>& args, const std::string& how, std::size_t ranks) {
  // The same command (on as many ranks), less what would stop or refuse the resumed run.
  std::string command = launcher(ranks) + "gpstream predict";
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& argument = args[k];
    if (argument == "--resume" || argument == "--force" || argument.starts_with("--time-limit=")) continue;
    if (argument == "--time-limit") {
      ++k;
      continue;
    }
    command += " " + shell_quoted(argument);
  }
  return fmt::format(
      "{}: {} of {} rows have variances in {} (the others their means only). Resume with:\n  {} --resume", how,
      format_count(writer.written()), format_count(writer.rows()), options.output, command);
}

// The command's synopsis, description and options, bound to `options` and `compute`.
void describe_command(CommandSpec& spec, PredictOptions& options, ComputeOptions& compute) {
  spec.name = "predict";
  spec.usage =
      "gpstream predict MODEL.h5 INPUTS.h5|INPUTS.csv -o PREDICTIONS.csv [options]\n"
      "       gpstream predict --model srm-trans|bcm DATA.h5 INPUTS.h5|INPUTS.csv --hyper HYPER.json -o PREDICTIONS.csv";
  spec.description =
      "Predict the mean for each input row, in the target's original units. A dense model streams its\n"
      "training rows (the dataset it references) once per block of test rows; a sparse model predicts from\n"
      "its basis alone (nystrom streams its training rows too). With --variance, also the predictive\n"
      "variance and standard deviation of a new observation y* (noise included; --latent for the\n"
      "noise-free f*): for a dense model k*'(K + noise I)^-1 k* per row, by a Cholesky factor of K + noise I\n"
      "when it fits --memory and costs less, else by GBCD on batches of rows that share every kernel block,\n"
      "each row stopped when its relative error is bounded by --variance-tol; the means are written first and\n"
      "each batch of variances as it finishes, so Ctrl-C or --time-limit publishes the rows done and --resume\n"
      "continues them. A sparse model uses its closed form. --model srm-trans trains the\n"
      "transductive subset of regressors on DATA.h5 with each block of --basis test rows as its basis;\n"
      "--model bcm the Bayesian committee machine: DATA.h5 cut into k-means modules, each an exact GP,\n"
      "combined on query blocks of test rows.\n"
      "When the inputs carry targets (a dataset's /y, or a CSV column named like the model's target) or\n"
      "--truth gives them, prints the normalised RMSE (GBCD paper eq. 16), SMSE, MAE and, with --variance,\n"
      "SNLP (cholqr paper eq. 22) and the coverage of mean +- 2 std.";
  // clang-format off
  spec.options.add_options()
      ("model", po::value(&options.model), "model file from gpstream train (or the first argument), or srm-trans or bcm")
      ("arguments", po::value(&options.arguments)->multitoken(), "MODEL.h5 INPUTS, or DATA.h5 INPUTS with --model srm-trans or bcm")
      ("output,o", po::value(&options.output)->required(), "predictions (CSV), or - for standard output")
      ("data", po::value(&options.data), "the training dataset, if it moved since training")
      ("truth", po::value(&options.truth), "targets for the inputs (CSV or dataset), to report the RMSE")
      ("hyper", po::value(&options.hyper), "srm-trans, bcm: the hyperparameter file (from gpstream hyper)")
      ("force", "overwrite the output if it exists")
      ("quiet,q", "no summary on stderr")
      ("variance", "also write the predictive variance and standard deviation")
      ("latent", "with --variance: of the latent f* (without the noise variance) instead of y*")
      ("resume", "dense models: continue the variances of a stopped run in the -o file (same model, inputs and options)");
  // clang-format on
  spec.renamed = {{"--active-set", "--variance-active-set"}, {"--candidates", "--variance-candidates"}};
  // The schema's, as every command's: the random seed of the variance solves and of bcm's k-means, the time
  // limit and checkpoint cadence of the variances, srm-trans's basis.
  add_parameter(spec.options, "random_state", options.variance.seed);
  add_parameter(spec.options, "time_limit", options.time_limit);
  add_parameter(spec.options, "checkpoint_every", options.checkpoint_every);
  add_parameter(spec.options, "basis_size", options.basis);
  add_parameter(spec.options, "modules", options.committee.modules);
  add_parameter(spec.options, "module_size", options.committee.module_size);
  add_parameter(spec.options, "query_block", options.committee.query_block);
  // Names, defaults and help from the schema's prediction group (api/parameter_schema.h).
  add_parameter(spec.options, "variance_method", options.variance_method);
  add_parameter(spec.options, "neighbours", options.variance.neighbours);
  add_parameter(spec.options, "variance_tol", options.variance.tolerance);
  add_parameter(spec.options, "batch_rows", options.variance.batch_rows);
  add_parameter(spec.options, "variance_active_set_size", options.variance.active_set_size);
  add_parameter(spec.options, "variance_candidates", options.variance.candidates);
  po::options_description cache_options("Kernel-column cache (dense models, the gbcd variance route)");
  options.cache.add(cache_options);
  spec.options.add(cache_options);
  compute.add(spec.options);
  spec.positional.add("arguments", -1);
}

}  // namespace

int run_predict_alone(const std::vector<std::string>& args) {
  SingleProcess alone;
  return run_predict(args, alone);
}

namespace {

// On several ranks predict runs dense models (means and variances) and the bcm, whose passes over X and
// modules the ranks share; a sparse model predicts from its basis, in one process.
void check_distributable(const PredictOptions& options) {
  if ((options.transductive() && !options.committee_machine()) ||
      (!options.transductive() && model_file_type(options.model) == "sparse")) {
    throw UsageError(
        "on several ranks predict runs dense models (means and variances) and the bcm: a sparse or srm-trans model "
        "predicts in one process: run it without mpirun");
  }
}

// --resume: the predictions a stopped run published, whose variances this run continues from the first row
// without one (none, and a fresh start, when the run stopped before it published any rows).
std::optional<PredictionTable> table_to_continue(PredictOptions& options) {
  std::optional<PredictionTable> resumed;
  if (options.resume && !std::filesystem::exists(options.output)) {
    // Killed before it published anything (before its means): there is nothing to continue.
    if (!options.quiet) {
      fmt::print(stderr,
                 "predict: note: '{}' does not exist: the run to resume stopped before it published any rows; "
                 "starting afresh\n",
                 options.output);
    }
    options.resume = false;
    options.variance.first_row = 0;
  }
  if (options.resume) {
    resumed = table_to_resume(options.output, options.latent);
    options.variance.first_row = resumed->variance.size();
  }
  return resumed;
}

}  // namespace

int run_predict(const std::vector<std::string>& args, Communicator& ranks) {
  CommandSpec spec;
  PredictOptions options;
  ComputeOptions compute;
  describe_command(spec, options, compute);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;

  // Validate.
  validate(options, values);
  if (ranks.size() > 1) {
    check_distributable(options);
    if (!ranks.is_root()) options.quiet = true;
  }
  std::vector<CommandFile> reads = {{"the model", options.transductive() ? "" : options.model},
                                    {"the inputs", options.inputs},
                                    {"the training dataset", options.data_path},
                                    {"--data", options.data},
                                    {"--truth", options.truth},
                                    {"--hyper", options.hyper}};
  check_distinct_files(reads, {{"-o", options.output}});

  // Configure: the predictor and the test rows (in its standardised units), and the output.
  Context::Settings settings = compute.context_settings(options.variance.seed);
  settings.communicator = &ranks;
  Context context(settings);
  const std::unique_ptr<Predictor> predictor = open_predictor(context, options);
  const ModelDescription& model_description = predictor->description();
  // The model's training dataset: a dense model streams it, and no model outlives it being overwritten.
  reads.push_back({"the model's training dataset", model_description.dataset_path});
  check_distinct_files(reads, {{"-o", options.output}});
  if (options.resume) {
    GPSTREAM_CHECK(predictor->resumable_variances(),
                   "--resume continues the variances of a dense model; a sparse model predicts in one step");
  }
  TestSet test = load_test_set(options, model_description);
  std::optional<PredictionTable> resumed = table_to_continue(options);
  // Rank 0 writes the predictions: the output claimed here, before any work.
  std::optional<PredictionTableWriter> output;
  std::optional<PathLock> output_lock;
  if (ranks.is_root()) {
    const bool overwrite = values.count("force") != 0 || options.resume;
    if (!is_standard_stream(options.output)) {
      check_new_output(options.output, "-o", overwrite);
      output_lock.emplace(options.output, "-o");
    }
    output.emplace(model_description,
                   PredictionTableSettings{.path = options.output,
                                           .inputs = options.inputs,
                                           .with_variance = options.with_variance,
                                           .latent = options.latent,
                                           .publish_every_seconds = options.checkpoint_every},
                   std::move(resumed), overwrite);
  }
  options.variance.cache = options.cache.settings(options.output, "output file", context);
  put_scratch_in(options.variance, options.cache.disk_directory(options.output));

  // Run: the writer writes as the predictions come, and a stop publishes the rows done.
  CommandSink sink(context, options, output ? &*output : nullptr);
  PredictionReport predictions;
  try {
    predictions = predictor->predict(test.x.data(), test.rows,
                                     {.variance = options.with_variance, .variance_options = options.variance}, sink);
  } catch (const Cancelled&) {
    if (!output) throw;
    PredictionTableWriter& writer = *output;
    if (writer.rows() == 0) throw;  // stopped before the means: nothing to publish
    writer.publish();
    throw Cancelled(stopped_variances_message(options, writer, args, "interrupted", ranks.size()));
  } catch (const Error&) {
    if (output) output->discard();
    throw;
  }
  if (!output) return 0;  // another rank than 0: rank 0 writes and reports
  PredictionTableWriter& writer = *output;
  if (predictions.unconverged_rows > 0 && !options.quiet) {
    fmt::print(stderr,
               "predict: warning: {} rows stopped above --variance-tol (their relative error is at most {:.2e})\n",
               predictions.unconverged_rows, predictions.largest_error_bound);
  }
  if (predictions.stopped_at_time_limit) {
    writer.publish();
    fmt::print(stderr, "predict: {}\n",
               stopped_variances_message(options, writer, args, "stopped at --time-limit", ranks.size()));
    return 0;
  }

  // Report, then publish: a report that fails leaves no output behind.
  report(options, test, model_description, predictions, writer.distribution());
  writer.publish();
  return 0;
}

}  // namespace gpstream::cli

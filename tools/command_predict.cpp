// gpstream predict MODEL.h5 INPUTS.h5|INPUTS.csv -o PREDICTIONS.csv
// gpstream predict --model srm-trans DATA.h5 INPUTS.h5|INPUTS.csv --hyper H.json -o PREDICTIONS.csv
#include "api/predictor.h"
#include "engine/prediction/prediction_metrics.h"
#include "engine/prediction/predictive_distribution.h"
#include "storage/csv/csv_table.h"
#include "storage/csv/csv_writer.h"
#include "storage/csv/prediction_table.h"
#include "storage/model/sparse_model_file.h"
#include "storage/scratch/scratch_file.h"
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

struct TestSet {
  std::size_t rows = 0;
  std::vector<double> x;
  std::optional<std::vector<double>> y;
};

// The inputs in the model's columns, matched by name in a CSV with a header
// and in a dataset alike: a dataset converted from a CSV whose columns are in
// another order predicts the same, and one without the model's columns is refused.
TestSet read_test_set(const std::string& path, const ModelDescription& model_description) {
  TestSet test;
  // A CSV is told by its contents, not its name (test.CSV, <(cat test.csv), a table without a suffix).
  std::error_code ignored;
  if (path == "-" || (std::filesystem::exists(path, ignored) && !hdf5::is_hdf5_file(path))) {
    CsvInputs inputs = read_csv_inputs(path, model_description.feature_names, model_description.target_name);
    test.rows = inputs.rows;
    test.x = std::move(inputs.x);
    test.y = std::move(inputs.y);
    return test;
  }
  Hdf5RowSource source(path);
  const std::vector<std::string>& names = source.description().feature_names;
  const std::size_t d = model_description.columns, columns = source.columns();
  std::vector<std::size_t> column_of(d);  // the dataset's column of each of the model's inputs
  std::vector<std::string> missing;
  for (std::size_t j = 0; j < d; ++j) {
    const auto found = std::find(names.begin(), names.end(), model_description.feature_names[j]);
    if (found == names.end()) missing.push_back(fmt::format("\"{}\"", model_description.feature_names[j]));
    column_of[j] = static_cast<std::size_t>(found - names.begin());
  }
  GPSTREAM_CHECK(missing.empty(),
                 "'{}' has no input{} named {}, which the model needs (its inputs: {}; the model's: {}); inputs are "
                 "matched by name: convert the test rows with the training data's column names",
                 path, missing.size() == 1 ? "" : "s", fmt::join(missing, ", "), fmt::join(names, ", "),
                 fmt::join(model_description.feature_names, ", "));
  test.rows = source.rows();
  std::vector<double> rows(test.rows * columns);
  test.y.emplace(test.rows);
  source.read_rows(0, test.rows, rows.data(), test.y->data());
  test.x.resize(test.rows * d);
  for (std::size_t i = 0; i < test.rows; ++i) {
    for (std::size_t j = 0; j < d; ++j) test.x[i * d + j] = rows[i * columns + column_of[j]];
  }
  return test;
}

struct PredictOptions {
  std::string model, data, inputs, output, truth, hyper;
  std::string data_path;  // srm-trans, bcm: the training dataset (the first argument)
  std::vector<std::string> arguments;
  std::size_t basis = 1000;
  CommitteeOptions committee;  // bcm
  VarianceOptions variance;
  ColumnCacheOptions cache;  // the gbcd variance route
  std::string variance_method = "auto";
  double time_limit = 0;
  double checkpoint_every = 60;
  bool with_variance = false, latent = false, quiet = false, resume = false;

  bool committee_machine() const { return transductive_method() == TransductiveSettings::Method::committee; }
  bool transductive() const { return transductive_method().has_value(); }
  std::optional<TransductiveSettings::Method> transductive_method() const { return find_transductive_method(model); }
};

// Holds the predictions in the target's units and publishes them to -o as a
// whole table: a dense model's variances arrive a batch at a time after the
// means; the rows with their variances so far, the others with means only,
// are published every --checkpoint-every seconds (a run killed at any
// instant, SIGKILL too, leaves the last such table, which --resume
// continues), when the run stops, and at its end. A resumed run starts from
// the rows of the file it continues (set_means checks that they are this
// model's on these inputs). Standard output ("-") gets the table once, at the end.
class PredictionWriter {
 public:
  PredictionWriter(const ModelDescription& model, const PredictOptions& options, std::optional<PredictionTable> resumed,
                   bool overwrite)
      : model_(model),
        options_(options),
        resumed_(std::move(resumed)),
        overwrite_(overwrite),
        last_published_(std::chrono::steady_clock::now()) {}

  std::size_t written() const { return written_; }  // rows with everything asked for
  std::size_t rows() const { return distribution_.mean.size(); }
  const PredictiveDistribution& distribution() const { return distribution_; }

  // The means of every row (in the target's units, as the Predictor gives them); the rows of the run resumed.
  void set_means(std::span<const double> mean) {
    distribution_.mean.assign(mean.begin(), mean.end());
    if (options_.with_variance) distribution_.variance.assign(mean.size(), 0.0);
    if (!resumed_) return;
    const PredictionTable& table = *resumed_;
    GPSTREAM_CHECK(table.mean.size() == rows(), "--resume: '{}' has {} rows but '{}' has {}", options_.output,
                   table.mean.size(), options_.inputs, rows());
    const double scale = model_.standardisation.y_std;
    for (std::size_t i = 0; i < rows(); ++i) {
      // Means are deterministic up to the thread count's last bits.
      GPSTREAM_CHECK(std::abs(table.mean[i] - distribution_.mean[i]) <= 1e-9 * scale,
                     "--resume: the mean of row {} in '{}' is {} but this model predicts {} there: the file is not "
                     "from this model and these inputs; predict to another file",
                     i + 1, options_.output, table.mean[i], distribution_.mean[i]);
      distribution_.mean[i] = table.mean[i];  // the file's, to the bit
    }
    std::copy(table.variance.begin(), table.variance.end(), distribution_.variance.begin());
    written_ = table.variance.size();
  }

  // A fresh variance run publishes its means as its variances begin: killed at any instant after that, it
  // leaves a table that --resume continues, however long its first window of variances takes.
  void publish_means() {
    if (options_.with_variance && !resumed_ && written_ == 0 && !is_standard_stream(options_.output)) {
      publish();
      published_early_ = true;
    }
  }
  // A run that fails (not one stopped: its table is to be resumed) leaves no table of its own behind.
  void discard() {
    if (published_early_) std::filesystem::remove(options_.output);
  }

  // Rows first … first + variance.size() − 1 with their variances (in the target's units).
  void write_variances(std::size_t first, std::span<const double> variance) {
    GPSTREAM_CHECK(first == written_, "variances arrived for row {} after row {}", first + 1, written_);
    std::copy(variance.begin(), variance.end(), distribution_.variance.begin() + static_cast<long>(first));
    written_ += variance.size();
    const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_published_).count();
    if (!is_standard_stream(options_.output) && written_ < rows() && since >= options_.checkpoint_every) publish();
  }

  // The table as it stands: the rows done, the others with means only (empty variance and std when asked for).
  void publish() {
    CsvWriter csv(options_.output, prediction_header(options_.with_variance, options_.latent), overwrite_);
    for (std::size_t i = 0; i < rows(); ++i) {
      if (i < written_ && options_.with_variance) {
        const double row[3] = {distribution_.mean[i], distribution_.variance[i], std::sqrt(distribution_.variance[i])};
        csv.write_row(row);
      } else {
        csv.write_row(std::span<const double>(&distribution_.mean[i], 1), options_.with_variance ? 2 : 0);
      }
    }
    csv.finish();
    overwrite_ = true;  // from here on the file is this run's own
    last_published_ = std::chrono::steady_clock::now();
  }

 private:
  const ModelDescription& model_;
  const PredictOptions& options_;
  std::optional<PredictionTable> resumed_;
  bool overwrite_;
  std::chrono::steady_clock::time_point last_published_;
  PredictiveDistribution distribution_;
  std::size_t written_ = 0;
  bool published_early_ = false;  // publish_means() wrote the table this run began
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
  if (!(options.checkpoint_every > 0)) throw UsageError("--checkpoint-every must be positive");
  if (options.time_limit < 0) {
    throw UsageError(fmt::format("--time-limit must be positive (0: no limit), not {}", options.time_limit));
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
    if (options.basis == 0) throw UsageError("--basis must be at least 1");
    if (committee) reject_options(values, {"basis"}, "--model srm-trans; bcm takes --module-size");
    if (committee && values.count("modules") != 0 && given(values, "module-size"))
      throw UsageError("give --modules or --module-size, not both");
    if (committee && values.count("modules") != 0 && options.committee.modules == 0) {
      throw UsageError("--modules must be at least 1");
    }
    if (options.committee.module_size == 0) throw UsageError("--module-size must be at least 1");
    if (committee && values.count("query-block") != 0 && options.committee.query_block == 0)
      throw UsageError("--query-block must be at least 1");
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
  if (options.variance.active_set_size == 0) throw UsageError("--active-set must be at least 1");
  if (options.variance.candidates == 0) throw UsageError("--candidates must be at least 1");
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
  CommandSink(Context& context, const PredictOptions& options, PredictionWriter* writer)
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
  PredictionWriter* writer_;
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
std::string stopped_variances_message(const PredictOptions& options, const PredictionWriter& writer,
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
      ("basis", po::value(&options.basis)->default_value(1000), "srm-trans: test rows per block, the basis of each SR fit")
      ("modules", po::value(&options.committee.modules), "bcm: number of k-means modules (default: rows / --module-size)")
      ("module-size", po::value(&options.committee.module_size)->default_value(1000), "bcm: training rows per module")
      ("query-block", po::value(&options.committee.query_block), "bcm: test rows predicted jointly (default: the module size)")
      ("force", "overwrite the output if it exists")
      ("quiet,q", "no summary on stderr")
      ("variance", "also write the predictive variance and standard deviation")
      ("latent", "with --variance: of the latent f* (without the noise variance) instead of y*")
      ("active-set", po::value(&options.variance.active_set_size)->default_value(options.variance.active_set_size), "gbcd: active set size m of the variance solves")
      ("candidates", po::value(&options.variance.candidates)->default_value(options.variance.candidates), "gbcd: random candidates kappa per greedy step")
      ("time-limit", po::value(&options.time_limit)->default_value(0), "dense models: stop the variances after this many seconds, publishing the rows done (0: no limit)")
      ("resume", "dense models: continue the variances of a stopped run in the -o file (same model, inputs and options)")
      ("checkpoint-every", po::value(&options.checkpoint_every)->default_value(60), "dense models with --variance: seconds between writes of the rows done to the -o file, which --resume continues after a crash or a kill")
      ("seed", po::value(&options.variance.seed)->default_value(1), "dense models: random seed of the variance solves; bcm: of the k-means");
  // clang-format on
  // Names, defaults and help from the schema's prediction group (api/parameter_schema.h).
  add_parameter(spec.options, "variance_method", options.variance_method);
  add_parameter(spec.options, "neighbours", options.variance.neighbours);
  add_parameter(spec.options, "variance_tol", options.variance.tolerance);
  add_parameter(spec.options, "batch_rows", options.variance.batch_rows);
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
      (!options.transductive() && model_type_of(options.model) == "sparse")) {
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
    resumed = read_prediction_table(options.output);
    GPSTREAM_CHECK(resumed->has_variance_columns, "--resume: '{}' has no variance column to continue", options.output);
    GPSTREAM_CHECK(resumed->latent == options.latent,
                   "--resume: '{}' holds variances of {} but this run asks for those of {}; resume with the options "
                   "of the run that wrote it",
                   options.output, resumed->latent ? "f* (--latent)" : "y*", options.latent ? "f* (--latent)" : "y*");
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
  std::optional<PredictionWriter> output;
  std::optional<PathLock> output_lock;
  if (ranks.is_root()) {
    const bool overwrite = values.count("force") != 0 || options.resume;
    if (!is_standard_stream(options.output)) {
      check_new_output(options.output, "-o", overwrite);
      output_lock.emplace(options.output, "-o");
    }
    output.emplace(model_description, options, std::move(resumed), overwrite);
  }
  options.variance.cache = options.cache.settings(options.output, "output file", context);
  options.variance.open_factor_store = scratch_files_in(options.cache.disk_directory(options.output));
  options.variance.factor_store_room = scratch_room_in(options.cache.disk_directory(options.output));

  // Run: the writer writes as the predictions come, and a stop publishes the rows done.
  CommandSink sink(context, options, output ? &*output : nullptr);
  PredictionReport predictions;
  try {
    predictions = predictor->predict(test.x.data(), test.rows,
                                     {.variance = options.with_variance, .variance_options = options.variance}, sink);
  } catch (const Cancelled&) {
    if (!output) throw;
    PredictionWriter& writer = *output;
    if (writer.rows() == 0) throw;  // stopped before the means: nothing to publish
    writer.publish();
    throw Cancelled(stopped_variances_message(options, writer, args, "interrupted", ranks.size()));
  } catch (const Error&) {
    if (output) output->discard();
    throw;
  }
  if (!output) return 0;  // another rank than 0: rank 0 writes and reports
  PredictionWriter& writer = *output;
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

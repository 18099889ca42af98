// The routes that fit at prediction time, from a `gpstream hyper` file and
// the training rows: SRM-Trans (SchwaighoferTresp03 §3.1) and the Bayesian
// committee machine (Tresp00).
#include "api/predictor_implementations.h"
#include "engine/core/error.h"
#include "engine/data/row_source_utilities.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/sparse/sparse_prediction.h"
#include "storage/dataset/dataset_format.h"
#include "storage/dataset/training_rows.h"
#include "storage/hyper/hyperparameter_file.h"

#include <fmt/format.h>

namespace gpstream {
namespace {

// The model a hyperparameter file and a dataset make: the file's prior, its standardisation (or the
// dataset's statistics when it has none), the dataset's inputs.
ModelDescription describe_transductive_model(const TransductiveSettings& settings) {
  HyperparameterFile file = read_hyperparameter_file(settings.hyper_path);
  const DatasetDescription dataset = read_dataset_description(settings.data_path);
  match_inputs(file, dataset.feature_names, settings.hyper_path, settings.data_path);
  ModelDescription model;
  model.prior = file.prior;
  model.standardisation = file.standardisation ? *file.standardisation : dataset_standardisation(dataset);
  GPSTREAM_CHECK(model.standardisation.x_mean.size() == dataset.columns,
                 "the hyperparameter file '{}' was learned on {} inputs, but '{}' has {}", settings.hyper_path,
                 model.standardisation.x_mean.size(), settings.data_path, dataset.columns);
  model.dataset_path = settings.data_path;
  model.rows = dataset.rows;
  model.columns = dataset.columns;
  model.feature_names = dataset.feature_names;
  model.target_name = dataset.target_name;
  model.training.solver = settings.method == TransductiveSettings::Method::committee ? "bcm" : "srm-trans";
  return model;
}

class TransductivePredictor final : public Predictor {
 public:
  TransductivePredictor(Context& context, const TransductiveSettings& settings)
      : Predictor(describe_transductive_model(settings)), context_(context), settings_(settings) {
    // The committee's rows are partitioned among the ranks of a distributed run.
    const Communicator& ranks = context.communicator();
    training_ = open_training_rows(settings.data_path, description().standardisation, description().prior.mean, context,
                                   {.vectors_per_row = 1,
                                    .expected_fingerprint = {},
                                    .expected_by = {},
                                    .rank = ranks.rank(),
                                    .ranks = ranks.size()});
    kernel_ = make_kernel(description().prior.kernel, description().columns);
    matrix_ = committee() ? std::make_unique<KernelMatrix>(context, training_->rows(), training_->partition(), *kernel_)
                          : std::make_unique<KernelMatrix>(context, training_->rows(), *kernel_);
    y_ = read_all_targets(training_->rows());  // this rank's
  }

  PredictionReport predict_standardised(const double* x, std::size_t rows, const PredictionRequest& request,
                           PredictionSink& sink) override {
    PredictionReport report;
    const auto start = std::chrono::steady_clock::now();
    SparsePrediction prediction;
    if (committee()) {
      CommitteePrediction committee;
      {
        const PhaseScope phase(sink, {.name = "bcm", .work_unit = "steps (k-means passes, then modules)"});
        committee = predict_by_committee(*matrix_, y_, x, rows, settings_.committee, request.variance);
      }
      const double seconds = seconds_since(start);
      report.how = fmt::format(
          "bcm with {} k-means modules of {}-{} rows, query blocks of {}: trained and predicted in {:.2f} s ({:.3g} "
          "ms per row)",
          committee.modules, committee.smallest_module, committee.largest_module, committee.query_block, seconds,
          1e3 * seconds / static_cast<double>(std::max<std::size_t>(rows, 1)));
      if (committee.extra_jitter > 0) {
        report.how += fmt::format("; {} module covariances needed extra jitter", committee.extra_jitter);
      }
      prediction = std::move(committee);
    } else {
      {
        const PhaseScope phase(sink, {.name = "srm-trans", .work_unit = "test rows"});
        prediction = predict_transductive(*matrix_, y_, x, rows, settings_.block_rows, request.variance);
      }
      const double seconds = seconds_since(start);
      report.how = fmt::format(
          "srm-trans on blocks of {} test rows: trained and predicted in {:.2f} s ({:.3g} ms per row)",
          settings_.block_rows, seconds, 1e3 * seconds / static_cast<double>(std::max<std::size_t>(rows, 1)));
    }
    report.negative_variances = prediction.negative_variances;
    // Another rank than 0 holds no predictions of its own: rank 0 sends them.
    if (context_.communicator().is_root()) {
      sink.means(prediction.mean);
      if (request.variance) sink.variances(0, prediction.latent);
    }
    return report;
  }

 private:
  bool committee() const { return settings_.method == TransductiveSettings::Method::committee; }

  Context& context_;
  TransductiveSettings settings_;
  std::unique_ptr<TrainingRows> training_;
  std::unique_ptr<Kernel> kernel_;
  std::unique_ptr<KernelMatrix> matrix_;
  std::vector<double> y_;
};

}  // namespace

std::unique_ptr<Predictor> open_transductive_predictor(Context& context, const TransductiveSettings& settings) {
  return std::make_unique<TransductivePredictor>(context, settings);
}

std::optional<TransductiveSettings::Method> find_transductive_method(std::string_view name) {
  // The routes by the names the command line and the docs give them.
  constexpr std::pair<std::string_view, TransductiveSettings::Method> kRoutes[] = {
      {"srm-trans", TransductiveSettings::Method::srm_trans},
      {"bcm", TransductiveSettings::Method::committee},
  };
  for (const auto& [known, method] : kRoutes) {
    if (name == known) return method;
  }
  return std::nullopt;
}

}  // namespace gpstream

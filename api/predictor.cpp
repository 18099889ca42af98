#include "api/predictor.h"

#include "api/predictor_implementations.h"
#include "engine/core/error.h"
#include "engine/prediction/predictive_distribution.h"

namespace gpstream {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

namespace {

// Takes a predictor's standardised means and latent variances to the target's units for `sink`.
class InTargetUnits final : public PredictionSink {
 public:
  InTargetUnits(const ModelDescription& model, bool noisy, const double* standardised_x, PredictionSink& sink)
      : model_(model), latent_(!noisy), x_(standardised_x), sink_(sink) {}
  void means(std::span<const double> mean) override {
    // The prior mean's trend is a function of the (standardised) inputs.
    const PredictiveDistribution in_units = in_target_units(model_, latent_, mean, {}, x_);
    sink_.means(in_units.mean);
  }
  void variances(std::size_t first, std::span<const double> latent) override {
    const PredictiveDistribution in_units = in_target_units(model_, latent_, {}, latent, nullptr, first);
    sink_.variances(first, in_units.variance);
  }
  void begin_phase(const PredictionPhase& phase) override { sink_.begin_phase(phase); }
  void end_phase() override { sink_.end_phase(); }

 private:
  const ModelDescription& model_;
  bool latent_;
  const double* x_;
  PredictionSink& sink_;
};

}  // namespace

std::vector<double> Predictor::standardised(const double* x, std::size_t rows) const {
  const std::size_t columns = description_.columns;
  std::vector<double> copy(x, x + rows * columns);
  description_.standardisation.apply_to_rows(copy.data(), rows, columns);
  return copy;
}

PredictionReport Predictor::predict(const double* x, std::size_t rows, const PredictionRequest& request,
                                    PredictionSink& sink) {
  const std::vector<double> standardised_x = standardised(x, rows);
  InTargetUnits converted(description_, request.variance_options.noisy, standardised_x.data(), sink);
  return predict_standardised(standardised_x.data(), rows, request, converted);
}

std::vector<double> Predictor::covariance(const double* x, std::size_t rows, bool noisy) {
  const std::vector<double> standardised_x = standardised(x, rows);
  std::vector<double> out = latent_covariance(standardised_x.data(), rows);
  const double scale = description_.standardisation.y_std * description_.standardisation.y_std;
  const double noise = noisy ? description_.prior.kernel.noise_variance : 0.0;  // y* = f* + ε
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < rows; ++j) out[i * rows + j] = (out[i * rows + j] + (i == j ? noise : 0.0)) * scale;
  }
  return out;
}

std::vector<double> Predictor::latent_covariance(const double* /*x*/, std::size_t /*rows*/) {
  throw Error(fmt::format("the joint covariance is computed for exact (dense) models; a {} model gives variances",
                          description().training.solver));
}

std::unique_ptr<Predictor> open_predictor(Context& context, Model model, const std::optional<TrainingData>& training,
                                          const std::string& model_name) {
  if (DenseModel* dense = model.dense()) return make_dense_predictor(context, std::move(*dense), model_name, training);
  return make_sparse_predictor(context, std::move(*model.sparse()), model_name, training);
}

std::unique_ptr<Predictor> open_model_predictor(Context& context, const std::string& model_path,
                                                const std::string& training_data) {
  std::optional<TrainingData> training;
  if (!training_data.empty()) training = TrainingData::file(training_data);
  return open_predictor(context, Model::load(model_path), training, "model '" + model_path + "'");
}

}  // namespace gpstream

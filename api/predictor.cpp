#include "api/predictor.h"

#include "api/predictor_implementations.h"
#include "engine/core/error.h"

namespace gpstream {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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

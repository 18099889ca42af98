#include "api/predictor.h"

#include "api/predictor_implementations.h"
#include "engine/core/error.h"
#include "storage/model/dense_model_file.h"
#include "storage/model/sparse_model_file.h"

namespace gpstream {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<double> Predictor::latent_covariance(const double* /*x*/, std::size_t /*rows*/) {
  throw Error(fmt::format("the joint covariance is computed for exact (dense) models; a {} model gives variances",
                          description().training.solver));
}

std::unique_ptr<Predictor> open_model_predictor(Context& context, const std::string& model_path,
                                                const std::string& training_data) {
  if (model_type_of(model_path) == "sparse") {
    return make_sparse_predictor(context, read_sparse_model(model_path), model_path, training_data);
  }
  return make_dense_predictor(context, read_dense_model(model_path), model_path, training_data);
}

}  // namespace gpstream

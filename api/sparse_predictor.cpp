// A sparse model's predictions: its closed forms over the basis
// (engine/sparse/sparse_prediction.h); the reduced-rank (Nyström) form
// streams the training rows too.
#include "api/predictor_implementations.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/sparse/sparse_prediction.h"

#include <fmt/format.h>

namespace gpstream {
namespace {

class SparsePredictor final : public Predictor {
 public:
  SparsePredictor(Context& context, SparseModel model, const std::string& model_name,
                  const std::optional<TrainingData>& training)
      : Predictor(model), context_(context), model_(std::move(model)) {
    kernel_ = make_kernel(model_.prior.kernel, model_.columns);
    if (model_.variance_form == SparseVarianceForm::reduced_rank) {
      training_ = open_training_rows(
          training.value_or(TrainingData::file(model_.dataset_path)), model_.standardisation, model_.prior.mean,
          context,
          {.vectors_per_row = 1, .expected_fingerprint = model_.dataset_fingerprint, .expected_by = model_name});
      matrix_ = std::make_unique<KernelMatrix>(context, training_->rows(), *kernel_);
    }
  }

  PredictionReport predict_standardised(const double* x, std::size_t rows, const PredictionRequest& request,
                           PredictionSink& sink) override {
    const auto start = std::chrono::steady_clock::now();
    SparsePrediction prediction =
        context_.execute([&] { return predict_sparse(model_, *kernel_, x, rows, request.variance, matrix_.get()); });
    const double seconds = seconds_since(start);
    sink.means(prediction.mean);
    if (request.variance) sink.variances(0, prediction.latent);
    PredictionReport report;
    report.how = fmt::format("{} model ({} basis rows): {} in {:.3f} s ({:.3g} ms per row)", model_.method,
                             model_.basis_size(), request.variance ? "means and variances" : "means", seconds,
                             1e3 * seconds / static_cast<double>(std::max<std::size_t>(rows, 1)));
    report.negative_variances = prediction.negative_variances;
    report.reduced_rank = model_.variance_form == SparseVarianceForm::reduced_rank;
    return report;
  }

 private:
  Context& context_;
  SparseModel model_;
  std::unique_ptr<Kernel> kernel_;
  std::unique_ptr<TrainingRows> training_;  // the reduced-rank form
  std::unique_ptr<KernelMatrix> matrix_;
};

}  // namespace

std::unique_ptr<Predictor> make_sparse_predictor(Context& context, SparseModel model, const std::string& model_name,
                                                 const std::optional<TrainingData>& training) {
  return std::make_unique<SparsePredictor>(context, std::move(model), model_name, training);
}

}  // namespace gpstream

// A dense model's predictions: the mean k*ᵀα streamed over its training rows
// (RW06 eq. 2.25), the variances k** − k*ᵀK̄⁻¹k* by the route plan_variances
// picks (engine/dense/dense_variance.h), each batch sent as it finishes.
#include "api/predictor_implementations.h"
#include "api/rank_agreement.h"
#include "engine/core/error.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/dense/dense_prediction.h"
#include "storage/scratch/scratch_file.h"

#include <fmt/format.h>

#include <filesystem>

namespace gpstream {
namespace {

class DensePredictor final : public Predictor {
 public:
  DensePredictor(Context& context, DenseModel model, const std::string& model_name,
                 const std::optional<TrainingData>& training)
      : Predictor(model), context_(context), alpha_(std::move(model.alpha)) {
    const Communicator& ranks = context.communicator();
    // On the ranks of a distributed run, each takes its own rows of the training set and of α.
    training_ = open_training_rows(training.value_or(TrainingData::file(model.dataset_path)), model.standardisation,
                                   model.prior.mean, context,
                                   {.vectors_per_row = 1,
                                    .expected_fingerprint = model.dataset_fingerprint,
                                    .expected_by = model_name,
                                    .rank = ranks.rank(),
                                    .ranks = ranks.size()});
    GPSTREAM_CHECK(training_->description().rows == model.rows,
                   "the training dataset has {} rows but the model {} weights", training_->description().rows,
                   model.rows);
    kernel_ = make_kernel(model.prior.kernel, model.columns);
    matrix_ = std::make_unique<KernelMatrix>(context, training_->rows(), training_->partition(), *kernel_);
  }

  PredictionReport predict_standardised(const double* x, std::size_t rows, const PredictionRequest& request,
                           PredictionSink& sink) override {
    Communicator& ranks = context_.communicator();
    const RowPartition& own = training_->partition();
    PredictionReport report;
    const auto start = std::chrono::steady_clock::now();
    check_ranks_agree(ranks, {{"the model's weights", digest_of(alpha_.data(), alpha_.size() * sizeof(double))},
                              {"the inputs to predict", digest_of(x, rows * description().columns * sizeof(double))}});
    const std::vector<double> mean = predict_mean(*matrix_, std::span(alpha_).subspan(own.first, own.count), x, rows);
    sink.means(mean);
    report.how = fmt::format("means in {:.2f} s", seconds_since(start));
    if (ranks.size() > 1) report.how += fmt::format(" on {} ranks", ranks.size());
    if (!request.variance) return report;

    VarianceOptions variance = request.variance_options;
    // K̄'s factor, when it goes to disk: the system's temporary directory unless the caller said where.
    if (!variance.open_factor_store) {
      variance.open_factor_store = scratch_files_in(std::filesystem::temp_directory_path().string());
      variance.factor_store_room = scratch_room_in(std::filesystem::temp_directory_path().string());
    }
    // Where a resumed run starts: rank 0's count (it read the rows done).
    double first_row = static_cast<double>(variance.first_row);
    ranks.broadcast(std::span(&first_row, 1), 0);
    variance.first_row = static_cast<std::size_t>(first_row);
    const VariancePlan plan = plan_variances(*matrix_, rows, variance, x);
    const bool cholesky = plan.method == VarianceMethod::cholesky, gbcd = plan.method == VarianceMethod::gbcd;
    const PhaseScope phase(sink,
                           {.name = cholesky ? "variance (cholesky)" : "variance",
                            .tolerance = gbcd ? variance.tolerance : 0.0,
                            .measure = gbcd ? "largest relative error bound of the open rows" : "",
                            .work_unit = cholesky ? "Mflop (factor of K, then the solves)" : "rows done",
                            .description = fmt::format("variances by {}: {}", to_string(plan.method), plan.reason),
                            .rows_done = variance.first_row});
    const auto variance_start = std::chrono::steady_clock::now();
    std::size_t computed = 0;  // rows whose variances are done
    const VariancePrediction prediction = predict_latent_variance(
        *matrix_, x, rows, variance, plan, [&](std::size_t first, std::span<const double> latent) {
          sink.variances(first, latent);
          computed += latent.size();
        });
    const double seconds = seconds_since(variance_start);
    report.how += fmt::format(", {} variances by {} in {:.2f} s ({:.3g} ms per row): {} batches of up to {} rows",
                              computed, to_string(plan.method), seconds,
                              1e3 * seconds / static_cast<double>(std::max<std::size_t>(computed, 1)),
                              prediction.batches, prediction.batch_rows);
    if (gbcd) {
      report.how += fmt::format(
          ", {} iterations, {} rows carried on with the next batch, largest relative error "
          "bound {:.2e}",
          prediction.iterations, prediction.carried_rows, prediction.largest_error_bound);
      if (prediction.local_rows > 0) {
        report.how += fmt::format(
            " (each batch started on up to {} local training rows, certified by a Nyström "
            "bound on {} rows where it paid: {} checks)",
            prediction.local_rows, prediction.certificate_points, prediction.certificate_checks);
      }
      if (const KernelColumnCache* cache = matrix_->column_cache(); cache != nullptr) {
        const ColumnCacheStatistics& counts = cache->statistics();
        report.how += fmt::format(
            "; {}: {:.0f}% hits", prediction.cache,
            100.0 * static_cast<double>(counts.hits) / static_cast<double>(std::max<std::uint64_t>(counts.lookups, 1)));
      } else if (!prediction.cache.empty()) {
        report.how += "; " + prediction.cache;
      }
      report.unconverged_rows = prediction.unconverged_rows;
      report.largest_error_bound = prediction.largest_error_bound;
    }
    report.stopped_at_time_limit = prediction.time_limit_reached;
    return report;
  }

  std::vector<double> latent_covariance(const double* x, std::size_t rows) override {
    GPSTREAM_CHECK(context_.communicator().size() == 1, "the joint covariance is computed in one process");
    return predict_latent_covariance(*matrix_, x, rows);
  }

  bool resumable_variances() const override { return true; }

 private:
  Context& context_;
  std::vector<double> alpha_;
  std::unique_ptr<TrainingRows> training_;
  std::unique_ptr<Kernel> kernel_;
  std::unique_ptr<KernelMatrix> matrix_;
};

}  // namespace

std::unique_ptr<Predictor> make_dense_predictor(Context& context, DenseModel model, const std::string& model_name,
                                                const std::optional<TrainingData>& training) {
  return std::make_unique<DensePredictor>(context, std::move(model), model_name, training);
}

}  // namespace gpstream

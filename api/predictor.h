// Predictor: what predicts y* at test rows — the one abstraction behind
// `gpstream predict` and Python's predict, documented here once.
//
// Every route implements it: a dense model (its α over the training rows it
// streams, the variances by plan_variances' route), a sparse model (its
// basis), and the two that fit at prediction time, SRM-Trans and the
// Bayesian committee machine (their training rows and hyperparameters).
// A predictor is opened once (it holds what it streams from) and predicts
// any number of test sets in the Context it was opened in.
//
// Units: the user's. The test rows are given in the inputs' own units and
// the means, variances and covariances come back in the target's; the
// model's standardisation (description().standardisation) and its prior mean
// are applied here, once, for every front end. The implementations work in
// the standardised units (predict_standardised).
#pragma once

#include "api/model.h"
#include "engine/core/context.h"
#include "engine/dense/dense_variance.h"
#include "engine/prediction/model_description.h"
#include "engine/sparse/committee_machine.h"
#include "storage/dataset/training_rows.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <string>
#include <vector>

namespace gpstream {

struct PredictionRequest {
  bool variance = false;  // also the latent variances
  // Dense models: the route and its settings (first_row: a resumed run's rows done).
  VarianceOptions variance_options;
};

// A long phase of a prediction, for a progress display (tools/training_observers.h).
struct PredictionPhase {
  std::string name;           // "variance", "srm-trans", …
  double tolerance = 0.0;     // of `measure`, when it converges to one
  std::string measure;        // what the iteration reports measure ("" for work of a known size)
  std::string work_unit;      // what `done` counts
  std::string description;    // e.g. "variances by cholesky: …" ("" when nothing to say)
  std::size_t rows_done = 0;  // rows a resumed run had finished before (VarianceOptions::first_row)
};

// Receives the predictions as they are made: the means of every row first,
// then the latent variances batch by batch, in row order (a dense model's
// variances take far longer than its means, and a stop keeps the batches
// done).
class PredictionSink {
 public:
  virtual ~PredictionSink() = default;
  virtual void means(std::span<const double> mean) = 0;
  virtual void variances(std::size_t first, std::span<const double> latent) = 0;
  // Before a phase that reports progress to the Context's observers.
  virtual void begin_phase(const PredictionPhase& phase) { (void)phase; }
  // After it (also when it stopped early).
  virtual void end_phase() {}
};

struct PredictionReport {
  std::string how;  // for a summary line: the route, its size and its time
  // Latent variances whose formula came out negative, sent as 0.
  std::size_t negative_variances = 0;
  // The reduced-rank (Nyström) form: negative variances are where its K̃ underestimates K.
  bool reduced_rank = false;
  // Dense models, gbcd variances: rows stopped by their iteration limit above the tolerance.
  std::size_t unconverged_rows = 0;
  double largest_error_bound = 0.0;
  // Dense models: the variances stopped at VarianceOptions::time_limit_seconds; rows after the
  // last batch sent have none.
  bool stopped_at_time_limit = false;
};

class Predictor {
 public:
  virtual ~Predictor() = default;

  // The kernel, standardisation, inputs and training data of the model.
  const ModelDescription& description() const { return description_; }

  // Predicts `rows` test rows (row-major, description().columns inputs each, in their own units),
  // sending the means and the variances — of y*, or of f* when request.variance_options.noisy is
  // false — in the target's units to `sink`. Its stop request (Context) throws Cancelled.
  PredictionReport predict(const double* x, std::size_t rows, const PredictionRequest& request,
                           PredictionSink& sink);

  // The joint covariance of y* (of f* when not `noisy`) at the rows (rows × rows, the inputs in their
  // own units, the covariance in the target's), for the models that have one in closed form (dense);
  // the others throw saying so.
  std::vector<double> covariance(const double* x, std::size_t rows, bool noisy = true);

  // Whether a stopped run's variances can continue (VarianceOptions::first_row).
  virtual bool resumable_variances() const { return false; }

 protected:
  // predict() in the model's standardised units: the rows standardised, the sink given the
  // standardised means and latent variances (of f*).
  virtual PredictionReport predict_standardised(const double* x, std::size_t rows, const PredictionRequest& request,
                                                PredictionSink& sink) = 0;
  // The joint latent covariance of f* at standardised rows, standardised; by default: none.
  virtual std::vector<double> latent_covariance(const double* x, std::size_t rows);

  explicit Predictor(ModelDescription description) : description_(std::move(description)) {}

 private:
  // A copy of `rows` test rows in the model's standardised units.
  std::vector<double> standardised(const double* x, std::size_t rows) const;

  ModelDescription description_;
};

// The predictor of a model file from `gpstream train` (dense or sparse).
// `training_data`: where its training dataset is now, if it moved ("" for
// the path it records); a dense and a Nyström model stream it, checked
// against the model's fingerprint. On the ranks of a distributed run each
// takes its own share of a dense model's training rows.
std::unique_ptr<Predictor> open_model_predictor(Context& context, const std::string& model_path,
                                                const std::string& training_data = "");

// The predictor of a model in memory (api/model.h); `training`: its training
// rows, a file or the caller's arrays (when not given, the dataset path the
// model records), checked against the model's fingerprint; `model_name`
// names the model in messages.
std::unique_ptr<Predictor> open_predictor(Context& context, Model model,
                                          const std::optional<TrainingData>& training = std::nullopt,
                                          const std::string& model_name = "the model");

// The transductive routes, fitted at prediction time on DATA with the
// hyperparameters (and standardisation) of a `gpstream hyper` file:
// SRM-Trans (SchwaighoferTresp03 §3.1), each block of `block_rows` test
// rows the basis of its own SR fit; and the Bayesian committee machine
// (Tresp00), k-means modules of the training rows, each an exact GP.
struct TransductiveSettings {
  enum class Method { srm_trans, committee } method = Method::srm_trans;
  std::string data_path, hyper_path;
  std::size_t block_rows = 1000;  // srm-trans
  CommitteeOptions committee;     // bcm
};
std::unique_ptr<Predictor> open_transductive_predictor(Context& context, const TransductiveSettings& settings);
// The transductive route of this name ("srm-trans", "bcm"); nullopt for any other name.
std::optional<TransductiveSettings::Method> find_transductive_method(std::string_view name);

}  // namespace gpstream

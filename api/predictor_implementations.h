// The Predictor implementations' factories (predictor.h opens them); one file each.
#pragma once

#include "api/predictor.h"
#include "engine/dense/dense_model.h"
#include "engine/sparse/sparse_model.h"
#include "storage/dataset/training_rows.h"

#include <chrono>
#include <optional>

namespace gpstream {

// dense_predictor.cpp: α over the training rows, variances by plan_variances' route.
// `training`: the model's training rows (from its dataset path when not given); `model_name` names the model
// in messages ("model 'm.h5'").
std::unique_ptr<Predictor> make_dense_predictor(Context& context, DenseModel model, const std::string& model_name,
                                                const std::optional<TrainingData>& training);

// sparse_predictor.cpp: the basis's closed forms (the reduced-rank form streams the training rows too).
std::unique_ptr<Predictor> make_sparse_predictor(Context& context, SparseModel model, const std::string& model_name,
                                                 const std::optional<TrainingData>& training);

double seconds_since(std::chrono::steady_clock::time_point start);

// Calls the sink's end_phase however the phase ends.
class PhaseScope {
 public:
  PhaseScope(PredictionSink& sink, const PredictionPhase& phase) : sink_(sink) { sink_.begin_phase(phase); }
  ~PhaseScope() { sink_.end_phase(); }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;

 private:
  PredictionSink& sink_;
};

}  // namespace gpstream

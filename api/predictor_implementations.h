// The Predictor implementations' factories (predictor.h opens them); one file each.
#pragma once

#include "api/predictor.h"
#include "engine/dense/dense_model.h"
#include "engine/sparse/sparse_model.h"

#include <chrono>

namespace gpstream {

// dense_predictor.cpp: α over the training rows, variances by plan_variances' route.
std::unique_ptr<Predictor> make_dense_predictor(Context& context, DenseModel model, const std::string& model_path,
                                                const std::string& training_data);

// sparse_predictor.cpp: the basis's closed forms (the reduced-rank form streams the training rows too).
std::unique_ptr<Predictor> make_sparse_predictor(Context& context, SparseModel model, const std::string& model_path,
                                                 const std::string& training_data);

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

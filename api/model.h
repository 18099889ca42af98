// Model: what training produces and a model file holds — a dense model (α
// over the training rows, engine/dense/dense_model.h) or a sparse one (a
// basis and its weights, engine/sparse/sparse_model.h) — in memory. train
// (api/training.h) returns one; save() writes the file `gpstream predict`
// reads; open_predictor (api/predictor.h) predicts from it.
#pragma once

#include "engine/dense/dense_model.h"
#include "engine/sparse/sparse_model.h"
#include "storage/output/atomic_output_file.h"

#include <span>
#include <string>
#include <variant>

namespace gpstream {

class Model {
 public:
  explicit Model(DenseModel dense) : model_(std::move(dense)) {}
  explicit Model(SparseModel sparse) : model_(std::move(sparse)) {}
  // A model file written by save() or `gpstream train` (its contents checked as it is read).
  static Model load(const std::string& path);

  const ModelDescription& description() const;
  ModelDescription& description();
  // "dense" or "sparse", as the model file's type.
  const char* type() const { return dense() != nullptr ? "dense" : "sparse"; }
  // The weights: α, one per training row (dense), or β, one per basis row (sparse); standardised units.
  std::span<const double> weights() const;
  // Whether predicting needs the training rows (a dense model's α, the reduced-rank form's w).
  bool predicts_from_training_rows() const;

  // Writes the model file (atomically: a failure leaves no partial file).
  void save(const std::string& path, ExistingOutput existing) const;

  // The one of the two it is; null for the other.
  const DenseModel* dense() const { return std::get_if<DenseModel>(&model_); }
  const SparseModel* sparse() const { return std::get_if<SparseModel>(&model_); }
  DenseModel* dense() { return std::get_if<DenseModel>(&model_); }
  SparseModel* sparse() { return std::get_if<SparseModel>(&model_); }

 private:
  std::variant<DenseModel, SparseModel> model_;
};

}  // namespace gpstream

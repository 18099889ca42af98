#include "api/model.h"

#include "storage/model/dense_model_file.h"
#include "storage/model/sparse_model_file.h"

namespace gpstream {

Model Model::load(const std::string& path) {
  if (model_type_of(path) == "sparse") return Model(read_sparse_model(path));
  return Model(read_dense_model(path));
}

const ModelDescription& Model::description() const {
  return std::visit([](const auto& model) -> const ModelDescription& { return model; }, model_);
}

ModelDescription& Model::description() {
  return std::visit([](auto& model) -> ModelDescription& { return model; }, model_);
}

std::span<const double> Model::weights() const {
  if (const DenseModel* model = dense()) return model->alpha;
  return sparse()->weights;
}

bool Model::predicts_from_training_rows() const {
  return dense() != nullptr || sparse()->variance_form == SparseVarianceForm::reduced_rank;
}

void Model::save(const std::string& path, ExistingOutput existing) const {
  // A dense model predicts from its training rows: the file it writes must not be them.
  check_distinct_files({{"the model's training dataset", description().dataset_path}}, {{"the model file", path}});
  if (const DenseModel* model = dense()) {
    write_dense_model(path, *model, existing);
  } else {
    write_sparse_model(path, *sparse(), existing);
  }
}

}  // namespace gpstream

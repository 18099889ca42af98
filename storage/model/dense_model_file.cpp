#include "storage/model/dense_model_file.h"

#include "engine/core/error.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/model_attributes.h"
#include "storage/output/atomic_output_file.h"

namespace gpstream {

void write_dense_model(const std::string& path, const DenseModel& model, ExistingOutput existing) {
  validate_model_description(model, path);
  check_finite_values(model.alpha, "alpha", path);
  hdf5::write_file(path, existing, "model", [&](hid_t root) {
    write_model_header(root, "dense");
    write_model_description_attributes(root, model);
    hdf5::write_vector(root, "alpha", model.alpha);
  });
}

DenseModel read_dense_model(const std::string& path) {
  hdf5::Handle file = hdf5::open_file(path);
  const hid_t root = file.get();
  const std::string type = read_model_type(root, path);
  GPSTREAM_CHECK(type == "dense", "{}: a {} model, not a dense one", path, type);
  DenseModel model;
  read_model_description_attributes(root, path, model);
  model.alpha = hdf5::read_vector(root, "alpha", path, model.rows);
  validate_model_description(model, path);
  check_finite_values(model.alpha, "/alpha", path);
  return model;
}

}  // namespace gpstream

#include "storage/model/dense_model_file.h"

#include "engine/core/error.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/model_attributes.h"
#include "storage/output/atomic_output_file.h"

namespace gpstream {

void write_dense_model(const std::string& path, const DenseModel& model, bool overwrite) {
  AtomicOutputFile output(path, overwrite);
  {
    hdf5::Handle file = hdf5::create_file(output.temporary_path());
    const hid_t root = file.get();
    write_model_header(root, "dense");
    write_kernel_attributes(root, model.hyperparameters);
    write_standardisation_attributes(root, model.standardisation);
    hdf5::write_attribute(root, "dataset_path", model.dataset_path);
    hdf5::write_attribute(root, "dataset_fingerprint", model.dataset_fingerprint);
    hdf5::write_attribute(root, "rows", static_cast<std::int64_t>(model.rows));
    hdf5::write_attribute(root, "columns", static_cast<std::int64_t>(model.columns));
    hdf5::write_attribute(root, "feature_names", model.feature_names);
    hdf5::write_attribute(root, "target_name", model.target_name);
    write_training_summary_attributes(root, model.training);
    hdf5::write_vector(root, "alpha", model.alpha);
    file.close(path);
  }
  output.commit();
}

DenseModel read_dense_model(const std::string& path) {
  hdf5::Handle file = hdf5::open_file(path);
  const hid_t root = file.get();
  const std::string type = read_model_type(root, path);
  GPSTREAM_CHECK(type == "dense", "{}: a {} model, not a dense one", path, type);
  DenseModel model;
  model.hyperparameters = read_kernel_attributes(root, path);
  model.standardisation = read_standardisation_attributes(root, path);
  model.dataset_path = hdf5::read_string_attribute(root, "dataset_path", path);
  model.dataset_fingerprint = hdf5::read_string_attribute(root, "dataset_fingerprint", path);
  const std::int64_t rows = hdf5::read_integer_attribute(root, "rows", path);
  const std::int64_t columns = hdf5::read_integer_attribute(root, "columns", path);
  GPSTREAM_CHECK(rows > 0 && columns > 0, "{}: invalid shape {} x {}", path, rows, columns);
  model.rows = static_cast<std::size_t>(rows);
  model.columns = static_cast<std::size_t>(columns);
  model.feature_names = hdf5::read_string_array_attribute(root, "feature_names", path);
  model.target_name = hdf5::read_string_attribute(root, "target_name", path);
  model.training = read_training_summary_attributes(root, path);
  model.alpha = hdf5::read_vector(root, "alpha", path, model.rows);
  return model;
}

}  // namespace gpstream

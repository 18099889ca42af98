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
    hdf5::write_attribute(root, "format", std::string(kModelFormat));
    hdf5::write_attribute(root, "version", kModelVersion);
    hdf5::write_attribute(root, "model_type", std::string("dense"));
    write_kernel_attributes(root, model.hyperparameters);
    write_standardisation_attributes(root, model.standardisation);
    hdf5::write_attribute(root, "dataset_path", model.dataset_path);
    hdf5::write_attribute(root, "dataset_fingerprint", model.dataset_fingerprint);
    hdf5::write_attribute(root, "rows", static_cast<std::int64_t>(model.rows));
    hdf5::write_attribute(root, "columns", static_cast<std::int64_t>(model.columns));
    hdf5::write_attribute(root, "feature_names", model.feature_names);
    hdf5::write_attribute(root, "target_name", model.target_name);
    const TrainingSummary& training = model.training;
    hdf5::write_attribute(root, "solver", training.solver);
    hdf5::write_attribute(root, "stop_reason", training.stop_reason);
    hdf5::write_attribute(root, "iterations", static_cast<std::int64_t>(training.iterations));
    hdf5::write_attribute(root, "gradient_max_norm", training.gradient_max_norm);
    hdf5::write_attribute(root, "tolerance", training.tolerance);
    hdf5::write_attribute(root, "training_seconds", training.seconds);
    hdf5::write_attribute(root, "kernel_evaluations", static_cast<std::int64_t>(training.kernel_evaluations));
    hdf5::write_attribute(root, "created_by", std::string("gpstream " GPSTREAM_VERSION));
    hdf5::write_vector(root, "alpha", model.alpha);
    file.close(path);
  }
  output.commit();
}

DenseModel read_dense_model(const std::string& path) {
  hdf5::Handle file = hdf5::open_file(path);
  const hid_t root = file.get();
  hdf5::check_format(root, path, kModelFormat, kModelVersion);
  const std::string type = hdf5::read_string_attribute(root, "model_type", path);
  GPSTREAM_CHECK(type == "dense", "{}: model type '{}' is not supported by this gpstream", path, type);
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
  TrainingSummary& training = model.training;
  training.solver = hdf5::read_string_attribute(root, "solver", path);
  training.stop_reason = hdf5::read_string_attribute(root, "stop_reason", path);
  training.iterations = static_cast<std::uint64_t>(hdf5::read_integer_attribute(root, "iterations", path));
  training.gradient_max_norm = hdf5::read_double_attribute(root, "gradient_max_norm", path);
  training.tolerance = hdf5::read_double_attribute(root, "tolerance", path);
  training.seconds = hdf5::read_double_attribute(root, "training_seconds", path);
  training.kernel_evaluations = static_cast<std::uint64_t>(hdf5::read_integer_attribute(root, "kernel_evaluations", path));
  model.alpha = hdf5::read_vector(root, "alpha", path, model.rows);
  return model;
}

}  // namespace gpstream

#include "storage/model/sparse_model_file.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/model_attributes.h"
#include "storage/output/atomic_output_file.h"

namespace gpstream {

void write_sparse_model(const std::string& path, const SparseModel& model, ExistingOutput existing) {
  validate_sparse_model(model, path);
  hdf5::write_file(path, existing, "model", [&](hid_t root) {
    write_model_header(root, "sparse");
    hdf5::write_attribute(root, "method", model.method);
    hdf5::write_attribute(root, "variance_form", sparse_variance_form_name(model.variance_form));
    write_model_description_attributes(root, model);
    hdf5::write_attribute(root, "basis_size", static_cast<std::int64_t>(model.basis_size()));
    std::vector<std::string> names;
    std::vector<double> values;
    for (const auto& [name, value] : model.diagnostics) {
      names.push_back(name);
      values.push_back(value);
    }
    hdf5::write_attribute(root, "diagnostic_names", names);
    hdf5::write_attribute(root, "diagnostic_values", values);
    hdf5::write_vector(root, "basis_rows", model.basis_rows);
    hdf5::write_vector(root, "basis_indices",
                       std::vector<double>(model.basis_indices.begin(), model.basis_indices.end()));
    hdf5::write_vector(root, "weights", model.weights);
    hdf5::write_vector(root, "variance_factor", model.variance_factor);
    if (!model.basis_factor.empty()) hdf5::write_vector(root, "basis_factor", model.basis_factor);
    if (model.variance_form == SparseVarianceForm::reduced_rank) {
      hdf5::write_vector(root, "training_weights", model.training_weights);
    }
  });
}

SparseModel read_sparse_model(const std::string& path) {
  hdf5::Handle file = hdf5::open_file(path);
  const hid_t root = file.get();
  const std::string type = read_model_type(root, path);
  GPSTREAM_CHECK(type == "sparse", "{}: a {} model, not a sparse one", path, type);
  SparseModel model;
  model.method = hdf5::read_string_attribute(root, "method", path);
  model.variance_form = parse_sparse_variance_form(hdf5::read_string_attribute(root, "variance_form", path));
  read_model_description_attributes(root, path, model);
  const std::int64_t basis = hdf5::read_integer_attribute(root, "basis_size", path);
  GPSTREAM_CHECK(basis > 0, "{}: invalid basis size {}", path, basis);
  const std::size_t m = static_cast<std::size_t>(basis);
  const std::vector<std::string> names = hdf5::read_string_array_attribute(root, "diagnostic_names", path);
  const std::vector<double> values = hdf5::read_double_array_attribute(root, "diagnostic_values", path);
  GPSTREAM_CHECK(names.size() == values.size(), "{}: {} diagnostic names for {} values", path, names.size(),
                 values.size());
  for (std::size_t i = 0; i < names.size(); ++i) model.diagnostics[names[i]] = values[i];
  model.basis_rows = hdf5::read_vector(root, "basis_rows", path, checked_multiply(m, model.columns));
  for (const double index : hdf5::read_vector(root, "basis_indices", path)) {
    model.basis_indices.push_back(static_cast<std::size_t>(index));
  }
  model.weights = hdf5::read_vector(root, "weights", path, m);
  model.variance_factor = hdf5::read_vector(root, "variance_factor", path, checked_multiply(m, m));
  if (hdf5::has_link(root, "basis_factor")) model.basis_factor = hdf5::read_vector(root, "basis_factor", path, m * m);
  if (model.variance_form == SparseVarianceForm::reduced_rank) {
    model.training_weights = hdf5::read_vector(root, "training_weights", path, model.rows);
  }
  validate_sparse_model(model, path);
  return model;
}

std::string model_type_of(const std::string& path) {
  hdf5::Handle file = hdf5::open_file(path);
  return read_model_type(file.get(), path);
}

}  // namespace gpstream

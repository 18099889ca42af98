// The `gpstream._gpstream` extension: the engine and the gpstream commands
// in the Python process, for the package in python/gpstream (its
// scikit-learn estimator is written in Python over these few functions).
//
// run() is the command line's own code (tools/commands.h) run in-process —
// no second implementation: a model trained from Python is the CLI's model,
// bit for bit, and its errors, progress, checkpoints and Ctrl-C behave as
// there. Errors map to Python's: a usage mistake to ValueError, a stop
// (Ctrl-C) to KeyboardInterrupt, the rest to RuntimeError (MemoryError for
// the memory budget).
#include "engine/core/context.h"
#include "engine/core/error.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/models/dense_variance.h"
#include "engine/training/training_method.h"
#include "storage/dataset/dataset_format.h"
#include "storage/dataset/dataset_writer.h"
#include "storage/dataset/training_rows.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/dense_model_file.h"
#include "storage/model/sparse_model_file.h"
#include "tools/command_line.h"
#include "tools/commands.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

// `gpstream COMMAND ARGS…` as one process; returns its exit code.
int run_command(const std::string& name, const std::vector<std::string>& args) {
  for (const auto& command : gpstream::cli::kCommands) {
    if (name != command.name) continue;
    // What the command printed reaches a redirected stdout before Python reads it.
    struct Flush {
      ~Flush() {
        std::cout.flush();
        std::fflush(stdout);
        std::fflush(stderr);
      }
    } flush;
    try {
      const py::gil_scoped_release unlocked;  // the command's threads run; Python's do too
      return command.run(args);
    } catch (const gpstream::cli::UsageError& error) {
      throw py::value_error(error.what());
    } catch (const gpstream::Cancelled& error) {
      PyErr_SetString(PyExc_KeyboardInterrupt, error.what());
      throw py::error_already_set();
    } catch (const gpstream::MemoryBudgetExceeded& error) {
      PyErr_SetString(PyExc_MemoryError, (std::string(error.what()) + " (or raise memory=)").c_str());
      throw py::error_already_set();
    }
    // gpstream::Error and other std::exceptions become RuntimeError (pybind11's translation).
  }
  throw py::value_error("'" + name + "' is not a gpstream command");
}

// A gpstream dataset (/X, /y and their statistics) from arrays, as `gpstream
// convert` writes one; X is read in place when it is C-contiguous float64.
void write_dataset(const std::string& path, const py::array_t<double, py::array::c_style | py::array::forcecast>& x,
                   const py::array_t<double, py::array::c_style | py::array::forcecast>& y,
                   std::vector<std::string> feature_names, std::string target_name, bool overwrite) {
  if (x.ndim() != 2) throw py::value_error("X must be 2-dimensional (rows x inputs)");
  if (y.ndim() != 1 || y.shape(0) != x.shape(0)) throw py::value_error("y must hold one value per row of X");
  const std::size_t rows = static_cast<std::size_t>(x.shape(0)), columns = static_cast<std::size_t>(x.shape(1));
  if (feature_names.size() != columns) throw py::value_error("one feature name per column of X");
  const py::gil_scoped_release unlocked;
  gpstream::DatasetWriter writer(path, std::move(feature_names), std::move(target_name),
                                 {.chunk_rows = 0, .compression_level = 0, .overwrite = overwrite, .source = "python"});
  writer.append_rows(rows, x.data(), y.data());
  writer.finish();
}

py::dict describe(const gpstream::ModelDescription& model) {
  py::dict out;
  out["kernel"] = gpstream::kernel_name(model.hyperparameters);
  out["length_scale"] = model.hyperparameters.lengthscales;
  out["signal_variance"] = model.hyperparameters.signal_variance;
  out["noise_variance"] = model.hyperparameters.noise_variance;
  out["dataset_path"] = model.dataset_path;
  out["rows"] = model.rows;
  out["columns"] = model.columns;
  out["feature_names"] = model.feature_names;
  out["target_name"] = model.target_name;
  out["solver"] = model.training.solver;
  out["stop_reason"] = model.training.stop_reason;
  out["iterations"] = model.training.iterations;
  out["convergence_measure"] = model.training.convergence_measure;
  out["seconds"] = model.training.seconds;
  out["mean"] = model.standardisation.mean.describe(model.feature_names);
  return out;
}

// A dataset's size and names (its header), without reading its rows.
py::dict describe_dataset(const std::string& path) {
  const gpstream::DatasetDescription dataset = gpstream::read_dataset_description(path);
  py::dict out;
  out["rows"] = dataset.rows;
  out["columns"] = dataset.columns;
  out["feature_names"] = dataset.feature_names;
  out["target_name"] = dataset.target_name;
  return out;
}

// What a model file holds, for the estimator's fitted attributes.
py::dict read_model(const std::string& path) {
  if (gpstream::model_type_of(path) == "sparse") {
    const gpstream::SparseModel model = gpstream::read_sparse_model(path);
    py::dict out = describe(model);
    out["type"] = "sparse";
    out["weights"] = model.weights;
    out["basis_indices"] = model.basis_indices;
    return out;
  }
  const gpstream::DenseModel model = gpstream::read_dense_model(path);
  py::dict out = describe(model);
  out["type"] = "dense";
  out["alpha"] = model.alpha;
  return out;
}

// The joint predictive covariance of y* at the rows Z (raw units, m×d) of a
// dense model, in the target's units: (K** − K*ᵀK̄⁻¹K* + σ²I)·y_std²
// (engine/models/dense_variance.h; K̄'s n² doubles within `memory`, "" for
// the command line's default).
py::array_t<double> dense_covariance(const std::string& model_path, const std::string& data_path,
                                     const py::array_t<double, py::array::c_style | py::array::forcecast>& z,
                                     const std::string& memory, unsigned threads) {
  const gpstream::DenseModel model = gpstream::read_dense_model(model_path);
  if (z.ndim() != 2 || static_cast<std::size_t>(z.shape(1)) != model.columns)
    throw py::value_error("X must have one column per input of the model");
  const std::size_t m = static_cast<std::size_t>(z.shape(0)), d = model.columns;
  std::vector<double> rows(z.data(), z.data() + m * d);
  model.standardisation.apply_to_rows(rows.data(), m, d);
  gpstream::cli::ComputeOptions compute;
  if (!memory.empty()) compute.memory = memory;
  compute.threads = threads;
  std::vector<double> covariance;
  {
    const py::gil_scoped_release unlocked;
    gpstream::Context context(compute.context_settings());
    const std::unique_ptr<gpstream::TrainingRows> training =
        gpstream::open_training_rows(data_path, model.standardisation, context,
                                     {.vectors_per_row = 1,
                                      .expected_fingerprint = model.dataset_fingerprint,
                                      .expected_by = "model '" + model_path + "'",
                                      .rank = 0,
                                      .ranks = 1});
    const std::unique_ptr<gpstream::Kernel> kernel = gpstream::make_kernel(model.hyperparameters, d);
    gpstream::KernelMatrix matrix(context, training->rows(), *kernel);
    covariance = gpstream::predict_latent_covariance(matrix, rows.data(), m);
  }
  const double scale = model.standardisation.y_std * model.standardisation.y_std;
  py::array_t<double> out({m, m});
  double* values = out.mutable_data();
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < m; ++j) {
      const double noise = i == j ? model.hyperparameters.noise_variance : 0.0;  // y* = f* + ε
      values[i * m + j] = (covariance[i * m + j] + noise) * scale;
    }
  }
  return out;
}

// The method registry's names and families, for the estimator's checks and docs.
py::list training_methods() {
  py::list out;
  for (const gpstream::TrainingMethod& method : gpstream::training_methods()) {
    py::dict entry;
    entry["name"] = method.name;
    entry["dense"] = method.dense();
    entry["help"] = method.help;
    out.append(entry);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_gpstream, module) {
  module.doc() = "gpstream's engine and commands in the Python process (see the gpstream package)";
  gpstream::hdf5::initialise_library();
  module.def("run", &run_command, py::arg("command"), py::arg("args"),
             "Runs `gpstream COMMAND ARGS...` in this process and returns its exit code.");
  module.def("write_dataset", &write_dataset, py::arg("path"), py::arg("X"), py::arg("y"), py::arg("feature_names"),
             py::arg("target_name"), py::arg("overwrite") = false,
             "Writes arrays as a gpstream dataset (HDF5), as `gpstream convert` does.");
  module.def("describe_dataset", &describe_dataset, py::arg("path"), "A dataset's rows, columns and names.");
  module.def("dense_covariance", &dense_covariance, py::arg("model_path"), py::arg("data_path"), py::arg("X"),
             py::arg("memory") = "", py::arg("threads") = 0u,
             "The joint predictive covariance of y* at X for a dense model (target units).");
  module.def("training_methods", &training_methods, "The training methods of the registry: name, dense, help.");
  module.def("read_model", &read_model, py::arg("path"), "The contents of a gpstream model file, as a dict.");
  module.attr("version") = GPSTREAM_VERSION;
}

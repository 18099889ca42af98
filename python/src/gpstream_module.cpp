// The `gpstream._gpstream` extension: gpstream's API (api/) in the Python
// process, for the package in python/gpstream (its scikit-learn estimator
// is written in Python over these few functions and classes).
//
// Prediction is the API's Predictor on the caller's arrays (OpenModel).
// Training still runs the command line's own code (tools/commands.h)
// in-process: a model trained from Python is the CLI's model, bit for bit.
// Errors map to Python's: a usage mistake or an invalid argument to
// ValueError, a stop (Ctrl-C) to KeyboardInterrupt, the memory budget to
// MemoryError, the rest to RuntimeError.
#include "api/compute.h"
#include "api/predictor.h"
#include "engine/core/context.h"
#include "engine/core/error.h"
#include "engine/core/stop_flag.h"
#include "engine/kernels/kernel.h"
#include "engine/prediction/predictive_distribution.h"
#include "engine/training/training_method.h"
#include "storage/dataset/dataset_format.h"
#include "storage/dataset/dataset_writer.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/model/dense_model_file.h"
#include "storage/model/sparse_model_file.h"
#include "tools/command_line.h"
#include "tools/commands.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
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
    // Its errors become Python's by the module's exception translator.
    const py::gil_scoped_release unlocked;  // the command's threads run; Python's do too
    return command.run(args);
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

// Runs `work` on a thread of its own while this one waits with the GIL
// released, checking for Ctrl-C (Python's signal handlers run on the main
// thread only): a KeyboardInterrupt sets the Context's stop request, the
// work stops at its next check, and the KeyboardInterrupt is raised.
template <class Work>
void run_interruptibly(gpstream::Context& context, Work&& work) {
  gpstream::StopFlag stop;
  context.set_stop_flag(&stop);
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
    const std::lock_guard lock(mutex);
    done = true;
    finished.notify_one();
  });
  bool interrupted = false;
  for (;;) {
    {
      const py::gil_scoped_release unlocked;
      std::unique_lock lock(mutex);
      if (finished.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) break;
    }
    if (!interrupted && PyErr_CheckSignals() != 0) {  // the KeyboardInterrupt stays pending
      interrupted = true;
      stop.request();
    }
  }
  worker.join();
  context.set_stop_flag(nullptr);
  if (interrupted || PyErr_Occurred() != nullptr) throw py::error_already_set();
  if (failure) std::rethrow_exception(failure);
}

using InputArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

// A model opened for prediction (api/predictor.h), in a Context of its own:
// its training rows are opened once and serve every predict call.
class OpenModel {
 public:
  OpenModel(const std::string& model_path, const std::string& training_data, const std::string& memory,
            unsigned threads) {
    gpstream::ComputeSettings settings;
    if (!memory.empty()) settings.memory_bytes = gpstream::parse_byte_size(memory, "memory");
    settings.threads = threads;
    const py::gil_scoped_release unlocked;
    context_ = std::make_unique<gpstream::Context>(gpstream::context_settings(settings));
    predictor_ = gpstream::open_model_predictor(*context_, model_path, training_data);
  }

  // The predictive means and (with `variance`) variances of y* (of f* when `latent`) at the rows of X, in the
  // target's units.
  py::tuple predict(const InputArray& x, bool variance, bool latent) {
    std::vector<double> rows = standardised(x);
    const std::size_t count = static_cast<std::size_t>(x.shape(0));
    const gpstream::ModelDescription& model = predictor_->description();
    struct Collect final : gpstream::PredictionSink {
      std::vector<double> mean, latent;
      void means(std::span<const double> values) override { mean.assign(values.begin(), values.end()); }
      void variances(std::size_t first, std::span<const double> values) override {
        latent.resize(mean.size());
        std::copy(values.begin(), values.end(), latent.begin() + static_cast<std::ptrdiff_t>(first));
      }
    } sink;
    gpstream::PredictiveDistribution distribution;
    run_interruptibly(*context_, [&] {
      predictor_->predict(rows.data(), count, {.variance = variance, .variance_options = {}}, sink);
      distribution = gpstream::in_target_units(model.standardisation, model.hyperparameters.noise_variance, latent,
                                               sink.mean, sink.latent, rows.data());
    });
    py::object variances = py::none();
    if (variance) variances = py::array_t<double>(static_cast<py::ssize_t>(count), distribution.variance.data());
    return py::make_tuple(py::array_t<double>(static_cast<py::ssize_t>(count), distribution.mean.data()), variances);
  }

  // The joint predictive covariance of y* at the rows of X (count × count), in the target's units:
  // (K** − K*ᵀK̄⁻¹K* + σ²I)·y_std² (engine/dense/dense_variance.h; K̄'s n² doubles within the memory budget).
  py::array_t<double> covariance(const InputArray& x) {
    std::vector<double> rows = standardised(x);
    const std::size_t count = static_cast<std::size_t>(x.shape(0));
    std::vector<double> latent;
    run_interruptibly(*context_, [&] { latent = predictor_->latent_covariance(rows.data(), count); });
    const gpstream::ModelDescription& model = predictor_->description();
    const double scale = model.standardisation.y_std * model.standardisation.y_std;
    py::array_t<double> out({count, count});
    double* values = out.mutable_data();
    for (std::size_t i = 0; i < count; ++i) {
      for (std::size_t j = 0; j < count; ++j) {
        const double noise = i == j ? model.hyperparameters.noise_variance : 0.0;  // y* = f* + ε
        values[i * count + j] = (latent[i * count + j] + noise) * scale;
      }
    }
    return out;
  }

 private:
  // A copy of X in the model's standardised units.
  std::vector<double> standardised(const InputArray& x) const {
    const gpstream::ModelDescription& model = predictor_->description();
    if (x.ndim() != 2 || static_cast<std::size_t>(x.shape(1)) != model.columns) {
      throw py::value_error(fmt::format("X must have {} columns, the model's inputs", model.columns));
    }
    const std::size_t count = static_cast<std::size_t>(x.shape(0));
    std::vector<double> rows(x.data(), x.data() + count * model.columns);
    model.standardisation.apply_to_rows(rows.data(), count, model.columns);
    return rows;
  }

  std::unique_ptr<gpstream::Context> context_;
  std::unique_ptr<gpstream::Predictor> predictor_;
};

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
  // gpstream's errors as Python's (the others: gpstream::Error and std::exception become RuntimeError).
  py::register_exception_translator([](std::exception_ptr failure) {
    try {
      if (failure) std::rethrow_exception(failure);
    } catch (const gpstream::cli::UsageError& error) {
      PyErr_SetString(PyExc_ValueError, error.what());
    } catch (const gpstream::InvalidArgument& error) {
      PyErr_SetString(PyExc_ValueError, error.what());
    } catch (const gpstream::Cancelled& error) {
      PyErr_SetString(PyExc_KeyboardInterrupt, error.what());
    } catch (const gpstream::MemoryBudgetExceeded& error) {
      PyErr_SetString(PyExc_MemoryError, (std::string(error.what()) + " (or raise memory=)").c_str());
    }
  });
  module.def("run", &run_command, py::arg("command"), py::arg("args"),
             "Runs `gpstream COMMAND ARGS...` in this process and returns its exit code.");
  module.def("write_dataset", &write_dataset, py::arg("path"), py::arg("X"), py::arg("y"), py::arg("feature_names"),
             py::arg("target_name"), py::arg("overwrite") = false,
             "Writes arrays as a gpstream dataset (HDF5), as `gpstream convert` does.");
  module.def("describe_dataset", &describe_dataset, py::arg("path"), "A dataset's rows, columns and names.");
  py::class_<OpenModel>(module, "OpenModel", "A model file opened for prediction (its training rows opened once).")
      .def(py::init<const std::string&, const std::string&, const std::string&, unsigned>(), py::arg("model_path"),
           py::arg("training_data") = "", py::arg("memory") = "", py::arg("threads") = 0u)
      .def("predict", &OpenModel::predict, py::arg("X"), py::arg("variance") = false, py::arg("latent") = false,
           "(mean, variance or None) at the rows of X, in the target's units.")
      .def("covariance", &OpenModel::covariance, py::arg("X"),
           "The joint predictive covariance of y* at the rows of X (exact models), in the target's units.");
  module.def(
      "parse_byte_size",
      [](const std::string& text, const std::string& what) { return gpstream::parse_byte_size(text, what); },
      py::arg("text"), py::arg("what"), "Bytes in \"512M\", \"2G\", …; ValueError naming `what` otherwise.");
  module.def(
      "kernel_lengthscales",
      [](const std::string& kernel, std::size_t inputs) {
        try {
          return gpstream::default_lengthscale_count(gpstream::parse_kernel_type(kernel), inputs);
        } catch (const gpstream::Error& error) {
          throw py::value_error(fmt::format("kernel='{}': {}", kernel, error.what()));
        }
      },
      py::arg("kernel"), py::arg("inputs"),
      "How many lengthscales the registry's kernel takes on `inputs` inputs; ValueError for an unknown kernel.");
  module.def("training_methods", &training_methods, "The training methods of the registry: name, dense, help.");
  module.def("read_model", &read_model, py::arg("path"), "The contents of a gpstream model file, as a dict.");
  module.attr("version") = GPSTREAM_VERSION;
}

// The `gpstream._gpstream` extension: gpstream's API (api/) in the Python
// process, for the package in python/gpstream (its scikit-learn estimator
// is written in Python over these few functions and classes). The command
// line (tools/) calls the same API; nothing here goes through it.
//
// train() is api/training.h on the caller's arrays (read in place when they
// are C-contiguous float64) or on a dataset file, and returns a Model;
// OpenModel is the API's Predictor on a Model and its training rows.
// Long work runs on a thread of its own while the calling thread, GIL
// released between polls, relays progress to a Python callback and Ctrl-C
// to the engine. Errors map to Python's: an invalid argument to
// ValueError, a stop (Ctrl-C) to KeyboardInterrupt, the memory budget to
// MemoryError, the rest to RuntimeError.
#include "api/compute.h"
#include "api/datasets.h"
#include "api/file_description.h"
#include "api/job_configuration.h"
#include "api/job_specification.h"
#include "api/job_rules.h"
#include "api/learning_plan.h"
#include "api/parameter_schema.h"
#include "api/search_checkpoints.h"
#include "api/predictor.h"
#include "api/process.h"
#include "api/training_job.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace py = pybind11;

namespace {

// A message from the libraries with its parameters (in backticks: engine/core/error.h) spelt as Python's
// keywords, which are the API's names — but for the two the estimator spells as a value of another: learning
// is optimizer='lbfgs', and the schema's `standardise` (the command line's --no-standardise) standardise=False.
std::string for_python(std::string_view message) {
  return gpstream::spell_parameters(message, [](std::string_view name) {
    if (name == "learn_hyper") return std::string("optimizer='lbfgs'");
    if (name == "standardise") return std::string("standardise=False");
    return std::string(name);
  });
}

py::dict describe(const gpstream::ModelDescription& model) {
  py::dict out;
  out["kernel"] = gpstream::kernel_name(model.prior.kernel);
  out["length_scale"] = model.prior.kernel.lengthscales;
  out["signal_variance"] = model.prior.kernel.signal_variance;
  out["noise_variance"] = model.prior.kernel.noise_variance;
  py::list terms;  // every term of a sum, the first first, with its family's own parameters under their names
  const gpstream::KernelHyperparameters& kernel = model.prior.kernel;
  for (std::size_t t = 0; t < kernel.term_count(); ++t) {
    const gpstream::KernelTerm& values = kernel.term(t);
    py::dict term;
    term["kernel"] = gpstream::kernel_type_name(values.type);
    term["length_scale"] = values.lengthscales;
    term["signal_variance"] = values.signal_variance;
    const auto specs = gpstream::family_parameter_specs(values.type);
    for (std::size_t f = 0; f < specs.size(); ++f) term[specs[f].name] = values.family_parameters[f];
    terms.append(term);
  }
  out["terms"] = terms;
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
  out["precision"] = model.training.precision;
  out["exact_residuals_in_single_precision"] = model.training.exact_residuals_in_single_precision;
  out["mean"] = model.prior.mean.describe(model.feature_names);
  return out;
}

// Runs `work` on a thread of its own while this one waits with the GIL
// released, checking for Ctrl-C (Python's signal handlers run on the main
// thread only) and calling `poll` (with the GIL) every 100 ms and at the
// end: a KeyboardInterrupt, or an exception `poll` raises, sets the
// Context's stop request, the work stops at its next check, and the
// exception is raised.
template <class Work>
void run_interruptibly(gpstream::Context& context, Work&& work, const std::function<void()>& poll = {}) {
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
  std::optional<py::error_already_set> raised;  // by `poll`
  const auto poll_once = [&] {
    if (!poll || raised) return;
    try {
      poll();
    } catch (py::error_already_set& error) {
      raised.emplace(std::move(error));
      stop.request();
    }
  };
  for (bool finished_now = false; !finished_now;) {
    {
      const py::gil_scoped_release unlocked;
      std::unique_lock lock(mutex);
      finished_now = finished.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; });
    }
    poll_once();
    if (!finished_now && !interrupted && PyErr_CheckSignals() != 0) {  // the KeyboardInterrupt stays pending
      interrupted = true;
      stop.request();
    }
  }
  worker.join();
  context.set_stop_flag(nullptr);
  // Ctrl-C while `poll` ran Python code (a progress callback) raised there: the engine's Cancelled says
  // where the work stopped and how to resume, and is raised instead, as for Ctrl-C between polls.
  if (raised && raised->matches(PyExc_KeyboardInterrupt) && failure) interrupted = true, raised.reset();
  if (raised) throw std::move(*raised);
  if (interrupted && failure) {
    PyErr_Clear();  // the engine's Cancelled says where it stopped (and how to resume): raised instead
    std::rethrow_exception(failure);
  }
  if (interrupted || PyErr_Occurred() != nullptr) throw py::error_already_set();
  if (failure) std::rethrow_exception(failure);
}

using InputArray = py::array_t<double, py::array::c_style | py::array::forcecast>;

gpstream::Context::Settings compute_settings(const std::string& memory, unsigned threads, std::uint64_t seed = 1) {
  gpstream::ComputeSettings settings;
  if (!memory.empty()) settings.memory_bytes = gpstream::parse_byte_size(memory, "memory");
  settings.threads = threads;
  settings.seed = seed;
  return gpstream::context_settings(settings);
}

// Training rows given from Python: arrays (converted to C-contiguous float64
// only when they are not already: then they are read in place, and kept
// alive here while the engine reads them) or a dataset file.
class TrainingArrays {
 public:
  TrainingArrays(const py::object& x, const py::object& y, const std::string& path,
                 std::vector<std::string> feature_names) {
    if (x.is_none()) {
      data_ = gpstream::TrainingData::file(path);
      return;
    }
    x_ = InputArray::ensure(x);
    y_ = InputArray::ensure(y);
    if (!x_ || x_.ndim() != 2) throw py::value_error("X must be a 2-dimensional array of numbers (rows x inputs)");
    if (!y_ || y_.ndim() != 1 || y_.shape(0) != x_.shape(0))
      throw py::value_error("y must hold one value per row of X");
    data_ = gpstream::TrainingData::in_memory({.x = x_.data(),
                                               .y = y_.data(),
                                               .rows = static_cast<std::size_t>(x_.shape(0)),
                                               .columns = static_cast<std::size_t>(x_.shape(1)),
                                               .feature_names = std::move(feature_names),
                                               .target_name = "y"});
  }
  const gpstream::TrainingData& data() const { return data_; }

 private:
  InputArray x_, y_;
  gpstream::TrainingData data_;
};

// A trained model in memory (api/model.h).
struct PyModel {
  gpstream::Model model;
};

// A model opened for prediction (api/predictor.h), in a Context of its own:
// its training rows (the caller's arrays, a dataset file, or the file the
// model records) are opened once and serve every predict call.
class OpenModel {
 public:
  OpenModel(const PyModel& model, const py::object& x, const py::object& y, const std::string& training_path,
            const std::string& memory, unsigned threads)
      : training_(x, y, training_path, model.model.description().feature_names) {
    const gpstream::Context::Settings settings = compute_settings(memory, threads);
    std::optional<gpstream::TrainingData> training;
    if (!x.is_none() || !training_path.empty()) training = training_.data();
    const py::gil_scoped_release unlocked;
    context_ = std::make_unique<gpstream::Context>(settings);
    predictor_ = gpstream::open_predictor(*context_, model.model, training);
  }

  // The predictive means and (with `variance`) variances of y* (of f* when `latent`) at the rows of X, in the
  // target's units.
  py::tuple predict(const InputArray& x, bool variance, bool latent, const std::string& variance_method,
                    std::size_t neighbours) {
    gpstream::VarianceOptions variance_options;
    variance_options.method = gpstream::parse_variance_method(variance_method);
    variance_options.noisy = !latent;
    gpstream::check_parameter("neighbours", static_cast<double>(neighbours));
    variance_options.neighbours = neighbours;
    check_columns(x);
    const std::size_t count = static_cast<std::size_t>(x.shape(0));
    struct Collect final : gpstream::PredictionSink {
      std::vector<double> mean, variance;
      void means(std::span<const double> values) override { mean.assign(values.begin(), values.end()); }
      void variances(std::size_t first, std::span<const double> values) override {
        variance.resize(mean.size());
        std::copy(values.begin(), values.end(), variance.begin() + static_cast<std::ptrdiff_t>(first));
      }
    } sink;
    // The Predictor takes X in its own units and gives the target's (api/predictor.h).
    run_interruptibly(*context_, [&] {
      predictor_->predict(x.data(), count, {.variance = variance, .variance_options = variance_options}, sink);
    });
    py::object variances = py::none();
    if (variance) variances = py::array_t<double>(static_cast<py::ssize_t>(count), sink.variance.data());
    return py::make_tuple(py::array_t<double>(static_cast<py::ssize_t>(count), sink.mean.data()), variances);
  }

  // The joint predictive covariance of y* at the rows of X (count × count), in the target's units
  // (engine/dense/dense_variance.h; K̄'s n² doubles within the memory budget).
  py::array_t<double> covariance(const InputArray& x) {
    check_columns(x);
    const std::size_t count = static_cast<std::size_t>(x.shape(0));
    std::vector<double> values;
    run_interruptibly(*context_, [&] { values = predictor_->covariance(x.data(), count); });
    py::array_t<double> out({count, count});
    std::copy(values.begin(), values.end(), out.mutable_data());
    return out;
  }

 private:
  void check_columns(const InputArray& x) const {
    const std::size_t columns = predictor_->description().columns;
    if (x.ndim() != 2 || static_cast<std::size_t>(x.shape(1)) != columns) {
      throw py::value_error(fmt::format("X must have {} columns, the model's inputs", columns));
    }
  }

  TrainingArrays training_;  // before the predictor, which reads them
  std::unique_ptr<gpstream::Context> context_;
  std::unique_ptr<gpstream::Predictor> predictor_;
};

// Reports of the engine's thread, queued for the calling thread (which holds
// the GIL) to hand to Python: progress rows and warnings.
class QueuedReports final : public gpstream::RunObserver {
 public:
  explicit QueuedReports(std::string stage) : stage_(std::move(stage)) {}
  void set_stage(std::string stage) {
    const std::lock_guard lock(mutex_);
    stage_ = std::move(stage);
  }
  void on_start(const gpstream::IterationReport& report) override { on_iteration(report); }
  void on_iteration(const gpstream::IterationReport& report) override {
    const std::lock_guard lock(mutex_);
    rows_.push_back({stage_, report.iteration, report.elapsed_seconds, report.objective, report.convergence_measure,
                     report.kernel_evaluations});
  }
  void on_warning(const std::string& message) override {
    const std::lock_guard lock(mutex_);
    warnings_.push_back(for_python(message));
  }
  // Hands what is queued to `callback` (a dict per row; none: dropped) and warnings to Python's warnings.
  void deliver(const py::object& callback) {
    std::deque<Row> rows;
    std::deque<std::string> warnings;
    {
      const std::lock_guard lock(mutex_);
      rows.swap(rows_);
      warnings.swap(warnings_);
    }
    for (const std::string& message : warnings) {
      if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1) != 0) throw py::error_already_set();
    }
    if (callback.is_none()) return;
    for (const Row& row : rows) {
      py::dict entry;
      entry["stage"] = row.stage;
      entry["iteration"] = row.iteration;
      entry["seconds"] = row.seconds;
      entry["objective"] = row.objective;
      entry["convergence_measure"] = row.convergence_measure;
      entry["kernel_evaluations"] = row.kernel_evaluations;
      callback(entry);
    }
  }

 private:
  struct Row {
    std::string stage;
    std::uint64_t iteration;
    double seconds, objective, convergence_measure;
    std::uint64_t kernel_evaluations;
  };
  std::mutex mutex_;
  std::string stage_;
  std::deque<Row> rows_;
  std::deque<std::string> warnings_;
};

// The files of a training job, the estimator's own parameters (not the schema's).
struct JobFiles {
  std::string checkpoint, resume, log;
};

// What the estimator hears of a training job (api/training_job.h): every evaluation and iteration queued for
// the progress callback, and what verbose=True and the report say of the start.
class PythonJobEvents final : public gpstream::TrainingJobEvents {
 public:
  PythonJobEvents(const gpstream::Context& context, QueuedReports& reports) : context_(context), reports_(reports) {}

  void on_learning(const gpstream::Training&, const gpstream::ModelLearningOptions&, std::size_t replayed) override {
    replayed_evaluations = replayed;
  }
  gpstream::RunObserver* search_progress() override { return &reports_; }
  void on_learned(const gpstream::Training&, const gpstream::ModelLearningOptions&,
                  const gpstream::LearnedModel&) override {
    reports_.set_stage("training");
  }
  void on_prepared(const gpstream::Training& training, const std::string& cache) override {
    column_cache = cache;
    precision = for_python(training.precision_choice());
    const gpstream::DatasetDescription& described = training.dataset();
    start = fmt::format("{} on {} rows x {} inputs, kernel {}, noise variance {:.4g}; {}; {}",
                        training.configuration().solver.name, described.rows, described.columns,
                        training.kernel().name(), training.kernel().noise_variance(), context_.memory().describe(),
                        training.in_memory() ? "X held in memory" : "X streamed from the file in blocks");
    for (const std::string& note : training.notes()) notes.push_back(for_python(note));
    for (const std::string& note : notes) start += "; " + note;
  }
  gpstream::RunObserver* training_progress(const gpstream::Training&) override { return &reports_; }
  void on_warning(const std::string& message) override { reports_.on_warning(message); }

  // For the report.
  std::string column_cache, precision, start;
  std::vector<std::string> notes;
  std::size_t replayed_evaluations = 0;  // of a resumed search, read from its checkpoint

 private:
  const gpstream::Context& context_;
  QueuedReports& reports_;
};

// The KeyboardInterrupt's message for a job stopped by Ctrl-C: where it stopped and how to continue it.
gpstream::Cancelled interrupted_job(const gpstream::JobInterrupted& stopped) {
  const std::string& checkpoint = stopped.checkpoint_path;
  if (stopped.stage == gpstream::JobInterrupted::Stage::learning) {
    if (checkpoint.empty()) return gpstream::Cancelled(stopped.what());
    return gpstream::Cancelled(
        fmt::format("{} while learning the hyperparameters; {} evaluations saved in {} (continue with resume={})",
                    stopped.what(), stopped.evaluations_saved, checkpoint, checkpoint));
  }
  return gpstream::Cancelled(fmt::format(
      "interrupted at iteration {}{}", stopped.iteration,
      checkpoint.empty() ? "; nothing was saved (give checkpoint= to be able to resume)"
                         : "; checkpoint written to " + checkpoint + " (continue with resume=" + checkpoint + ")"));
}

// Trains a model on the arrays X, y (or the dataset file at `path`): api/training_job.h. Returns the model and a
// report (how it stopped, the kernel chosen, ...); `progress` is called in this thread with each iteration.
py::tuple train(const py::object& x, const py::object& y, const std::string& path,
                std::vector<std::string> feature_names, const std::vector<std::pair<std::string, std::string>>& pairs,
                const JobFiles& files, const std::string& memory, unsigned threads, const py::object& progress) {
  const TrainingArrays rows(x, y, path, std::move(feature_names));
  // The estimator's parameters as the schema's pairs: checked, and the job built from them, by the API.
  gpstream::JobSpecification specification;
  for (const auto& [name, value] : pairs) specification.set(name, value);
  gpstream::TrainingJobSpecification job;
  {
    const py::gil_scoped_release unlocked;
    std::optional<gpstream::SearchCheckpoint> replay;  // a learning search resumed: its evaluations so far
    if (!files.resume.empty() && gpstream::is_search_checkpoint(files.resume)) {
      replay = gpstream::read_search_checkpoint(files.resume);
      // The command line's search (`gpstream hyper`, `train --learn-hyper`) is continued too: its arguments are
      // its command line, and the journal checks the points it replays (api/search_checkpoints.h).
      GPSTREAM_CHECK_ARGUMENT(
          replay->command != gpstream::kPythonSearch || replay->arguments == specification.arguments(),
          "`resume`: the search saved in '{}' was started with other parameters ({}); give the "
          "same, or start again without resume",
          files.resume, fmt::join(replay->arguments, ", "));
    } else if (!files.resume.empty()) {
      gpstream::Checkpoint resumed = gpstream::read_training_checkpoint(files.resume);
      job.configuration = std::move(resumed.configuration);
      job.resumed_state = std::move(resumed.state);
      job.resumed_from = files.resume;
    }
    if (!job.resumed_state) {
      specification.check_rules();
      const gpstream::DatasetDescription dataset = gpstream::describe_training_data(rows.data());
      GPSTREAM_CHECK_ARGUMENT(!replay || replay->dataset_fingerprint == dataset.fingerprint,
                              "`resume`: the search saved in '{}' learned on other data", files.resume);
      gpstream::FreshJobParameters fresh = specification.fresh_job();
      fresh.log_path = files.log;
      job.configuration = gpstream::configure_fresh_job(fresh, dataset);
      if (specification.given("learn_hyper")) {
        job.learning = gpstream::plan_learning(specification.learning(), dataset, "the training rows").options;
        job.search = {gpstream::kPythonSearch, specification.arguments(), {}, {}};
        if (replay) job.replay = std::move(*replay);
      }
    }
    // A resumed search goes on checkpointing into its file, and the training after it too.
    job.checkpoint_path = !files.checkpoint.empty() ? files.checkpoint : replay ? files.resume : std::string();
  }
  // A job resumed without data of its own continues on the file its checkpoint records.
  job.data = job.resumed_state && x.is_none() && path.empty()
                 ? gpstream::TrainingData::file(job.configuration.dataset_path)
                 : rows.data();
  gpstream::Context context(compute_settings(memory, threads, job.configuration.seed));
  QueuedReports reports(job.learning ? "learning" : "training");
  PythonJobEvents events(context, reports);
  std::optional<PyModel> trained;
  gpstream::TrainingResult result;
  run_interruptibly(
      context,
      [&] {
        try {
          result = gpstream::run_training_job(context, std::move(job), events);
        } catch (const gpstream::JobInterrupted& stopped) {
          throw interrupted_job(stopped);
        }
        trained.emplace(PyModel{std::move(*result.model)});
      },
      [&] { reports.deliver(progress); });
  py::dict report;
  report["stop_reason"] = gpstream::describe(result.run.reason);
  report["iterations"] = result.run.last.iteration;
  report["seconds"] = result.run.last.elapsed_seconds;
  report["convergence_measure"] = result.run.last.convergence_measure;
  report["column_cache"] = events.column_cache;
  report["precision"] = events.precision;
  report["start"] = events.start;
  report["notes"] = events.notes;  // what the job changed of its parameters to fit, for the estimator to warn of
  report["replayed_evaluations"] = events.replayed_evaluations;
  return py::make_tuple(std::move(*trained), report);
}

// The method registry's names and families, for the estimator's checks and docs.
py::list training_methods() {
  py::list out;
  for (const gpstream::TrainingMethod& method : gpstream::training_methods()) {
    py::dict entry;
    entry["name"] = method.name;
    entry["dense"] = method.dense();
    entry["help"] = for_python(method.help);
    out.append(entry);
  }
  return out;
}

// gpstream's errors as Python's, their parameters spelt as the keywords (the other gpstream::Errors become
// RuntimeError).
void translate_errors() {
  py::register_exception_translator([](std::exception_ptr failure) {
    try {
      if (failure) std::rethrow_exception(failure);
    } catch (const gpstream::OutputExists& error) {
      PyErr_SetString(PyExc_FileExistsError, for_python(error.what()).c_str());
    } catch (const gpstream::InvalidArgument& error) {
      PyErr_SetString(PyExc_ValueError, for_python(error.what()).c_str());
    } catch (const gpstream::Cancelled& error) {
      PyErr_SetString(PyExc_KeyboardInterrupt, for_python(error.what()).c_str());
    } catch (const gpstream::MemoryBudgetExceeded& error) {
      PyErr_SetString(PyExc_MemoryError, (for_python(error.what()) + " (or raise memory=)").c_str());
    } catch (const gpstream::Error& error) {
      PyErr_SetString(PyExc_RuntimeError, for_python(error.what()).c_str());
    }
  });
}

// The model, what train() trains, and train().
void bind_training(py::module_& module) {
  py::class_<PyModel>(module, "Model", "A trained model in memory, dense or sparse (api/model.h).")
      .def_static(
          "load", [](const std::string& path) { return PyModel{gpstream::Model::load(path)}; }, py::arg("path"),
          "The model of a file written by save() or `gpstream train`.")
      .def(
          "save",
          [](const PyModel& self, const std::string& path, bool overwrite, const std::string& dataset_path) {
            gpstream::Model model = self.model;
            if (!dataset_path.empty()) model.description().dataset_path = dataset_path;
            model.save(path, overwrite ? gpstream::ExistingOutput::replace : gpstream::ExistingOutput::refuse);
          },
          py::arg("path"), py::arg("overwrite") = false, py::arg("dataset_path") = "",
          "Writes the model file `gpstream predict` reads (`dataset_path`: where its training data are now).")
      .def(
          "describe",
          [](const PyModel& self) {
            py::dict out = describe(self.model.description());
            out["type"] = self.model.type();
            const std::span<const double> weights = self.model.weights();
            out["weights"] = std::vector<double>(weights.begin(), weights.end());
            if (const gpstream::SparseModel* sparse = self.model.sparse()) out["basis_indices"] = sparse->basis_indices;
            out["predicts_from_training_rows"] = self.model.predicts_from_training_rows();
            return out;
          },
          "What the model holds, as a dict.");
  py::class_<JobFiles>(module, "JobFiles", "A training job's files: checkpoint, resume, log.")
      .def(py::init<>())
      .def_readwrite("checkpoint", &JobFiles::checkpoint)
      .def_readwrite("resume", &JobFiles::resume)
      .def_readwrite("log", &JobFiles::log);
  module.def("train", &train, py::arg("X"), py::arg("y"), py::arg("path"), py::arg("feature_names"),
             py::arg("parameters"), py::arg("files"), py::arg("memory") = "", py::arg("threads") = 0u,
             py::arg("progress") = py::none(),
             "(Model, report): trains on the arrays X, y (read in place when C-contiguous float64) or, when X is "
             "None, on the dataset file at `path`, the job given as the schema's (name, value) pairs "
             "(api/job_specification.h); progress(row) is called in this thread with each iteration.");
}

// A model opened for prediction.
void bind_prediction(py::module_& module) {
  py::class_<OpenModel>(module, "OpenModel", "A model opened for prediction (its training rows opened once).")
      .def(py::init<const PyModel&, const py::object&, const py::object&, const std::string&, const std::string&,
                    unsigned>(),
           py::arg("model"), py::arg("X") = py::none(), py::arg("y") = py::none(), py::arg("training_path") = "",
           py::arg("memory") = "", py::arg("threads") = 0u)
      .def("predict", &OpenModel::predict, py::arg("X"), py::arg("variance") = false, py::arg("latent") = false,
           py::arg("variance_method") = "auto", py::arg("neighbours") = gpstream::VarianceOptions{}.neighbours,
           "(mean, variance or None) at the rows of X, in the target's units; dense models' variances by "
           "variance_method (auto, cholesky, gbcd, or nearest: upper bounds from `neighbours` rows).")
      .def("covariance", &OpenModel::covariance, py::arg("X"),
           "The joint predictive covariance of y* at the rows of X (exact models), in the target's units.");
}

// Datasets and what a gpstream file holds.
void bind_files(py::module_& module) {
  module.def(
      "write_dataset",
      [](const std::string& path, const py::object& x, const py::object& y, std::vector<std::string> feature_names,
         bool overwrite) {
        const TrainingArrays rows(x, y, "", std::move(feature_names));
        const py::gil_scoped_release unlocked;
        gpstream::write_dataset(path, rows.data().arrays, {.overwrite = overwrite, .source = "python"});
      },
      py::arg("path"), py::arg("X"), py::arg("y"), py::arg("feature_names"), py::arg("overwrite") = false,
      "Writes arrays as a gpstream dataset (HDF5), as `gpstream convert` does.");
  module.def(
      "check_output",
      [](const std::string& path, bool overwrite) { gpstream::check_new_output(path, "save", overwrite); },
      py::arg("path"), py::arg("overwrite") = false,
      "Checks, before anything is written, that `path` can be written: its directory exists, it is not a directory, "
      "and (unless overwrite) it does not exist (FileExistsError).");
  module.def(
      "convert",
      [](const std::string& csv, const std::string& output, const std::string& target, bool overwrite,
         bool drop_invalid) {
        gpstream::CsvImportOptions options;
        options.target = target;
        options.drop_invalid = drop_invalid;
        const py::gil_scoped_release unlocked;
        gpstream::convert_csv(csv, output, options, {.overwrite = overwrite, .source = csv});
      },
      py::arg("csv"), py::arg("output"), py::arg("target") = "", py::arg("overwrite") = false,
      py::arg("drop_invalid") = false, "Converts a CSV file into a gpstream dataset (as `gpstream convert`).");
  module.def(
      "describe_file",
      [](const std::string& path) {
        const py::gil_scoped_release unlocked;
        // Python resumes a training job by the estimator's `resume`; a hyperparameter search is the command
        // line's (gpstream hyper, or train --learn-hyper), continued by the command that wrote it.
        return gpstream::describe_file(path, [](const std::string& saved, const gpstream::SearchCheckpoint* search) {
          if (search == nullptr) return fmt::format("GaussianProcessRegressor(resume='{}').fit(...)", saved);
          return fmt::format("the gpstream {} command that wrote it (gpstream info from a shell prints it)",
                             search->command);
        });
      },
      py::arg("path"), "What a gpstream file holds, as `gpstream info` prints it.");
  module.def(
      "describe_dataset",
      [](const std::string& path) {
        const gpstream::DatasetDescription dataset = gpstream::read_dataset_description(path);
        py::dict out;
        out["rows"] = dataset.rows;
        out["columns"] = dataset.columns;
        out["feature_names"] = dataset.feature_names;
        out["target_name"] = dataset.target_name;
        return out;
      },
      py::arg("path"), "A dataset's rows, columns and names (its header), without reading its rows.");
}

// The parameter schema, the registries and the rules between parameters, for the estimator's checks.
void bind_schema(py::module_& module) {
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
  module.def("default_kernel", &gpstream::default_kernel, py::arg("learning"),
             "The kernel of a fit that names none: auto when learning, else rbf (api/job_specification.h).");
  module.def(
      "parameters",
      [] {
        py::list out;
        for (const gpstream::Parameter& parameter : gpstream::schema_parameters()) {
          py::dict entry;
          entry["name"] = parameter.name;
          entry["option"] = "--" + parameter.option;
          entry["default"] = parameter.default_text;
          entry["expected"] = parameter.expected();
          entry["help"] = for_python(parameter.help);
          entry["python"] = parameter.python;
          out.append(entry);
        }
        return out;
      },
      "The parameter schema (api/parameter_schema.h): name, option, default (text), expected, help, python.");
  module.def(
      "check_choice", [](const std::string& name, const std::string& value) { gpstream::check_choice(name, value); },
      "ValueError unless `value` is one of the choices the schema declares for parameter `name`.");
  module.def(
      "check_parameter", [](const std::string& name, double value) { gpstream::check_parameter(name, value); },
      py::arg("name"), py::arg("value"), "ValueError \"name=value: give ...\" unless the schema's range holds it.");
  module.def(
      "kernels",
      [] {
        py::list out;
        for (const gpstream::KernelType type : gpstream::kernel_types()) {
          py::dict entry;
          entry["name"] = gpstream::kernel_type_name(type);
          entry["stationary"] = gpstream::is_stationary(type);
          // Matérn ν (infinity: the squared exponential); None for a kernel that is not stationary.
          entry["smoothness"] =
              gpstream::is_stationary(type) ? py::object(py::float_(gpstream::spectral_smoothness(type))) : py::none();
          entry["lengthscales_on_two_inputs"] = gpstream::default_lengthscale_count(type, 2);
          py::dict own;  // the family's own parameters by name, as its registry entry declares them
          for (const gpstream::FamilyParameterSpec& spec : gpstream::family_parameter_specs(type)) {
            py::dict declared;
            declared["start"] = spec.start;
            declared["lower"] = spec.lower;
            declared["upper"] = spec.upper;
            declared["meaning"] = spec.meaning;
            own[spec.name] = declared;
          }
          entry["parameters"] = own;
          out.append(entry);
        }
        return out;
      },
      "The kernel registry's families: name, stationary, smoothness (Matérn nu; inf for rbf; nan: not of the "
      "Matérn class), parameters (the family's own: name -> start, lower, upper, meaning).");
}

}  // namespace

PYBIND11_MODULE(_gpstream, module) {
  module.doc() = "gpstream's API in the Python process (see the gpstream package)";
  gpstream::initialise_process();
  translate_errors();
  bind_training(module);
  bind_prediction(module);
  bind_files(module);
  bind_schema(module);
  module.attr("version") = GPSTREAM_VERSION;
}

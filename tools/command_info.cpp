// gpstream info FILE: describes any gpstream file — dataset, model (dense or
// sparse), checkpoint, hyperparameter JSON — by what it holds.
#include "engine/training/training_method.h"
#include "storage/checkpoint/checkpoint_file.h"
#include "storage/dataset/dataset_format.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/hyper/hyperparameter_file.h"
#include "storage/model/dense_model_file.h"
#include "storage/model/sparse_model_file.h"
#include "tools/command_line.h"
#include "tools/commands.h"
#include "tools/training_observers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace gpstream::cli {
namespace {

void line(const char* label, const std::string& value) { fmt::print("{:<13}{}\n", label, value); }

void print_origin(const hdf5::FileOrigin& origin) {
  if (!origin.created_by.empty()) {
    line("created by", origin.created_by + (origin.created_at.empty() ? "" : ", " + origin.created_at));
  }
}

void print_kernel(const KernelHyperparameters& h) {
  line("kernel", kernel_type_name(h.type));
  if (!h.lengthscales.empty()) line("lengthscales", fmt::format("{:.6g}", fmt::join(h.lengthscales, ", ")));
  line("signal var", fmt::format("{:.6g}", h.signal_variance));
  line("noise var", fmt::format("{:.6g}", h.noise_variance));
}

void print_training_set(const std::string& path, const std::string& fingerprint, std::size_t rows,
                        std::size_t columns) {
  line("trained on",
       fmt::format("{} ({} rows x {} inputs, fingerprint {})", path, format_count(rows), columns, fingerprint));
}

void describe_dataset(const std::string& path) {
  const DatasetDescription dataset = read_dataset_description(path);
  line("file", dataset.path);
  line("kind", fmt::format("{} (version {})", kDatasetFormat, dataset.version));
  line("rows (n)", format_count(dataset.rows));
  line("inputs (d)", std::to_string(dataset.columns));
  line("target", dataset.target_name);
  line("fingerprint", dataset.fingerprint);
  if (!dataset.source.empty()) line("source", dataset.source);
  const hdf5::Handle file = hdf5::open_file(path);
  print_origin(hdf5::read_creation_attributes(file.get(), path));
  const std::size_t chunk_bytes = dataset.chunk_rows * dataset.columns * sizeof(double);
  line("chunks", fmt::format("{} rows x {} columns ({}), {}", format_count(dataset.chunk_rows), dataset.columns,
                             format_bytes(static_cast<double>(chunk_bytes)),
                             dataset.compression_level > 0
                                 ? fmt::format("deflate level {} with shuffle", dataset.compression_level)
                                 : std::string("uncompressed")));
  const double raw_bytes =
      static_cast<double>(dataset.rows) * static_cast<double>(dataset.columns + 1) * sizeof(double);
  line("size",
       fmt::format("{} on disk, {} of data ({} uncompressed)", format_bytes(static_cast<double>(dataset.file_bytes)),
                   format_bytes(static_cast<double>(dataset.data_bytes)), format_bytes(raw_bytes)));

  std::size_t width = dataset.target_name.size();
  for (const std::string& name : dataset.feature_names) width = std::max(width, name.size());
  width = std::max<std::size_t>(width, 6);
  fmt::print("\n{:<{}}  {:>14}  {:>14}\n", "column", width, "mean", "std");
  for (std::size_t j = 0; j < dataset.columns; ++j) {
    fmt::print("{:<{}}  {:>14.6g}  {:>14.6g}\n", dataset.feature_names[j], width, dataset.x_mean[j], dataset.x_std[j]);
  }
  fmt::print("{:<{}}  {:>14.6g}  {:>14.6g}  (target)\n", dataset.target_name, width, dataset.y_mean, dataset.y_std);
}

void describe_model(const std::string& path, const hdf5::FileOrigin& origin) {
  const std::string type = model_type_of(path);
  std::optional<DenseModel> dense;
  std::optional<SparseModel> sparse;
  if (type == "dense") {
    dense = read_dense_model(path);
  } else {
    sparse = read_sparse_model(path);
  }
  const ModelDescription& model = dense ? static_cast<const ModelDescription&>(*dense) : *sparse;
  const TrainingSummary& training = model.training;
  line("file", path);
  line("kind", fmt::format("{}, {}", kModelFormat,
                           dense ? std::string("dense (the exact GP: n weights)")
                                 : fmt::format("sparse ({}, basis of {} rows)", sparse->method, sparse->basis_size())));
  print_origin(origin);
  print_training_set(model.dataset_path, model.dataset_fingerprint, model.rows, model.columns);
  print_kernel(model.hyperparameters);
  line("trained by",
       fmt::format("{}: {} after {} iterations, {:.1f} s, {} kernel evaluations", training.solver, training.stop_reason,
                   format_count(training.iterations), training.seconds, format_count(training.kernel_evaluations)));
  const TrainingMethod* method = find_training_method(training.solver);
  const bool measured = method == nullptr ||
                        (method->tolerance != ToleranceMeaning::none && method->tolerance != ToleranceMeaning::direct);
  if (measured) {
    line("convergence", fmt::format("{:.4g} (tolerance {:g}){}", training.convergence_measure, training.tolerance,
                                    training.convergence_measure <= training.tolerance ? "" : ", not converged"));
  }
}

void describe_checkpoint(const std::string& path, const hdf5::FileOrigin& origin) {
  const Checkpoint checkpoint = read_checkpoint(path);
  const TrainingConfiguration& configuration = checkpoint.configuration;
  const SolverState& state = checkpoint.state;
  const std::string& method = configuration.solver.name;
  line("file", path);
  line("kind", fmt::format("{} of a {} run", kCheckpointFormat, method));
  print_origin(origin);
  line("dataset", fmt::format("{} ({} rows, fingerprint {})", configuration.dataset_path,
                              format_count(configuration.rows), configuration.dataset_fingerprint));
  print_kernel(configuration.hyperparameters);
  const bool dense = !state.alpha.empty();
  line("reached", fmt::format("iteration {} after {:.1f} s{}", format_count(state.iteration), state.elapsed_seconds,
                              dense ? fmt::format(", |g|inf {:.4g}", gradient_max_norm(state)) : std::string()));
  line("stops at", describe_stopping_rule(configuration.job.stopping, method));
  line("output", configuration.job.output_path.empty() ? std::string("(none)") : configuration.job.output_path);
  if (!configuration.job.log_path.empty()) line("log", configuration.job.log_path);
  line("resume with", fmt::format("gpstream train --resume {}", shell_quoted(path)));
}

void describe_hyperparameters(const std::string& path) {
  const HyperparameterFile file = read_hyperparameter_file(path);
  line("file", path);
  line("kind", "gpstream hyperparameters (JSON)");
  print_kernel(file.hyperparameters);
  line("standardised", file.standardisation ? "yes: learned under the file's own statistics (used by train)"
                                            : "no statistics in the file (train uses the dataset's)");
}

// Whether the file starts (after white space) with '{': a JSON object.
bool looks_like_json(const std::string& path) {
  std::ifstream stream(path);
  char first = 0;
  while (stream.get(first) && std::isspace(static_cast<unsigned char>(first))) {
  }
  return stream && first == '{';
}

}  // namespace

int run_info(const std::vector<std::string>& args) {
  CommandSpec spec;
  spec.name = "info";
  spec.usage = "gpstream info FILE";
  spec.description =
      "Describe a gpstream file: a dataset (shape, columns and their statistics, chunks, fingerprint), a model "
      "(dense or sparse: kernel, hyperparameters, training set, solver and its convergence), a checkpoint (the "
      "job, where it stands, its stopping rule) or a hyperparameter file (JSON).";
  std::string path;
  spec.options.add_options()("file", po::value(&path)->required(), "a gpstream file (.h5 or hyperparameter .json)");
  spec.positional.add("file", 1);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;

  if (looks_like_json(path)) {
    describe_hyperparameters(path);
    return 0;
  }
  hdf5::FileOrigin origin;
  std::string format;
  {
    const hdf5::Handle file = hdf5::open_file(path);
    format = hdf5::read_format(file.get(), path);
    origin = hdf5::read_creation_attributes(file.get(), path);
  }
  if (format == kDatasetFormat) {
    describe_dataset(path);
  } else if (format == kModelFormat) {
    describe_model(path, origin);
  } else if (format == kCheckpointFormat) {
    describe_checkpoint(path, origin);
  } else {
    GPSTREAM_THROW("'{}' is a '{}' file, which this gpstream does not know", path, format);
  }
  return 0;
}

}  // namespace gpstream::cli

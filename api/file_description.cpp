#include "api/file_description.h"

#include "api/training.h"

#include "engine/core/error.h"
#include "engine/core/human_readable.h"
#include "engine/training/training_method.h"
#include "storage/checkpoint/checkpoint_file.h"
#include "storage/checkpoint/search_checkpoint.h"
#include "storage/dataset/dataset_format.h"
#include "storage/hdf5/hdf5_handle.h"
#include "storage/hyper/hyperparameter_file.h"
#include "storage/model/dense_model_file.h"
#include "storage/model/sparse_model_file.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace gpstream {
namespace {

// The description as it is built: labelled lines.
struct Text {
  std::string text;
  void line(const std::string& label, const std::string& value) { text += fmt::format("{:<13}{}\n", label, value); }
  template <class... Args>
  void add(fmt::format_string<Args...> format, Args&&... args) {
    text += fmt::format(format, std::forward<Args>(args)...);
  }
};

void print_origin(Text& out, const hdf5::FileOrigin& origin) {
  if (!origin.created_by.empty()) {
    out.line("created by", origin.created_by + (origin.created_at.empty() ? "" : ", " + origin.created_at));
  }
}

// A single kernel's values on lines of their own (its family's own parameters under their names); a sum's
// terms a line each: family, lengthscales, s², its own parameters.
void print_kernel(Text& out, const KernelHyperparameters& h) {
  out.line("kernel", kernel_name(h));
  if (h.term_count() == 1) {
    if (!h.lengthscales.empty()) out.line("lengthscales", fmt::format("{:.6g}", fmt::join(h.lengthscales, ", ")));
    out.line("signal var", fmt::format("{:.6g}", h.signal_variance));
    const auto specs = family_parameter_specs(h.type);
    for (std::size_t f = 0; f < specs.size(); ++f)
      out.line(specs[f].name, fmt::format("{:.6g}", h.family_parameters[f]));
  } else {
    for (std::size_t t = 0; t < h.term_count(); ++t) {
      out.line(fmt::format("term {}", t + 1),
               fmt::format("{}: {}", kernel_type_name(h.term(t).type), describe_term(h.term(t))));
    }
  }
  out.line("noise var", fmt::format("{:.6g}", h.noise_variance));
}

void print_training_set(Text& out, const std::string& path, const std::string& fingerprint, std::size_t rows,
                        std::size_t columns) {
  out.line("trained on",
           fmt::format("{} ({} rows x {} inputs, fingerprint {})", path, format_count(rows), columns, fingerprint));
}

void describe_dataset(Text& out, const std::string& path) {
  const DatasetDescription dataset = read_dataset_description(path);
  out.line("file", dataset.path);
  out.line("kind", fmt::format("{} (version {})", kDatasetFormat, dataset.version));
  out.line("rows (n)", format_count(dataset.rows));
  out.line("inputs (d)", std::to_string(dataset.columns));
  out.line("target", dataset.target_name);
  out.line("fingerprint", dataset.fingerprint);
  if (!dataset.source.empty()) out.line("source", dataset.source);
  const hdf5::Handle file = hdf5::open_file(path);
  print_origin(out, hdf5::read_creation_attributes(file.get(), path));
  const std::size_t chunk_bytes = dataset.chunk_rows * dataset.columns * sizeof(double);
  out.line("chunks", fmt::format("{} rows x {} columns ({}), {}", format_count(dataset.chunk_rows), dataset.columns,
                                 format_bytes(static_cast<double>(chunk_bytes)),
                                 dataset.compression_level > 0
                                     ? fmt::format("deflate level {} with shuffle", dataset.compression_level)
                                     : std::string("uncompressed")));
  const double raw_bytes =
      static_cast<double>(dataset.rows) * static_cast<double>(dataset.columns + 1) * sizeof(double);
  out.line("size", fmt::format("{} on disk, {} of data ({} uncompressed)",
                               format_bytes(static_cast<double>(dataset.file_bytes)),
                               format_bytes(static_cast<double>(dataset.data_bytes)), format_bytes(raw_bytes)));

  std::size_t width = dataset.target_name.size();
  for (const std::string& name : dataset.feature_names) width = std::max(width, name.size());
  width = std::max<std::size_t>(width, 6);
  out.add("\n{:<{}}  {:>14}  {:>14}\n", "column", width, "mean", "std");
  // A statistic no gpstream writes (a damaged or edited file) is said where it is shown.
  const auto invalid = [](double mean, double spread) {
    return std::isnan(mean) || std::isnan(spread) || spread < 0
               ? "  <- not a valid mean and standard deviation: train and predict refuse this dataset"
               : "";
  };
  for (std::size_t j = 0; j < dataset.columns; ++j) {
    out.add("{:<{}}  {:>14.6g}  {:>14.6g}{}\n", dataset.feature_names[j], width, dataset.x_mean[j], dataset.x_std[j],
            invalid(dataset.x_mean[j], dataset.x_std[j]));
  }
  out.add("{:<{}}  {:>14.6g}  {:>14.6g}  (target){}\n", dataset.target_name, width, dataset.y_mean, dataset.y_std,
          invalid(dataset.y_mean, dataset.y_std));
}

void describe_model(Text& out, const std::string& path, const hdf5::FileOrigin& origin) {
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
  out.line("file", path);
  out.line("kind",
           fmt::format("{}, {}", kModelFormat,
                       dense ? std::string("dense (the exact GP: n weights)")
                             : fmt::format("sparse ({}, basis of {} rows)", sparse->method, sparse->basis_size())));
  print_origin(out, origin);
  print_training_set(out, model.dataset_path, model.dataset_fingerprint, model.rows, model.columns);
  print_kernel(out, model.prior.kernel);
  out.line("trained by", fmt::format("{}: {} after {} iterations, {:.1f} s, {} kernel evaluations", training.solver,
                                     training.stop_reason, format_count(training.iterations), training.seconds,
                                     format_count(training.kernel_evaluations)));
  const TrainingMethod* method = find_training_method(training.solver);
  const bool measured = method == nullptr || method->stops_at_tolerance();
  if (measured) {
    out.line("convergence", fmt::format("{:.4g} (tolerance {:g}){}", training.convergence_measure, training.tolerance,
                                        training.convergence_measure <= training.tolerance ? "" : ", not converged"));
  }
  if (dense)
    out.line("precision", describe_precision(training.precision, training.exact_residuals_in_single_precision));
}

void describe_checkpoint(Text& out, const std::string& path, const hdf5::FileOrigin& origin,
                         const ResumeInstruction& resume) {
  const Checkpoint checkpoint = read_training_checkpoint(path);
  const TrainingConfiguration& configuration = checkpoint.configuration;
  const SolverState& state = checkpoint.state;
  const std::string& method = configuration.solver.name;
  out.line("file", path);
  out.line("kind", fmt::format("{} of a {} run", kCheckpointFormat, method));
  print_origin(out, origin);
  out.line("dataset", fmt::format("{} ({} rows, fingerprint {})", configuration.dataset_path,
                                  format_count(configuration.rows), configuration.dataset_fingerprint));
  print_kernel(out, configuration.prior.kernel);
  const bool dense = !state.alpha.empty();
  std::string measures;
  if (std::isfinite(checkpoint.measure.value))
    measures +=
        fmt::format(", {} {:.3e} (the stopping rule's measure)", checkpoint.measure.name, checkpoint.measure.value);
  if (dense) measures += fmt::format(", |g|inf {:.4g}", gradient_max_norm(state));
  out.line("reached", fmt::format("iteration {} after {:.1f} s{}", format_count(state.iteration), state.elapsed_seconds,
                                  measures));
  if (dense && has_precision_record(state)) {
    const PrecisionRecord record = precision_record(state);
    out.line("precision", describe_precision(precision_name(record), record.exact_residuals));
  }
  out.line("stops at", describe_stopping_rule(configuration.job.stopping, method));
  out.line("output", configuration.job.output_path.empty() ? std::string("(none)") : configuration.job.output_path);
  if (!configuration.job.log_path.empty()) out.line("log", configuration.job.log_path);
  out.line("resume with", resume(path, nullptr));
}

void describe_search_checkpoint(Text& out, const std::string& path, const hdf5::FileOrigin& origin,
                                const ResumeInstruction& resume) {
  const SearchCheckpoint search = read_search_checkpoint(path);
  out.line("file", path);
  out.line("kind", fmt::format("{} of gpstream {} (a hyperparameter search in progress)", kSearchCheckpointFormat,
                               search.command));
  print_origin(out, origin);
  out.line("dataset", fmt::format("fingerprint {}", search.dataset_fingerprint));
  out.line("reached", fmt::format("{} evaluations of the likelihood", format_count(search.entries.size())));
  out.line("resume with", resume(path, &search));
}

void describe_hyperparameters(Text& out, const std::string& path) {
  const HyperparameterFile file = read_hyperparameter_file(path);
  out.line("file", path);
  out.line("kind", "gpstream hyperparameters (JSON)");
  print_kernel(out, file.prior.kernel);
  out.line("standardised", file.standardisation ? "yes: learned under the file's own statistics (used by train)"
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

std::string describe_file(const std::string& path, const ResumeInstruction& resume) {
  Text out;
  if (looks_like_json(path)) {
    describe_hyperparameters(out, path);
    return out.text;
  }
  hdf5::FileOrigin origin;
  std::string format;
  {
    const hdf5::Handle file = hdf5::open_file(path);
    format = hdf5::read_format(file.get(), path);
    origin = hdf5::read_creation_attributes(file.get(), path);
  }
  if (format == kDatasetFormat) {
    describe_dataset(out, path);
  } else if (format == kModelFormat) {
    describe_model(out, path, origin);
  } else if (format == kCheckpointFormat) {
    describe_checkpoint(out, path, origin, resume);
  } else if (format == kSearchCheckpointFormat) {
    describe_search_checkpoint(out, path, origin, resume);
  } else {
    GPSTREAM_THROW("'{}' is a '{}' file, which this gpstream does not know", path, format);
  }
  return out.text;
}

}  // namespace gpstream

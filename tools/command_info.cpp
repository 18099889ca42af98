// gpstream info FILE: describes any gpstream file — dataset, model (dense or
// sparse), checkpoint, hyperparameter JSON — by what it holds (api/file_description.h).
#include "api/file_description.h"
#include "api/parameter_schema.h"
#include "tools/command_line.h"
#include "tools/commands.h"

#include <fmt/format.h>

namespace gpstream::cli {

int run_info(const std::vector<std::string>& args) {
  CommandSpec spec;
  spec.name = "info";
  spec.usage = "gpstream info FILE";
  spec.description =
      "Describe a gpstream file: a dataset (shape, columns and their statistics, chunks, fingerprint), a model "
      "(dense or sparse: kernel, hyperparameters, training set, solver and its convergence), a checkpoint (the "
      "job, where it stands, its stopping rule) or a hyperparameter file (JSON).";
  std::string path;
  spec.options.add_options()("file", po::value(&path), "a gpstream file (.h5 or hyperparameter .json)")(
      "parameters", "instead: the training parameters of train and of Python's estimator, from their schema, as "
                    "the markdown table of docs/commands.md");
  spec.positional.add("file", 1);
  po::variables_map values;
  if (!parse_command_line(spec, args, values)) return 0;
  if (values.count("parameters") != 0) {
    fmt::print("{}", parameter_table_markdown());
    return 0;
  }
  if (path.empty()) throw UsageError("give the file to describe");

  fmt::print("{}", describe_file(path, resume_command));
  return 0;
}

}  // namespace gpstream::cli

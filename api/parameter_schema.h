// The parameter schema: every parameter of a training job written once —
// its name, the command line's option, its kind, default, range and help —
// from which the front ends derive what they show and check. The command
// line's options take their names, defaults and help from it (tools/
// train_options.cpp binds each to its field) and it spells `name` in
// messages as the option (tools/command_line.h); Python's estimator checks
// its parameters by it (python/src/gpstream_module.cpp); docs/commands.md's
// parameter table is its markdown() (a test keeps them equal). As LightGBM
// generates its parameters and their docs from one config.h.
//
// A parameter's name is the API's: Python's keyword where Python has it
// (`noise_variance`, `basis_size`, `random_state` — scikit-learn's names),
// and what messages from every layer write in backticks.
//
// A parameter that a TrainingConfiguration holds names its field (`field`):
// a checkpoint stores those of its job under the schema's names
// (stored_parameters) and a resumed job gets them back, checked against the
// schema's ranges (restore_parameters).
#pragma once

#include "storage/checkpoint/checkpoint_file.h"
#include "engine/training/training_configuration.h"

#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpstream {

// Which commands take a parameter: the training job's (`gpstream train`,
// Python's estimator), the hyperparameter search's (`gpstream hyper`, `train
// --learn-hyper`), the kernel-column cache's (`train`, `predict`), the
// predictions' (`predict`: the variances, as Python's predict(return_std), and the committee machine).
enum class ParameterGroup { training, learning, cache, prediction };

enum class ParameterKind {
  whole_number,  // a count or a seed
  real,          // a finite number
  reals,         // comma-separated finite numbers (one per input, or one for all)
  text,          // a name from a list the help gives
  named_values,  // name=value pairs, comma-separated (a kernel's own parameters)
  path,          // a file or directory
  flag,          // given or not
  byte_size,     // "512M", "8G", … (api/compute.h)
};

struct Parameter {
  std::string name;    // the API's (Python's keyword, messages' `name`)
  std::string option;  // the command line's, without "--"
  ParameterKind kind = ParameterKind::real;
  std::string default_text;  // "" when there is none or it depends on other parameters (the help says)
  // The range a number must lie in (whole numbers and reals; reals also finite).
  double minimum = -std::numeric_limits<double>::infinity();  // infinite: no bound
  bool minimum_excluded = false;
  double maximum = std::numeric_limits<double>::infinity();
  bool maximum_excluded = false;
  // A name's choices where the schema declares them; empty where any name is taken here and checked where it is
  // parsed (a kernel, a mean, a method: their registries say).
  std::vector<std::string> choices;
  std::string help;     // one paragraph, with parameters in backticks
  bool python = false;  // also a parameter of Python's estimator (under `name`)
  ParameterGroup group = ParameterGroup::training;
  // Where a training configuration holds it; all null for a parameter that
  // is not part of one (the kernel's live in the model's attributes, the
  // memory budget is the run's).
  struct Field {
    bool (*holds)(const TrainingConfiguration&) = nullptr;  // whether this configuration's method has it
    StoredValue (*get)(const TrainingConfiguration&) = nullptr;
    // Sets it from a stored value, checked against the parameter's range.
    void (*set)(const Parameter&, TrainingConfiguration&, const StoredValue&) = nullptr;
  } field;

  // "a whole number of at least 1", "a positive, finite number", "all or subset", …: what check() asks for.
  std::string expected() const;
};

// Every parameter of the schema, group by group, each group in the order
// the command line's help lists it.
std::span<const Parameter> schema_parameters();
// The parameter of this name, or of this command-line option (without "--"); nullptr for none.
const Parameter* find_parameter(std::string_view name);
const Parameter* find_parameter_by_option(std::string_view option);

// Throws InvalidArgument "`name`=value: give …" unless `value` lies in the
// range of parameter `name` (and is whole for a whole number, finite for a real).
void check_parameter(std::string_view name, double value);
void check_parameter(const Parameter& parameter, double value);
// Throws InvalidArgument "`name`=\"value\": choose …" unless `value` is one of the choices the parameter
// declares (none declared: any value passes here).
void check_choice(std::string_view name, std::string_view value);
void check_choice(const Parameter& parameter, std::string_view value);

// The parameters `configuration` holds, by name, in the schema's order: what
// a checkpoint stores of its job.
std::vector<StoredParameter> stored_parameters(const TrainingConfiguration& configuration);
// Sets the fields of `configuration` that `parameters` name, each checked
// against the schema (an error names `source`, the file, and the parameter);
// the method (`solver` or `model`) must come first, as stored_parameters()
// writes it.
void restore_parameters(std::span<const StoredParameter> parameters, TrainingConfiguration& configuration,
                        const std::string& source);

// The schema as markdown, a table per group (parameter, option, default,
// range, help; parameters in the help written as options): docs/commands.md's.
std::string parameter_table_markdown();

}  // namespace gpstream

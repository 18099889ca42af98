#include "tools/command_line.h"

#include "api/datasets.h"
#include "api/compute.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>

namespace gpstream::cli {

std::string option_spelling(std::string_view parameter) {
  if (const Parameter* known = find_parameter(parameter)) return "--" + known->option;
  // The API's names outside the training schema (convert's, save's) that the command line spells otherwise.
  constexpr std::pair<std::string_view, std::string_view> kOtherSpellings[] = {{"overwrite", "--force"},
                                                                              {"compression_level", "--compress"}};
  for (const auto& [name, option] : kOtherSpellings) {
    if (parameter == name) return std::string(option);
  }
  std::string option = "--" + std::string(parameter);
  std::replace(option.begin(), option.end(), '_', '-');
  return option;
}

std::string for_command_line(std::string_view message) { return spell_parameters(message, option_spelling); }

const Parameter& schema_parameter(std::string_view name) {
  const Parameter* parameter = find_parameter(name);
  GPSTREAM_CHECK(parameter != nullptr, "no parameter `{}` in the schema", name);
  return *parameter;
}

void add_parameter_switch(po::options_description& options, std::string_view name) {
  const Parameter& parameter = schema_parameter(name);
  options.add_options()(parameter.option.c_str(), for_command_line(parameter.help).c_str());
}

void check_parameters(const po::variables_map& values, const po::options_description& options) {
  for (const auto& [option, value] : values) {
    const Parameter* parameter = find_parameter_by_option(option);
    if (parameter == nullptr || value.defaulted() || value.empty()) continue;
    // A command's own option of a schema option's name (predict's --model: a file, srm-trans or bcm) is not
    // the schema's parameter: add_parameter() gives the schema's help to the options it binds.
    const po::option_description* bound = options.find_nothrow(option, /*approx=*/false);
    if (bound == nullptr || bound->description() != for_command_line(parameter->help)) continue;
    std::optional<double> number;
    const boost::any& held = value.value();
    if (const auto* text = boost::any_cast<std::string>(&held)) {
      try {
        check_choice(*parameter, *text);
      } catch (const InvalidArgument& error) {
        throw UsageError(for_command_line(error.what()));
      }
    }
    if (const auto* real = boost::any_cast<double>(&held)) number = *real;
    if (const auto* count = boost::any_cast<std::size_t>(&held)) number = static_cast<double>(*count);
    if (const auto* count = boost::any_cast<unsigned>(&held)) number = static_cast<double>(*count);
    if (!number) continue;
    try {
      check_parameter(*parameter, *number);
    } catch (const InvalidArgument& error) {
      throw UsageError(for_command_line(error.what()));
    }
  }
}

std::string resume_command(const std::string& path, const SearchCheckpoint* search) {
  if (search == nullptr || search->command == "train") return "gpstream train --resume " + shell_quoted(path);
  std::string command = "gpstream " + search->command;
  for (const std::string& argument : search->arguments) command += " " + shell_quoted(argument);
  return command;
}

bool parse_command_line(CommandSpec& spec, const std::vector<std::string>& args, po::variables_map& values) {
  spec.options.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(args).options(spec.options).positional(spec.positional).run(), values);
    if (values.count("help") != 0) {
      std::cout << "Usage: " << spec.usage << "\n\n" << spec.description << "\n\n" << spec.options << "\n";
      return false;
    }
    po::notify(values);
  } catch (const po::unknown_option& error) {
    for (const auto& [old_name, new_name] : spec.renamed) {
      if (error.get_option_name() == old_name) {
        throw UsageError(fmt::format("{}: {} takes it as {} ({} is another command's parameter)", old_name, spec.name,
                                     new_name, old_name));
      }
    }
    throw UsageError(error.what());
  } catch (const po::error& error) {
    throw UsageError(error.what());
  }
  check_numeric_options(values);
  check_parameters(values, spec.options);
  return true;
}

void check_numeric_options(const po::variables_map& values) {
  for (const auto& [name, value] : values) {
    if (value.defaulted()) continue;
    if (const double* number = boost::any_cast<double>(&value.value())) {
      // NaN would pass every `x <= 0` check and never meet a tolerance.
      if (!std::isfinite(*number)) throw UsageError(fmt::format("--{}: {} is not a finite number", name, *number));
      if (std::fpclassify(*number) == FP_SUBNORMAL) {
        throw UsageError(fmt::format("--{}: {:g} is below the smallest normal double (2.2e-308)", name, *number));
      }
    }
    // Boost converts "-1" to an unsigned option by wrapping it around (as strtoul does).
    const boost::any& held = value.value();
    bool negative = false;
    if (const auto* u = boost::any_cast<unsigned>(&held)) {
      negative = *u > static_cast<unsigned>(std::numeric_limits<int>::max());
    } else if (const auto* ul = boost::any_cast<unsigned long>(&held)) {
      negative = *ul > static_cast<unsigned long>(std::numeric_limits<long>::max());
    } else if (const auto* ull = boost::any_cast<unsigned long long>(&held)) {
      negative = *ull > static_cast<unsigned long long>(std::numeric_limits<long long>::max());
    } else if (const auto* i = boost::any_cast<int>(&held)) {
      negative = *i < 0;
    }
    if (negative) throw UsageError(fmt::format("--{} must be a whole number of at least 0", name));
  }
}

void DatasetOutputOptions::add(po::options_description& options) {
  // clang-format off
  options.add_options()
      ("chunk-rows", po::value(&chunk_rows), "rows per HDF5 chunk (default: about 1 MiB of /X per chunk)")
      ("compress", po::value(&compression_level)->default_value(0), "deflate level 0 (off) to 9")
      ("force", po::bool_switch(&overwrite), "overwrite the output if it exists");
  // clang-format on
}

DatasetWriterOptions DatasetOutputOptions::writer_options(const po::variables_map& values) const {
  if (values.count("chunk-rows") != 0 && chunk_rows == 0) throw UsageError("--chunk-rows must be at least 1");
  if (compression_level < 0 || compression_level > 9) {
    throw UsageError(fmt::format("--compress: the deflate level must be 0 to 9, not {}", compression_level));
  }
  DatasetWriterOptions options;
  options.chunk_rows = chunk_rows;
  options.compression_level = compression_level;
  options.overwrite = overwrite;
  return options;
}

void ComputeOptions::add(po::options_description& options) {
  // clang-format off
  options.add_options()
      ("memory", po::value<std::string>()->notifier([this](const std::string& text) { memory = text; }), for_command_line(schema_parameter("memory").help).c_str())
      ("threads", po::value(&threads)->default_value(threads), "threads (0: all cores)");
  // clang-format on
}

void ColumnCacheOptions::add(po::options_description& options) {
  add_parameter(options, "cache", cache);
  add_parameter(options, "cache_dir", directory);
  add_parameter(options, "cache_disk", disk);
}

void ColumnCacheOptions::validate(const po::variables_map& values) {
  try {
    mode = parse_column_cache_mode(cache);
  } catch (const Error& error) {
    throw UsageError(fmt::format("--cache: {}", error.what()));
  }
  if (!disk.empty()) disk_bytes = parse_byte_size(disk, "--cache-disk");
  if ((given(values, "cache-dir") || given(values, "cache-disk")) && mode != ColumnCacheMode::disk &&
      mode != ColumnCacheMode::automatic) {
    throw UsageError(fmt::format(
        "--cache-dir and --cache-disk are for the disk tier (--cache disk or auto), not --cache {}", cache));
  }
}

ColumnCacheSettings ColumnCacheOptions::settings(const std::string& output, const std::string& output_name,
                                                 Context& context) const {
  ColumnCacheSettings result;
  result.mode = mode;
  const std::string place = disk_directory(output);
  const std::string option = directory.empty() ? fmt::format("the {}'s directory", output_name) : "--cache-dir";
  result.open_disk_tier = disk_tier_opener(place, disk_bytes, context, option);
  return result;
}

std::string ColumnCacheOptions::disk_directory(const std::string& output) const {
  if (!directory.empty()) return directory;
  if (is_standard_stream(output)) return std::filesystem::temp_directory_path().string();
  const std::string parent = std::filesystem::path(output).parent_path().string();
  return parent.empty() ? "." : parent;
}

std::size_t ComputeOptions::memory_budget_bytes() const { return context_settings().memory_budget_bytes; }

Context::Settings ComputeOptions::context_settings(std::uint64_t seed) const {
  ComputeSettings settings{.memory_bytes = std::nullopt, .threads = threads, .seed = seed};
  if (memory) settings.memory_bytes = parse_byte_size(*memory, "--memory");
  return gpstream::context_settings(settings);
}

std::uint64_t parse_byte_size(const std::string& text, const std::string& option) {
  try {
    return gpstream::parse_byte_size(text, option);
  } catch (const InvalidArgument& error) {
    throw UsageError(error.what());
  }
}

bool given(const po::variables_map& values, const char* option) {
  return values.count(option) != 0 && !values[option].defaulted();
}

std::vector<std::string> given_parameters(const po::variables_map& values) {
  std::vector<std::string> names;
  for (const Parameter& parameter : schema_parameters()) {
    if (given(values, parameter.option.c_str())) names.push_back(parameter.name);
  }
  return names;
}

JobSpecification job_specification(const po::variables_map& values) {
  JobSpecification job;
  for (const Parameter& parameter : schema_parameters()) {
    if (!given(values, parameter.option.c_str())) continue;
    const boost::any& held = values[parameter.option].value();
    std::string text;
    if (parameter.kind == ParameterKind::flag) {
      text = parameter.name == "standardise" ? "false" : "true";  // a switch: --no-standardise turns it off
    } else if (const auto* word = boost::any_cast<std::string>(&held)) {
      text = *word;
    } else if (const auto* real = boost::any_cast<double>(&held)) {
      text = fmt::format("{}", *real);  // the shortest text that reads back as the same double
    } else if (const auto* count = boost::any_cast<std::size_t>(&held)) {
      text = std::to_string(*count);
    } else if (const auto* small = boost::any_cast<unsigned>(&held)) {
      text = std::to_string(*small);
    }
    try {
      job.set(parameter.name, text);
    } catch (const InvalidArgument& error) {
      throw UsageError(error.what());
    }
  }
  return job;
}

void check_job_rules_of(const JobRequest& request) {
  try {
    check_job_rules(request);
  } catch (const InvalidArgument& error) {
    throw UsageError(error.what());
  }
}

void reject_options(const po::variables_map& values, std::initializer_list<const char*> options,
                    const std::string& purpose) {
  for (const char* option : options) {
    if (given(values, option)) throw UsageError(fmt::format("--{} is for {}", option, purpose));
  }
}

}  // namespace gpstream::cli

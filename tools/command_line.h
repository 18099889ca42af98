// Shared plumbing for gpstream's subcommands: option parsing with
// Boost.Program_options, usage errors, human-readable sizes.
#pragma once

#include "api/job_rules.h"
#include "api/job_specification.h"
#include "api/parameter_schema.h"
#include "api/file_description.h"
#include "api/search_checkpoints.h"

#include <boost/lexical_cast.hpp>
#include <boost/program_options.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <initializer_list>
#include <string>
#include <vector>

namespace gpstream {
struct DatasetWriterOptions;  // storage/dataset/dataset_writer.h
}  // namespace gpstream

namespace gpstream::cli {

namespace po = boost::program_options;

// A parameter as the command line spells it: its option ("--force" for the
// API's `overwrite`, "--compress" for `compression_level`, else "--" and the
// name with dashes).
std::string option_spelling(std::string_view parameter);
// A message from the libraries (which name parameters in backticks:
// engine/core/error.h) with each parameter spelt as an option.
std::string for_command_line(std::string_view message);

// The command that continues the job saved at `path` (api/file_description.h's
// ResumeInstruction): a training job's checkpoint, or a search's — a
// training job resumes from it (gpstream train --resume), hyper's search is
// the same command run again.
std::string resume_command(const std::string& path, const SearchCheckpoint* search);

// Adds the schema's parameter `name` (api/parameter_schema.h) to `options`,
// bound to `field`: its option, default and help come from the schema.
template <class T>
void add_parameter(po::options_description& options, std::string_view name, T& field);
// The same, its value of type T kept in the variables_map alone: for a parameter the command reads only
// as the job's pairs (job_specification()).
template <class T>
void add_parameter(po::options_description& options, std::string_view name);
// The same for a switch (given or not).
void add_parameter_switch(po::options_description& options, std::string_view name);
// Checks every option the user gave that `options` binds to the schema (add_parameter) against its range
// or choices; UsageError "--basis=0: give a whole number, at least 1" otherwise. parse_command_line() does.
void check_parameters(const po::variables_map& values, const po::options_description& options);

// A mistake on the command line: reported with a pointer to --help, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One subcommand's options. `usage` is the synopsis line shown by --help.
struct CommandSpec {
  std::string name;
  std::string usage;
  std::string description;
  po::options_description options{"Options"};
  po::positional_options_description positional;
  // Options this command took under another name (old → new): the error for the old one names the new.
  std::vector<std::pair<std::string, std::string>> renamed;
};

// Parses `args` (the words after the subcommand). Returns false when --help
// was asked for and printed. Throws UsageError for unknown or malformed options.
bool parse_command_line(CommandSpec& spec, const std::vector<std::string>& args, po::variables_map& values);

// The one check of every numeric option, run by parse_command_line: a
// number must be finite and not subnormal, a count must not be negative.
// Each command then checks its own ranges (a tolerance above 0, ...).
void check_numeric_options(const po::variables_map& values);

// The options of every command that writes a dataset: --chunk-rows,
// --compress, --force. Call add() before parsing and writer_options() after.
struct DatasetOutputOptions {
  std::size_t chunk_rows = 0;
  int compression_level = 0;
  bool overwrite = false;

  void add(po::options_description& options);
  DatasetWriterOptions writer_options(const po::variables_map& values) const;
};

// --memory and --threads, shared by the commands that compute: the
// settings of the command's Context (engine/core/context.h).
struct ComputeOptions {
  std::optional<std::string> memory;  // none: 3/4 of the RAM or of the container's limit (api/memory_limit.h)
  unsigned threads = 0;

  void add(po::options_description& options);
  std::size_t memory_budget_bytes() const;
  // Also makes BLAS single-threaded, as it must be inside oneTBB tasks.
  Context::Settings context_settings(std::uint64_t seed = 1) const;
};

// --cache, --cache-dir, --cache-disk, shared by train (the BCD family) and
// predict (the gbcd variance route): the settings of the kernel-column cache
// (engine/kernels/kernel_column_cache.h), its disk tier a file in a directory
// (storage/column_cache/disk_column_tier.h).
struct ColumnCacheOptions {
  std::string cache, directory, disk;  // the schema's defaults, as the options are read
  ColumnCacheMode mode = ColumnCacheMode::automatic;
  std::uint64_t disk_bytes = 0;  // 0: half the directory's free space

  // --cache, --cache-dir, --cache-disk: the schema's cache group.
  void add(po::options_description& options);
  // Parses --cache and --cache-disk; refuses --cache-dir/--cache-disk without a disk tier.
  void validate(const po::variables_map& values);
  // --cache-dir, else the directory of `output` (the temporary directory for standard output): where the
  // disk tier and the variances' factor on disk go.
  std::string disk_directory(const std::string& output) const;
  // The disk tier goes into --cache-dir, else into the directory of `output` (named by `output_name`).
  ColumnCacheSettings settings(const std::string& output, const std::string& output_name, Context& context) const;
};

// True when the user gave `option` on the command line (not just its default).
bool given(const po::variables_map& values, const char* option);
// The schema's names (api/parameter_schema.h) of the parameters given on the command line.
std::vector<std::string> given_parameters(const po::variables_map& values);
// The job as the schema's name → value pairs (api/job_specification.h): every schema option the user gave,
// as typed (a switch: true, or false for --no-standardise); a value the schema refuses is a usage error.
JobSpecification job_specification(const po::variables_map& values);
// check_job_rules (api/job_rules.h) on the command line: a broken rule is a usage error, its parameters spelt
// as options.
void check_job_rules_of(const JobRequest& request);
// Throws a UsageError "--OPTION is for PURPOSE" for the first of `options` the user gave.
void reject_options(const po::variables_map& values, std::initializer_list<const char*> options,
                    const std::string& purpose);

// Parses "512M", "2G", "1.5GiB", "1000000" (bytes) for an option such as --memory.
std::uint64_t parse_byte_size(const std::string& text, const std::string& option);

const Parameter& schema_parameter(std::string_view name);

// The schema's default and help on `value`, added under the schema's option.
template <class T>
void bind_parameter(po::options_description& options, const Parameter& parameter, po::typed_value<T>* value) {
  if (!parameter.default_text.empty()) {
    if constexpr (std::is_same_v<T, std::string>) {
      value->default_value(parameter.default_text);
    } else {
      value->default_value(boost::lexical_cast<T>(parameter.default_text), parameter.default_text);
    }
  }
  options.add_options()(parameter.option.c_str(), value, for_command_line(parameter.help).c_str());
}

template <class T>
void add_parameter(po::options_description& options, std::string_view name, T& field) {
  bind_parameter(options, schema_parameter(name), po::value(&field));
}

template <class T>
void add_parameter(po::options_description& options, std::string_view name) {
  bind_parameter(options, schema_parameter(name), po::value<T>());
}

}  // namespace gpstream::cli

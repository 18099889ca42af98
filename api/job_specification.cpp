#include "api/job_specification.h"

#include "api/compute.h"
#include "api/parameter_schema.h"
#include "engine/core/error.h"
#include "engine/kernels/kernel.h"
#include "engine/sparse/inducing_objective.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <cctype>

namespace gpstream {

std::vector<double> parse_number_list(const std::string& text, std::string_view name) {
  std::vector<std::string> words;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    words.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<double> values;
  for (const std::string& word : words) {
    char* end = nullptr;
    errno = 0;
    const double value =
        word.empty() || std::isspace(static_cast<unsigned char>(word.front())) ? 0.0 : std::strtod(word.c_str(), &end);
    if (end == nullptr || end != word.c_str() + word.size() || word.empty()) {
      GPSTREAM_THROW_ARGUMENT("`{}`: \"{}\" is not a number", name, word);
    }
    GPSTREAM_CHECK_ARGUMENT(std::isfinite(value), "`{}`: {} is not a finite number", name, word);
    if (errno == ERANGE && value == 0.0) {
      GPSTREAM_THROW_ARGUMENT("`{}`: {} underflows to 0 (below 4.9e-324, the smallest double)", name, word);
    }
    if (value != 0.0 && std::abs(value) < std::numeric_limits<double>::min()) {
      GPSTREAM_THROW_ARGUMENT(
          "`{}`: {} is subnormal (below 2.2e-308, the smallest normal double): too small to "
          "compute with",
          name, word);
    }
    values.push_back(value);
  }
  return values;
}

std::string default_kernel(bool learning) {
  return learning ? LearningRequest{}.kernel : kernel_type_name(KernelHyperparameters{}.type);
}

namespace {

const Parameter& parameter_named(std::string_view name) {
  const Parameter* parameter = find_parameter(name);
  GPSTREAM_CHECK_ARGUMENT(parameter != nullptr, "`{}` is not a parameter of a gpstream job", name);
  return *parameter;
}

// A finite number, in the parameter's range (one of a list's numbers for `reals`).
double number_of(const Parameter& parameter, std::string_view text) {
  const std::string word(text);
  char* end = nullptr;
  errno = 0;
  const double value = word.empty() ? 0.0 : std::strtod(word.c_str(), &end);
  GPSTREAM_CHECK_ARGUMENT(!word.empty() && end == word.c_str() + word.size() && errno != ERANGE, "`{}`=\"{}\": give {}",
                          parameter.name, word, parameter.expected());
  check_parameter(parameter, value);
  return value;
}

// A list's numbers, each in the parameter's range.
std::vector<double> numbers_of(const Parameter& parameter, const std::string& text) {
  std::vector<double> values = parse_number_list(text, parameter.name);
  for (const double value : values) {
    GPSTREAM_CHECK_ARGUMENT(!(parameter.minimum == 0 && parameter.minimum_excluded) || value > 0,
                            "`{}`: values must be positive, not {}", parameter.name, value);
    check_parameter(parameter, value);
  }
  return values;
}

// Checks `value` as the parameter's kind takes it.
void check_value(const Parameter& parameter, const std::string& value) {
  switch (parameter.kind) {
    case ParameterKind::whole_number:
    case ParameterKind::real:
      (void)number_of(parameter, value);
      break;
    case ParameterKind::reals:
      (void)numbers_of(parameter, value);
      break;
    case ParameterKind::text:
      check_choice(parameter, value);
      break;
    case ParameterKind::named_values:
      try {
        (void)parse_named_values(value);
      } catch (const Error& error) {
        GPSTREAM_THROW_ARGUMENT("`{}`: {}", parameter.name, error.what());
      }
      break;
    case ParameterKind::flag:
      GPSTREAM_CHECK_ARGUMENT(value == "true" || value == "false", "`{}`=\"{}\": give true or false", parameter.name,
                              value);
      break;
    case ParameterKind::byte_size:
      (void)parse_byte_size(value, "`" + parameter.name + "`");
      break;
    case ParameterKind::path:
      break;
  }
}

}  // namespace

void JobSpecification::set(std::string_view name, std::string value) {
  check_value(parameter_named(name), value);
  const auto same = [&](const auto& entry) { return entry.first == name; };
  const auto found = std::find_if(values_.begin(), values_.end(), same);
  if (found != values_.end()) {
    found->second = std::move(value);
  } else {
    values_.emplace_back(std::string(name), std::move(value));
  }
}

const std::string* JobSpecification::find(std::string_view name) const {
  for (const auto& [key, value] : values_) {
    if (key == name) return &value;
  }
  return nullptr;
}

bool JobSpecification::given(std::string_view name) const { return find(name) != nullptr; }

std::vector<std::string> JobSpecification::given_names() const {
  std::vector<std::string> names;
  for (const auto& entry : values_) names.push_back(entry.first);
  return names;
}

std::vector<std::string> JobSpecification::arguments() const {
  std::vector<std::string> words;
  for (const auto& [name, value] : values_) words.push_back(name + "=" + value);
  return words;
}

std::string JobSpecification::text(std::string_view name) const {
  const std::string* value = find(name);
  return value != nullptr ? *value : parameter_named(name).default_text;
}

double JobSpecification::real(std::string_view name) const { return number_of(parameter_named(name), text(name)); }

std::size_t JobSpecification::whole(std::string_view name) const {
  const double value = real(name);  // checked: whole and in range
  const std::string digits = text(name);
  // A seed may have more digits than a double holds.
  if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return static_cast<std::size_t>(std::strtoull(digits.c_str(), nullptr, 10));
  return static_cast<std::size_t>(value);
}

bool JobSpecification::flag(std::string_view name) const {
  // A flag given is on: `standardise` is the one on by default, and the command line's --no-standardise
  // gives it as false.
  const std::string* value = find(name);
  return value != nullptr ? *value == "true" : name == "standardise";
}

std::string JobSpecification::kernel_or_default() const {
  return given("kernel") ? text("kernel") : default_kernel(flag("learn_hyper"));
}

StartingPoint JobSpecification::kernel_values() const {
  StartingPoint values;
  if (given("length_scale")) values.lengthscales = numbers_of(parameter_named("length_scale"), text("length_scale"));
  if (given("signal_variance")) values.signal_variance = real("signal_variance");
  if (given("noise_variance")) values.noise_variance = real("noise_variance");
  if (given("kernel_parameters")) values.family_parameters = parse_named_values(text("kernel_parameters"));
  return values;
}

void JobSpecification::check_rules() const {
  const std::string model = text("model");
  check_job_rules({.method = model == kDenseModel ? text("solver") : model,
                   .learn = flag("learn_hyper"),
                   .standardise = flag("standardise"),
                   .kernel = text("kernel"),
                   .given = given_names()});
}

FreshJobParameters JobSpecification::fresh_job() const {
  FreshJobParameters job;
  const std::string model = text("model");
  job.method = model == kDenseModel ? text("solver") : model;
  job.solver = {job.method, whole("active_set_size"), whole("candidates"), whole("subspace_steps"), text("precision")};
  job.subspace_steps_given = given("subspace_steps");
  job.basis_size = whole("basis_size");
  if (given("candidates")) job.basis_candidates = whole("candidates");
  job.cholqr.information_pivots = whole("info_pivots");
  job.cholqr.objective = parse_inducing_objective(text("objective"));
  job.cholqr.learn_hyperparameters = !flag("fixed_hyper");
  job.online.novelty = real("novelty");
  job.online.passes = whole("passes");
  KernelHyperparameters& kernel = job.prior.kernel;
  const std::string shape = kernel_or_default();
  if (shape.find('+') != std::string::npos) {
    kernel = parse_kernel_shape(shape);  // a sum: its terms' types (learned, or given by a `hyper` file)
  } else if (shape != kAutomaticKernel) {
    kernel.set_type(parse_kernel_type(shape));
  }
  const StartingPoint values = kernel_values();
  kernel.lengthscales = values.lengthscales;
  if (values.signal_variance) kernel.signal_variance = *values.signal_variance;
  if (values.noise_variance) kernel.noise_variance = *values.noise_variance;
  set_family_parameters(kernel, values.family_parameters);
  job.standardise = flag("standardise");
  job.seed = whole("random_state");
  if (given("tol")) job.tol = real("tol");
  if (given("gap")) job.gap = real("gap");
  if (given("max_iter")) job.max_iterations = whole("max_iter");
  if (given("time_limit")) job.time_limit_seconds = real("time_limit");
  job.refresh_every = whole("refresh_every");
  job.checkpoint_every_seconds = real("checkpoint_every");
  return job;
}

LearningRequest JobSpecification::learning() const {
  LearningRequest request;
  if (given("kernel")) request.kernel = text("kernel");  // else auto, or an `init` file's kernel
  request.start = kernel_values();
  if (given("init")) request.init_file = text("init");
  request.subset.subset = whole("subset");
  request.subset.restarts = whole("restarts");
  request.subset.tolerance = real("hyper_tol");
  request.subset.min_noise_variance = real("min_noise");
  request.subset.max_evaluations = whole("max_evaluations");
  request.mean = text("mean");
  request.mean_fit = text("mean_fit");
  request.learn_on = text("learn_on");
  request.vecchia_neighbours = whole("vecchia_neighbours");
  request.exact_rows = whole("exact_rows");
  request.max_terms = whole("max_terms");
  request.stochastic.max_steps = whole("all_rows_steps");
  request.stochastic.gradient.probes = whole("probes");
  request.stochastic.gradient.tolerance = real("all_rows_tol");
  request.given = given_names();
  return request;
}

}  // namespace gpstream

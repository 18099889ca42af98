// A training job as name → value pairs, by the parameter schema's names
// (parameter_schema.h): the one form in which a front end hands its user's
// job to the API, as LightGBM's Config reads key=value pairs. The command
// line gives the options its user typed, Python its estimator's parameters;
// the schema checks each value as it is set (kind, range, choices), and the
// job's configuration (job_configuration.h), its learning (learning_plan.h)
// and the rules between its parameters (job_rules.h) are built from the
// pairs here, once, every default the schema's (itself the engine's
// structs'). The pairs also name a search in its checkpoint (arguments()).
#pragma once

#include "api/job_configuration.h"
#include "api/job_rules.h"
#include "api/learning_plan.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpstream {

// Comma-separated numbers ("0.5,2"), each finite and not too small for a double; InvalidArgument naming the
// parameter `name` and the word at fault.
std::vector<double> parse_number_list(const std::string& text, std::string_view name);

// The kernel of a job that names none: auto where the model is learned (`learn_hyper`, gpstream hyper;
// LearningRequest's), else the engine's default kernel, rbf, with the values given.
std::string default_kernel(bool learning);

class JobSpecification {
 public:
  // `value` as its user wrote it ("1e-4", "0.5,2", "alpha=2", "true", "false" for a flag turned off);
  // InvalidArgument naming the parameter for a name the schema does not have or a value it refuses. A name
  // set again takes the new value.
  void set(std::string_view name, std::string value);
  bool given(std::string_view name) const;
  // The schema names of the parameters set, in the order set.
  std::vector<std::string> given_names() const;
  // "name=value" for each parameter set, in the order set: what a search's checkpoint records of the job.
  std::vector<std::string> arguments() const;

  // The rules between the parameters (job_rules.h) for a fresh job; InvalidArgument for the first broken.
  void check_rules() const;
  // A fresh job's parameters: each given, else the schema's default; the prior is the kernel's values given
  // (`kernel`, `length_scale`, `signal_variance`, `noise_variance`, `kernel_parameters`).
  FreshJobParameters fresh_job() const;
  // What to learn: the learning group's parameters, `kernel` (auto unless given), the kernel's values given
  // as the search's first start.
  LearningRequest learning() const;

 private:
  const std::string* find(std::string_view name) const;
  std::string text(std::string_view name) const;  // given, else the schema's default
  double real(std::string_view name) const;
  std::size_t whole(std::string_view name) const;
  bool flag(std::string_view name) const;
  std::string kernel_or_default() const;  // `kernel` given, else default_kernel()
  StartingPoint kernel_values() const;

  std::vector<std::pair<std::string, std::string>> values_;
};

}  // namespace gpstream

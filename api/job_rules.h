// The rules between the parameters of one training job, written once for
// every front end (as LightGBM's Config::CheckParamConflict): the command
// line and Python say what their user asked for, by the parameter schema's
// names, and get the first rule it breaks as an InvalidArgument that names
// the parameters in backticks — which each front end spells its own way
// (`learn_hyper` is `--learn-hyper` on the command line, optimizer='lbfgs'
// in Python). A rule that changes a value instead of refusing it (a basis
// larger than the rows) lives where the rows are known: Training's notes.
#pragma once

#include <string>
#include <vector>

namespace gpstream {

struct JobRequest {
  std::string method;              // the dense solver or sparse model (the registry's name; "auto" too)
  bool resumed = false;            // a resumed job keeps its model: the learning rules are the checkpoint's
  bool learn = false;              // `learn_hyper`: the model learned first
  bool standardise = true;         // false: `standardise` turned off
  std::string kernel;              // as given: a kernel, a sum, or "auto"
  std::vector<std::string> given;  // the schema names of the parameters the user set
};

// Throws InvalidArgument for the first rule `request` breaks:
// - learning works on standardised data (fresh jobs);
// - `kernel` auto, and every parameter of the learning group, need `learn_hyper` (fresh jobs);
// - `tol` is for the methods that stop at a tolerance, `gap` for the one that stops at its bounds' gap.
// - `solver` and `precision` are the exact GP's; a method's own parameters (cholqr's `objective`, ...) its own.
void check_job_rules(const JobRequest& request);

}  // namespace gpstream

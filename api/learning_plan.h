// What a hyperparameter search learns, planned once for every front end
// (`gpstream hyper`, `gpstream train --learn-hyper`, Python's
// optimizer='lbfgs'): the kernels compared, the search's first start, the
// prior mean's basis and the learning's options, checked against the data;
// and the hyperparameter file its result is written to.
// The front ends say what their user asked for by the parameter schema's
// names (parameter_schema.h); a broken rule is an InvalidArgument naming the
// parameter in backticks, which each front end spells its own way.
#pragma once

#include "engine/hyper/model_learning.h"
#include "storage/dataset/dataset_format.h"
#include "storage/hyper/hyperparameter_file.h"  // where learning starts (`init`) and what it writes

#include <cstddef>
#include <string>
#include <vector>

namespace gpstream {

struct LearningRequest {
  std::string kernel{kAutomaticKernel};  // a kernel, a sum, or auto (the registry's stationary families compared)
  StartingPoint start;                   // the kernel's values the user gave: the search's first start
  std::string init_file;                 // `init`: a hyperparameter file whose values start the search
  SubsetLearningOptions subset;          // its start is the plan's
  std::string mean = "linear";
  std::string mean_fit = "ols";
  std::string learn_on = "all";
  std::size_t vecchia_neighbours = VecchiaOptions{}.neighbours;
  std::size_t exact_rows = ModelLearningOptions{}.exact_rows;
  std::size_t max_terms = kAutomaticMaxTerms;
  StochasticRefinementOptions stochastic;
  std::vector<std::string> given;  // the schema names of the parameters the user set
};

struct LearningPlan {
  ModelLearningOptions options;
  std::string start_origin;        // "informed by the data", "`init` FILE", ... for reports
  std::vector<std::string> notes;  // for the user, once (an `init` file applied by position)
};

// The plan for learning on `dataset` (`name` in messages; its inputs and
// targets standardised by its own statistics). The first start is the
// `init` file's values, converted to the dataset's standardisation, then
// the values the user gave. The kernel is `kernel` when given, else the
// `init` file's, else `kernel` (its default); auto compares the stationary
// ARD families, summed across scales up to `max_terms`. A subset larger than
// the rows is all of them unless given.
LearningPlan plan_learning(const LearningRequest& request, const DatasetDescription& dataset, const std::string& name);

// Writes the learned values with how they were learned (storage/hyper/hyperparameter_file.h): `seed`,
// the dataset's path, fingerprint and input names, and `standardisation`, the dataset's, to which the
// learned mean's coefficients are added.
void save_learned_hyperparameters(const std::string& path, const LearnedModel& learned,
                                  const ModelLearningOptions& options, std::uint64_t seed, const std::string& dataset,
                                  const std::string& fingerprint, const Standardisation& standardisation,
                                  const std::vector<std::string>& input_names, bool overwrite);

}  // namespace gpstream

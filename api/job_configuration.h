// A fresh training job's configuration from its parameters, built once for
// every front end (`gpstream train`, Python's fit): the method's options,
// the stopping rule with the method's own default tolerance, the
// standardisation, the seed and the job's files. Each front end reads its
// user's spelling into FreshJobParameters, by the schema's meanings
// (parameter_schema.h); the rules between parameters are check_job_rules'
// (job_rules.h), checked before. A resumed job is its checkpoint's
// configuration instead (training.h: read_training_checkpoint).
#pragma once

#include "engine/training/training_configuration.h"
#include "engine/training/training_method.h"
#include "storage/dataset/dataset_format.h"
#include "storage/hyper/hyperparameter_file.h"  // a prior given as a file of values (`hyper`)

#include <cstdint>
#include <optional>
#include <string>

namespace gpstream {

struct FreshJobParameters {
  std::string method = "auto";  // `solver` (a dense solver, or auto) or `model` (a sparse model): the registry's
  // The dense solvers': `active_set_size`, `candidates`, `subspace_steps`, `precision` (its name is `method`).
  SolverOptions solver;
  bool subspace_steps_given = false;  // else fewer are taken where the default does not fit the memory budget
  // The sparse models': `basis_size`, their `candidates` (none: kBasisCandidates), cholqr's and online's own.
  std::size_t basis_size = SparseMethodOptions{}.basis_size;
  std::optional<std::size_t> basis_candidates;
  CholQrOptions cholqr;
  OnlineGpOptions online;
  GaussianProcessPrior prior;                  // the kernel and prior mean (where learned: the search's start)
  std::optional<Standardisation> prior_units;  // the standardisation a hyperparameter file's values are in
  bool standardise = true;
  std::uint64_t seed = TrainingConfiguration{}.seed;  // `random_state`
  // `tol` for the methods that stop at a tolerance, `gap` for the one that stops at its bounds' gap; none:
  // the method's default (default_tolerance).
  std::optional<double> tol, gap;
  std::uint64_t max_iterations = 0;  // `max_iter`; 0: no limit
  double time_limit_seconds = 0;     // `time_limit`; 0: none
  std::uint64_t refresh_every = 0;
  double checkpoint_every_seconds = TrainingJob{}.checkpoint_every_seconds;
  std::string output_path, log_path;  // "" for none; made absolute
  bool overwrite_output = false;
};

// The configuration of a fresh job on `dataset`; InvalidArgument naming the parameter at fault (an unknown
// method, a precision that is not a choice, a hyperparameter file learned on other inputs).
TrainingConfiguration configure_fresh_job(const FreshJobParameters& parameters, const DatasetDescription& dataset);

}  // namespace gpstream

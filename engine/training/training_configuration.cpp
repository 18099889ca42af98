#include "engine/training/training_configuration.h"

namespace gpstream {

SparseMethodOptions sparse_method_options(const TrainingConfiguration& configuration) {
  SparseMethodOptions options;
  options.name = configuration.solver.name;
  options.basis_size = configuration.solver.active_set_size;
  options.candidates = configuration.solver.candidates;
  options.seed = configuration.seed;
  options.cholqr = configuration.cholqr;
  options.online = configuration.online;
  return options;
}

}  // namespace gpstream

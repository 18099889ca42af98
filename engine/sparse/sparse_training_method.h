// A sparse model trained iteration by iteration under the solver driver —
// the greedy basis selections, CholQR, the online GP: the driver stops it
// and its observers checkpoint it, through this one interface.
#pragma once

#include "engine/solvers/solver_driver.h"
#include "engine/sparse/sparse_model.h"

#include <string>

namespace gpstream {

class SparseTrainingMethod : public IterativeMethod {
 public:
  // Writes the run into its SolverState's `auxiliary` map (for a checkpoint),
  // from which the method's constructor resumes.
  virtual void store_state() = 0;
  // The fitted model (basis, weights, variance form) and the kernel it was
  // fitted with, without the rest of the metadata.
  virtual SparseModel model() = 0;
  // Every sparse method names its own measure (IterativeMethod's default is the dense solvers' ‖g‖₂/‖y‖₂).
  std::string measure_name() const override = 0;
};

}  // namespace gpstream

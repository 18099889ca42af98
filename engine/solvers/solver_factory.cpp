#include "engine/solvers/solver_factory.h"

#include "engine/core/error.h"
#include "engine/solvers/block_coordinate_descent.h"
#include "engine/solvers/cholesky_solver.h"
#include "engine/solvers/conjugate_gradient.h"
#include "engine/solvers/sequential_minimal_optimization.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace gpstream {

const std::vector<std::string>& solver_names() {
  static const std::vector<std::string> names = {"gbcd", "bcd-cyclic", "bcd-gradient", "cg", "smo", "cholesky"};
  return names;
}

namespace {

// The block coordinate descent family: one BlockCoordinateDescent with a selection policy each.
bool is_block_coordinate_descent(const std::string& name) {
  return name == "gbcd" || name == "bcd-cyclic" || name == "bcd-gradient";
}

}  // namespace

std::unique_ptr<DenseSolver> make_solver(const SolverOptions& options, KernelMatrix& kernel) {
  const std::string& name = options.name;
  if (is_block_coordinate_descent(name)) {
    GPSTREAM_CHECK(options.active_set_size > 0, "the active set size m of {} must be at least 1", name);
    return std::make_unique<BlockCoordinateDescent>(kernel, make_active_set_policy(name, options.candidates),
                                                    options.active_set_size);
  }
  if (name == "cg") return std::make_unique<ConjugateGradient>(kernel);
  // SMO and Cholesky index α and g over all n: one process's rows only.
  const bool known = std::find(solver_names().begin(), solver_names().end(), name) != solver_names().end();
  GPSTREAM_CHECK(!known || !kernel.distributed(), "{} does not run on rows partitioned among ranks yet", name);
  if (name == "smo") return std::make_unique<SequentialMinimalOptimization>(kernel);
  if (name == "cholesky") return std::make_unique<CholeskySolver>(kernel);
  GPSTREAM_THROW("unknown solver \"{}\" (choose {})", name, fmt::join(solver_names(), ", "));
}

}  // namespace gpstream

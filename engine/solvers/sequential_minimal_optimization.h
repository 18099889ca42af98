// SMO for K̄α = y: working sets of two variables, chosen as the maximal
// violating pair — the largest and the smallest gradient components (Keerthi
// et al. 2001; Keerthi & Shevade 2003 for least-squares problems; GBCD paper
// §1.1) — and solved analytically as a 2×2 system. The gradient update needs
// only the two kernel columns: one streamed pass with m = 2.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/solvers/dense_solver.h"

namespace gpstream {

class SequentialMinimalOptimization final : public DenseSolver {
 public:
  explicit SequentialMinimalOptimization(KernelMatrix& kernel);
  std::string name() const override { return "smo"; }
  void iterate(SolverState& state, std::span<const double> y) override;

 private:
  KernelMatrix& kernel_;
  std::vector<double> diagonal_;
};

}  // namespace gpstream

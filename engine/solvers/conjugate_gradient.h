// Conjugate gradient on K̄α = y, matrix-free: each iteration is one streamed
// product K̄p with the kernel recomputed (Hestenes & Stiefel 1952; the CG of
// the GBCD paper's Table 2). The residual is −g, so the maintained gradient
// is CG's residual and the driver's stopping rule applies unchanged.
//
// Distributed (the "each rank forms its rows of K̄v"): α and g are
// this rank's rows, the direction p all n of them on every rank (K̄p needs
// all of p); each iteration gathers K̄p's and g's rows (2n values) so that
// every dot product runs over all n in one order — α is the single
// process's bit for bit, whatever the number of ranks.
//
// Preconditioned (pcg) by the Vecchia factor M = UᵀU ≈ K̄⁻¹
// (kernels/vecchia_factor.h): the direction follows z = M r instead of r
// [Saad03 Alg. 9.1], and rᵀz replaces rᵀr; each iteration still costs one
// pass over K̄, and on spatial fields of several scales a handful of them
// reach what plain CG needs hundreds for. In one process (the factor's rows
// are all n).
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/kernels/vecchia_factor.h"
#include "engine/solvers/dense_solver.h"

#include <memory>

namespace gpstream {

class ConjugateGradient final : public DenseSolver {
 public:
  // `preconditioner`: none for cg; the Vecchia factor of K̄ for pcg. With
  // `single_precision` (and where plan_precision() keeps it) the products K̄p
  // run on single-precision entries (solvers/mixed_precision.h).
  explicit ConjugateGradient(KernelMatrix& kernel, std::unique_ptr<VecchiaFactor> preconditioner = nullptr,
                             bool single_precision = false);
  std::string name() const override { return preconditioner_ ? "pcg" : "cg"; }
  void start(SolverState& state, std::span<const double> y) override;
  void gradient_refreshed(SolverState& state) override;
  void iterate(SolverState& state, std::span<const double> y) override;
  std::string plan_precision(const SolverState& state) override;
  bool single_precision(const SolverState& state) const override { return precision_record(state).single; }
  // In double from the (refreshed) residual on, the direction started again from it.
  void use_double_precision(SolverState& state) override;

 private:
  // Every rank's rows of a per-row vector, in row order (a copy in a single process).
  std::vector<double> every_row(std::span<const double> local) const;
  // z = M r for the residual r = −g (all n rows): M r with the preconditioner, r itself without.
  std::vector<double> preconditioned_residual(std::span<const double> gradient) const;

  KernelMatrix& kernel_;
  std::unique_ptr<VecchiaFactor> preconditioner_;
  std::vector<double> product_;
  double largest_diagonal_ = 0.0;  // max_i K̄_ii, the scale of the singularity test
  bool single_precision_asked_;    // `precision` auto
  bool single_precision_ = false;  // a fresh run's products, as plan_precision() decided
};

}  // namespace gpstream

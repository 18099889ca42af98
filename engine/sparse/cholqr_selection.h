// CholQR: the inducing set I (m training rows) and the hyperparameters θ
// chosen together by minimising one objective — the variational free energy
// or the projected-process likelihood (inducing_objective.h) — with the
// hybrid discrete/continuous optimisation of Cao, Brubaker, Fleet &
// Hertzmann 2015, Algorithm 1:
//
//  - start: a random inducing set, the factors of cholqr_factorization.h;
//  - each epoch (one iteration of the solver driver):
//     discrete steps: for min(60, m) random inducing rows i (§4), remove i
//       (downdate, Appendix B), rank every other row j by the approximate
//       decrease of F computed from z information pivots (§3.3.1, eqs.
//       19–21: the residual K − K̂ ≈ L_z L_zᵀ, a partial Cholesky of z
//       random residual columns, so that all n − m candidates cost O(n z²)),
//       evaluate the best one exactly (eqs. 16–18) and swap it in if F
//       decreases, else put i back. The information pivots are drawn
//       afresh at the start of every epoch and after a swap with
//       probability 1/5 (§3.3.2: "on average once per five swaps"), and a
//       pivot that joins I is replaced;
//     continuous step: a bounded number of L-BFGS steps on θ with I fixed
//       (the paper uses nonlinear CG; both take the analytic gradient of
//       inducing_objective.h), evaluation budget min(20, max(15, 2p)) for p
//       hyperparameters (§4);
//     then the factors are recomputed in one batch for the new θ — always,
//       so that a run resumed from a checkpoint at an epoch boundary repeats
//       the uninterrupted one exactly;
//  - stop: the relative decrease of F over an epoch falls below the
//    driver's tolerance (or an iteration / time budget, Ctrl-C).
//
// All n rows are held in memory with the factors: O(n m) doubles
// (cholqr_memory_bytes). Per swap O(n m + n m z) time (the residual columns
// of the information pivots dominate), as in the paper's §3.3.1.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/sparse/cholqr_factorization.h"
#include "engine/sparse/inducing_objective.h"
#include "engine/sparse/sparse_training_method.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <vector>

namespace gpstream {

struct CholQrOptions {
  std::size_t basis_size = 500;         // m
  std::size_t information_pivots = 16;  // z (the paper: 16; 128 for KIN40K)
  InducingObjective objective = InducingObjective::variational;
  std::size_t swaps_per_epoch = 0;             // 0: min(60, m)
  bool learn_hyperparameters = true;           // the continuous steps of Algorithm 1
  bool swap_inducing_rows = true;              // the discrete steps (off: the paper's "Random" baseline)
  std::size_t hyperparameter_evaluations = 0;  // per epoch; 0: min(20, max(15, 2p))
  double min_noise_variance = 1e-6;            // lower bound of σ² in the continuous steps
  std::uint64_t seed = 1;
};

// Bytes CholQR holds for n rows of d inputs and m inducing rows with z
// information pivots: the rows, L, Q, the residual columns and L_z, and the
// two n×m matrices of a hyperparameter gradient evaluation.
std::size_t cholqr_memory_bytes(std::size_t n, std::size_t d, std::size_t m, std::size_t z);

struct CholQrEpochStatistics {
  std::size_t proposed = 0;  // swaps proposed
  std::size_t accepted = 0;  // swaps that decreased F
};

class CholQrSelection final : public SparseTrainingMethod {
 public:
  // `kernel` gives the training rows (read into memory here) and the
  // initial hyperparameters; y are the (standardised) targets. A state with
  // an empty `auxiliary` starts afresh, otherwise the run resumes from it.
  CholQrSelection(KernelMatrix& kernel, std::span<const double> y, const CholQrOptions& options, SolverState& state);
  ~CholQrSelection() override;

  void start() override;
  void iterate() override;  // one epoch
  RunCounters counters() const override;
  void set_counters(const RunCounters& counters) override;
  double objective() const override { return objective_; }
  // The relative decrease of F over the last epoch (∞ before the first).
  double convergence_measure() const override { return last_decrease_; }

  const KernelHyperparameters& hyperparameters() const { return hyperparameters_; }
  const CholQrFactorization& factorization() const { return *factorization_; }
  const CholQrEpochStatistics& last_epoch() const { return last_epoch_; }
  std::uint64_t accepted_swaps() const { return accepted_swaps_; }
  // Writes the run into state.auxiliary (for a checkpoint).
  void store_state() override;
  // The projected-process (SR mean, DTC variance) model read off the factors:
  // β = L_I⁻ᵀ R⁻¹ Qᵀỹ, basis factor L_I = L[I, :], variance factor Rᵀ.
  // Its hyperparameters are the learned ones (the model's kernel).
  SparseModel model() override;
  std::string measure_name() const override { return "relative decrease"; }

 private:
  // A fresh kernel for hyperparameters_ and the factors of `inducing` in one batch.
  void rebuild(std::span<const std::size_t> inducing);
  // New random information pivots; or only as many as are missing.
  void draw_information_pivots(std::mt19937_64& random);
  void top_up_information_pivots(std::mt19937_64& random);
  // One swap proposal for inducing row `row`; returns true when accepted.
  bool swap(std::size_t row, std::mt19937_64& random);
  // The row of the best approximate decrease (§3.3.1), or n when none.
  std::size_t best_candidate(std::size_t excluded);
  void hyperparameter_step();

  KernelMatrix& matrix_;
  std::span<const double> y_;
  CholQrOptions options_;
  MemoryReservation memory_;
  SolverState& state_;
  std::size_t n_, d_;
  std::vector<double> x_;  // n×d, the standardised training rows
  KernelHyperparameters hyperparameters_;
  std::unique_ptr<Kernel> kernel_;
  std::unique_ptr<CholQrFactorization> factorization_;
  std::vector<std::size_t> information_pivots_;
  double objective_ = 0.0;
  double last_decrease_ = std::numeric_limits<double>::infinity();
  std::uint64_t accepted_swaps_ = 0;
  CholQrEpochStatistics last_epoch_;
};

}  // namespace gpstream

// The sparse online GP of Csató & Opper (2002), Gaussian likelihood
// (NOTES.md "Online GP"; Schwaighofer & Tresp 2003 §2.3): one streamed pass
// (or several) over the training rows, each row updating the posterior
//   mean(x) = k_BV(x)ᵀ a,   var(x) = k(x, x) + k_BV(x)ᵀ C k_BV(x)
// on a set of basis vectors BV with Q = K_BV⁻¹ kept alongside. A row whose
// novelty γ = k(x, x) − k_xᵀ Q k_x is below `novelty` × k(x, x) only updates
// a and C (its information projected onto BV); any other joins BV. When BV
// exceeds its budget, the basis vector with the smallest |a_i| / Q_ii — the
// least informative — is deleted and its information folded back into a, C
// and Q. Each row costs O(|BV|²) time; memory is O(|BV|²).
//
// With an unbounded budget and zero novelty threshold every row joins BV and
// the result is the exact GP: a = K̄⁻¹y, C = −K̄⁻¹.
//
// The run is a SparseTrainingMethod: one iteration is a block of rows, and
// the state (BV, a, C, Q and the position in the stream) checkpoints into
// the SolverState's `auxiliary` map.
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/sparse/sparse_training_method.h"

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace gpstream {

struct OnlineGpOptions {
  std::size_t basis_size = 1000;          // the budget of basis vectors
  double novelty = 1e-6;                  // relative novelty below which a row does not join BV
  std::size_t passes = 1;                 // passes over the data
  std::size_t rows_per_iteration = 1000;  // rows per driver iteration (progress, checkpoints)
};

class OnlineGp final : public SparseTrainingMethod {
 public:
  // `kernel` streams the (standardised) training rows in order; y are their
  // targets. A state with an empty `auxiliary` starts afresh.
  OnlineGp(KernelMatrix& kernel, std::span<const double> y, const OnlineGpOptions& options, SolverState& state);

  void iterate() override;
  RunCounters counters() const override;
  void set_counters(const RunCounters& counters) override;
  // −Σ log N(y_t | predictive mean, variance) of each row before it was
  // used: the sequential (prequential) negative log likelihood so far.
  double objective() const override { return sequential_negative_log_likelihood_; }
  // The fraction of the passes still to go.
  double convergence_measure() const override;
  bool complete() const override { return processed_ >= total_rows(); }
  bool converges() const override { return false; }
  std::string measure_name() const override { return "rows to go"; }
  void store_state() override;
  SparseModel model() override;

  std::size_t basis_size() const { return basis_.size(); }
  std::uint64_t deleted() const { return deleted_; }

 private:
  std::uint64_t total_rows() const { return static_cast<std::uint64_t>(options_.passes) * n_; }
  // The update of NOTES.md for one row (x prepared, index `row`, target y).
  void update(std::size_t row, const PreparedRows& prepared, std::size_t position, double y);
  // Removes basis vector i, folding its information into a, C and Q.
  void remove(std::size_t i);
  double& c(std::size_t i, std::size_t j) { return c_[i * stride_ + j]; }
  double& q(std::size_t i, std::size_t j) { return q_[i * stride_ + j]; }

  KernelMatrix& matrix_;
  std::span<const double> y_;
  OnlineGpOptions options_;
  SolverState& state_;
  std::size_t n_, d_;
  double noise_;
  std::size_t stride_;  // budget + 1: room for the vector that may be deleted at once
  std::vector<std::size_t> basis_;
  PreparedRows basis_rows_;             // prepared, in basis order
  std::vector<double> raw_basis_rows_;  // m×d as given, for the model
  std::vector<double> a_;
  std::vector<double> c_, q_;      // stride×stride row-major, leading m×m valid
  std::vector<double> raw_block_;  // the rows of the current iteration, as read
  std::uint64_t processed_ = 0;
  std::uint64_t deleted_ = 0;
  double sequential_negative_log_likelihood_ = 0.0;
};

}  // namespace gpstream

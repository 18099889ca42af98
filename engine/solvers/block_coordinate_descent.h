// Block coordinate descent (block Gauss–Seidel) for K̄α = y: each outer
// iteration picks an active set B of m variables, solves the m-dimensional
// sub-problem exactly, Δα_B = −K̄_BB⁻¹ g_B, and updates
//   α_B += Δα_B,  g += K̄[:, B] Δα_B          (GBCD paper, Algorithm 1, step 4).
//
// The same iteration serves r right-hand sides at once, K̄U = V with one
// shared B per iteration (iterate_columns): each streamed block K̄[:, B]
// then updates every column, which is how predictive variances are
// computed in batches (dense/dense_variance.h). With r columns the greedy
// and gradient policies score a variable by the sum over columns.
//
// How B is chosen is a policy, as ensmallen's coordinate descent takes
// CyclicDescent / RandomDescent / GreedyDescent:
//   GreedySelection   — GBCD, Algorithms 1–2 (Bo & Sminchisescu 2008)
//   CyclicSelection   — BCDC: consecutive blocks of a fixed random order
//   GradientSelection — BCDG: the m largest |g_i| (eq. 4, Gauss–Southwell)
#pragma once

#include "engine/kernels/kernel_matrix.h"
#include "engine/linalg/cholesky.h"
#include "engine/solvers/dense_solver.h"
#include "engine/solvers/subspace_acceleration.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/task_group.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace gpstream {

// What a policy hands back: B and the rows X_B (from the ranks that own them,
// in a distributed run), and optionally the Cholesky factor of K̄_BB when
// choosing B produced it anyway (greedy selection).
struct ActiveSet {
  std::vector<std::size_t> indices;  // numbered over all n
  std::vector<double> rows;          // |B|×d, row-major
  std::vector<double> gradient;      // G_B, |B|×r, row-major, from the owners (BlockCoordinateDescent fills it)
  std::vector<double> cholesky;      // |B|×|B| lower factor (strict upper part undefined)
  bool has_cholesky = false;         // whether `cholesky` holds the factor for this B
};

// Policy state that must survive a restart, by name (SolverState::auxiliary).
using AuxiliaryState = std::map<std::string, std::vector<double>>;

// What a policy chooses from. A rank of a distributed run holds the rows
// kernel.partition() gives it (diagonal and gradient included); every rank
// runs the same selection on what the owners share (collect_variables).
struct SelectionContext {
  KernelMatrix& kernel;
  std::span<const double> diagonal;  // K̄_ii for every i this rank holds
  std::size_t active_set_size;       // m
  const double* gradient;            // G = K̄U − V, this rank's rows × r, row-major (r = 1: g = K̄α − y)
  std::size_t columns;               // r
  std::mt19937_64& random;
  AuxiliaryState& auxiliary;
  // Of the entries that only rank candidates (GreedySelection's scores): single precision's
  // (Kernel::evaluate_single) in a single-precision run, else Kernel::evaluate_rounded's.
  Precision precision = Precision::double_precision;
};

class ActiveSetPolicy {
 public:
  virtual ~ActiveSetPolicy() = default;
  virtual std::string name() const = 0;
  virtual void select(SelectionContext& context, ActiveSet& out) = 0;
  // The rows the policy holds while it selects m variables of d inputs, as
  // copies of one row (what grows with d: the memory budget reserves it).
  virtual std::size_t rows_held(std::size_t m) const { return 2 * m; }  // B's rows, stored and prepared
};

// The BCD policies by solver name: "gbcd", "bcd-cyclic", "bcd-gradient";
// throws for any other name.
std::unique_ptr<ActiveSetPolicy> make_active_set_policy(const std::string& name, std::size_t candidates);

class BlockCoordinateDescent final : public DenseSolver {
 public:
  // With `subspace_steps` k > 0, iterate() takes the subspace step over the
  // block step and the last k steps (solvers/subspace_acceleration.h)
  // instead of the block step alone; 0 is the papers' plain iteration.
  // With `single_precision` (and where plan_precision(), which a run must
  // call for it, keeps it), a fresh
  // run's block products K̄[:, B]Δ and greedy scores run on single-precision
  // entries (Kernel::evaluate_single), without the error bound (its entries
  // are not K̂'s): its claims are certified by exact products
  // (solver_driver.h), and a run whose claim fails continues in double.
  BlockCoordinateDescent(KernelMatrix& kernel, std::unique_ptr<ActiveSetPolicy> policy, std::size_t active_set_size,
                         std::size_t subspace_steps = 0, bool single_precision = false);

  std::string name() const override { return policy_->name(); }
  void start(SolverState& state, std::span<const double> y) override;
  void iterate(SolverState& state, std::span<const double> y) override;
  void gradient_refreshed(SolverState& state) override;
  // Kept by the subspace step (subspace_acceleration.h) in double precision; plain BCD keeps none.
  std::optional<double> gradient_error_bound(const SolverState& state) const override;
  // Single precision where it was asked for and solvers/mixed_precision.h's plan takes it.
  std::string plan_precision(const SolverState& state) override;
  bool single_precision(const SolverState& state) const override { return precision_record(state).single; }
  void use_double_precision(SolverState& state) override;

  // One iteration on r right-hand sides: chooses B for the gradient columns
  // G (n×r, row-major), sets Δ = −K̄_BB⁻¹ G_B (|B|×r) and G += K̄[:, B] Δ
  // (after which G_B = 0). The caller applies Δ to its weights (U_B += Δ);
  // the objectives f_j fall by ½ Σ_i (G_B)_ij Δ_ij, for which `gradient_on_b`
  // (when given) receives G_B as it was before the update. Returns B.
  struct Columns {
    double* gradient;  // G, n×r row-major
    std::size_t r;
    // What the policy scores variables on: G itself (null), or a sketch G·P
    // (n×p) that keeps the greedy scores Σ_j e_ij² in expectation at p/r of
    // their cost (dense/dense_variance.h).
    const double* scored = nullptr;
    std::size_t scored_columns = 0;
  };
  const ActiveSet& iterate_columns(const Columns& columns, std::mt19937_64& random, AuxiliaryState& auxiliary,
                                   std::vector<double>& delta, std::vector<double>* gradient_on_b = nullptr,
                                   Precision precision = Precision::double_precision);

 private:
  // iterate_columns up to the product: B, its factor and Δ.
  const ActiveSet& solve_on_active_set(const Columns& columns, std::mt19937_64& random, AuxiliaryState& auxiliary,
                                       std::vector<double>& delta, std::vector<double>* gradient_on_b,
                                       Precision precision);

  KernelMatrix& kernel_;
  std::unique_ptr<ActiveSetPolicy> policy_;
  MemoryReservation workspace_;  // the policy's rows beyond the fixed workspace (see the constructor)
  std::size_t active_set_size_;
  bool single_precision_asked_;                     // `precision` auto
  bool single_precision_ = false;                   // a fresh run's products, as plan_precision() decided
  std::unique_ptr<SubspaceAcceleration> subspace_;  // null: plain BCD
  std::vector<double> diagonal_;
  ActiveSet active_set_;
  std::vector<double> delta_, block_product_;
};

// GBCD's greedy approximation with random subsets (Algorithm 2): the first
// variable maximises g_i² / K̄_ii over all n (step 3 with O = N); each further
// one maximises e_i² / K̄_ii (eq. 10; Σ_j e_ij² / K̄_ii over r columns, the
// decrease of Σ_j f_j) over κ random candidates, with
// e_O = K̄_OB Δα_B + g_O (step 6) and Δα_B = −K̄_BB⁻¹ g_B through an
// incremental Cholesky factor of K̄_BB.
//
// The steps are taken a chunk at a time: the candidates of a chunk's steps
// are all scored against B as it stands when the chunk starts (one parallel
// pass over their kernel values, on all cores), each step then takes the
// best of its own κ that is not yet in B, and the factor grows by the
// chunk's choices in one block (IncrementalCholesky::append_block). With one
// step per chunk this is Algorithm 2 as written; with more, a step does not
// see how the chunk's earlier choices changed E, so a chunk may pick
// variables that a step-by-step selection would have scored lower. In
// exchange the O(m³) work of the factor runs at BLAS-3 speed and the serial
// part of a selection is m / steps_per_chunk short steps rather than m
// triangular solves. Measured on kin40k (30,000 rows, m = 500, the default
// stopping rule; docs/benchmarks.md): 1, 8, 16, 32 steps per chunk take
// 519, 543, 564, 623 iterations, and 16 was the fastest.
//
// The κ-subsets of one outer iteration are drawn up front (the pool). The
// next iteration's are drawn ahead, from a copy of the random stream (so the
// sequence is the same), and their rows made ready while this iteration
// runs: captured by its pass over X when the rows stream, gathered and
// prepared by a background task when they are in memory on one process. The
// steps of the next selection then start at once: only the first variable's
// row and the gradient values are read.
class GreedySelection final : public ActiveSetPolicy {
 public:
  static constexpr std::size_t kDefaultStepsPerChunk = 16;
  explicit GreedySelection(std::size_t candidates = kGreedyCandidates,
                           std::size_t steps_per_chunk = kDefaultStepsPerChunk)
      : candidates_(candidates), steps_per_chunk_(steps_per_chunk) {}
  ~GreedySelection() noexcept override;
  std::string name() const override { return "gbcd"; }
  void select(SelectionContext& context, ActiveSet& out) override;
  // (m − 1)κ candidate rows, stored and prepared, this iteration's pool and the next's, and one more copy
  // while they are shared: 5 copies (measured: 1.46 GB at m = 300, κ = 60, d = 2,000).
  std::size_t rows_held(std::size_t m) const override { return 5 * (m > 0 ? m - 1 : 0) * candidates_ + 2 * m; }

 private:
  // The κ-subsets of one iteration, the first variable last.
  struct CandidatePool {
    std::vector<std::size_t> draws;
    std::vector<double> rows;  // |draws|×d, as stored
    PreparedRows prepared;
    std::vector<double> gradient, diagonal;  // r values and K̄_ii per draw, from their owners
  };
  // Fills pool_ for this iteration (advancing the random stream past its
  // draws), then starts making the next iteration's ready.
  void fill_pool(SelectionContext& context, std::size_t draw_count, std::size_t first);
  // Steps 2–6 of Algorithm 2 on the pool: B, its factor, and ΔU_B.
  void take_steps(SelectionContext& context, ActiveSet& out);
  // K(candidates, B) as the scores take it (rounded, or in single precision): this thread's block.
  const std::vector<double>& candidate_block(const Kernel& covariance, const PreparedView& candidates,
                                             const PreparedView& chosen, Precision precision);
  // The pool's variable at `position` joins B: its index, row, gradient row and prepared row.
  void join_active_set(std::size_t position, std::size_t d, std::size_t r, ActiveSet& out);

  std::size_t candidates_, steps_per_chunk_;
  // Reused across iterations: sized once, never re-zeroed.
  std::unique_ptr<IncrementalCholesky> factor_;
  CandidatePool pool_;
  struct {
    CandidatePool pool;                 // draws; rows and prepared rows when `ready`
    std::mt19937_64 drawn_from, after;  // the stream before and after its draws
    bool ready = false;
  } next_;
  RowCapture next_rows_;       // when the rows stream: the next pool's rows, from this iteration's pass
  tbb::task_group preparing_;  // when they are in memory: the next pool's rows, gathered and prepared
  PreparedRows active_;
  tbb::enumerable_thread_specific<std::vector<double>> tile_blocks_;   // K(a tile of candidates, B)
  tbb::enumerable_thread_specific<std::vector<float>> single_blocks_;  // the same in single precision, first
  std::vector<std::size_t> chosen_;                                    // pool positions chosen in the current chunk
  std::vector<std::size_t> tiles_;                                     // the current chunk's tiles of candidates
  std::vector<double> first_row_, e_o_, k_sb_, k_ss_, delta_, g_b_;
  PreparedRows first_prepared_;
};

class CyclicSelection final : public ActiveSetPolicy {
 public:
  std::string name() const override { return "bcd-cyclic"; }
  void select(SelectionContext& context, ActiveSet& out) override;

 private:
  std::vector<std::size_t> order_;  // the random order, rebuilt from its saved seed
  double order_seed_ = -1.0;
  std::vector<std::size_t> next_indices_;
  RowCapture next_rows_;  // the next block's rows, captured by this iteration's pass
};

class GradientSelection final : public ActiveSetPolicy {
 public:
  std::string name() const override { return "bcd-gradient"; }
  void select(SelectionContext& context, ActiveSet& out) override;

 private:
  std::vector<std::size_t> order_;
  std::vector<double> scores_;
};

}  // namespace gpstream

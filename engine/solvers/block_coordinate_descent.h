// Block coordinate descent (block Gauss–Seidel) for K̄α = y: each outer
// iteration picks an active set B of m variables, solves the m-dimensional
// sub-problem exactly, Δα_B = −K̄_BB⁻¹ g_B, and updates
//   α_B += Δα_B,  g += K̄[:, B] Δα_B          (GBCD paper, Algorithm 1, step 4).
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

#include <memory>
#include <vector>

namespace gpstream {

// What a policy hands back: B, the rows X_B, and optionally the Cholesky
// factor of K̄_BB when choosing B produced it anyway (greedy selection).
struct ActiveSet {
  std::vector<std::size_t> indices;
  std::vector<double> rows;      // |B|×d, row-major
  std::vector<double> cholesky;  // |B|×|B| lower factor (strict upper part undefined)
  bool has_cholesky = false;     // whether `cholesky` holds the factor for this B
};

struct SelectionContext {
  KernelMatrix& kernel;
  std::span<const double> diagonal;  // K̄_ii for every i
  std::size_t active_set_size;       // m
};

class ActiveSetPolicy {
 public:
  virtual ~ActiveSetPolicy() = default;
  virtual std::string name() const = 0;
  virtual void select(SelectionContext& context, SolverState& state, ActiveSet& out) = 0;
};

class BlockCoordinateDescent final : public DenseSolver {
 public:
  BlockCoordinateDescent(KernelMatrix& kernel, std::unique_ptr<ActiveSetPolicy> policy, std::size_t active_set_size);

  std::string name() const override { return policy_->name(); }
  void iterate(SolverState& state, std::span<const double> y) override;

 private:
  KernelMatrix& kernel_;
  std::unique_ptr<ActiveSetPolicy> policy_;
  std::size_t active_set_size_;
  std::vector<double> diagonal_;
  ActiveSet active_set_;
};

// GBCD's greedy approximation with random subsets (Algorithm 2): the first
// variable maximises g_i² / K̄_ii over all n (step 3 with O = N); each further
// one maximises e_i² / K̄_ii (eq. 10) over κ random candidates, with
// e_O = K̄_OB Δα_B + g_O (step 6), and Δα_B follows by eq. (13) through an
// incremental Cholesky factor of K̄_BB. The κ-subsets of one outer iteration
// are drawn up front and their rows gathered in one read, and their kernel
// values against B are computed a chunk of steps at a time on all cores.
class GreedySelection final : public ActiveSetPolicy {
 public:
  explicit GreedySelection(std::size_t candidates = 60) : candidates_(candidates) {}
  std::string name() const override { return "gbcd"; }
  void select(SelectionContext& context, SolverState& state, ActiveSet& out) override;

 private:
  std::size_t candidates_;
  // Reused across iterations: sized once, never re-zeroed.
  std::unique_ptr<IncrementalCholesky> factor_;
  std::vector<std::size_t> draws_;
  std::vector<double> pool_rows_;
  PreparedRows pool_, active_;
  struct ChunkBlock {
    std::vector<double> values;  // rows×columns, row-major
    std::size_t row0 = 0, rows = 0, columns = 0;
  };
  ChunkBlock chunks_[2];  // the chunk in use and the one computed in the background
  std::vector<double> late_block_, e_o_, k_s_, beta_, delta_, g_b_;
};

class CyclicSelection final : public ActiveSetPolicy {
 public:
  std::string name() const override { return "bcd-cyclic"; }
  void select(SelectionContext& context, SolverState& state, ActiveSet& out) override;

 private:
  std::vector<std::size_t> order_;  // the random order, rebuilt from its saved seed
  double order_seed_ = -1.0;
};

class GradientSelection final : public ActiveSetPolicy {
 public:
  std::string name() const override { return "bcd-gradient"; }
  void select(SelectionContext& context, SolverState& state, ActiveSet& out) override;

 private:
  std::vector<std::size_t> order_;
};

}  // namespace gpstream

// Predictive variances of the exact GP (GBCD paper eq. 2, NOTES.md):
//   latent  var f(x*) = K** − k*ᵀ K̄⁻¹ k*
//   noisy   var y(x*) = K** + σ² − k*ᵀ K̄⁻¹ k*
// Two exact routes, chosen by cost (plan_variances), and one bound:
//
// cholesky — K̄ = LLᵀ formed and factorised once (n³/3 flops, n² doubles of
// the budget, panel by panel so that it reports progress and stops), then
// per batch of r test rows one triangular solve W = L⁻¹K(X, X*) (n²·r) and
// k*ᵀK̄⁻¹k* = ‖w‖². Exact to rounding; the right route for a whole test set
// when n is moderate: 10,000 variances cost about one more factorisation.
// When K̄ does not fit in the memory budget the factor goes to disk
// (VarianceOptions::open_factor_store): the same flops, panels of it in
// memory, the factor (n²/2 doubles) read back per panel and per batch. The
// planner leaves this out where the store has no room for the factor
// (VarianceOptions::factor_store_room), before anything has run.
//
// gbcd — the paper's route (§3.1, Table 3) with a batch of r rows solved
// together, K̄U = K(X, X*_batch), by block coordinate descent with one active
// set per iteration for all open columns (BlockCoordinateDescent::
// iterate_columns): every streamed block K̄[:, B] serves r right-hand sides
// as one GEMM. With more than 32 open columns the greedy policy scores a
// 32-column random-sign sketch G·P instead of G (E‖eP‖² = ‖e‖²); B is still
// solved for exactly. O(n·r) memory, for models whose K̄ does not fit.
//
// The gbcd route's stopping rule bounds each row's error. U is never stored:
// BCD lowers f_j(u) = ½uᵀK̄u − k*ᵀu by ½(G_B)ᵀΔ per iteration, and
//   −2 f_j(u) = k*ᵀK̄⁻¹k* − gᵀK̄⁻¹g,   g = K̄u − k*,
// so v̂ = K** + 2f_j overestimates the latent variance v by gᵀK̄⁻¹g, which
// λ_min(K̄) ≥ σ² bounds: v ∈ [v̂ − b, v̂] with b = ‖g‖₂²/σ². A row stops when
// b ≤ tol · (V̂ − b), V̂ the variance written (v̂, or v̂ + σ² for y*): then
// its relative error is at most tol, however small σ² is next to K**.
// (An absolute rule on ‖g‖∞, or a relative residual, does not bound it: with σ²/K** = 1e-9 the
// variance can be off by a factor.)
//
// Three things make the gbcd route fast when σ² is small against s² (issues
// 47 and 57; their figures: docs/variance.md):
// - Compact batches. The rows go in windows of 16 batches (4 without the
//   local start), each window ordered by recursive bisection into batches
//   that lie together (rows that lie together need the same training
//   variables); a window's rows are published together, and a resumed run
//   starts at a window. A batch's last few open rows go on with the next
//   batch of its window, whose start and steps serve them too.
// - The local start, where the kernel reaches many training rows
//   (variance_routes::local_start_applies; not bcef's, whose route from zero
//   is faster). A batch first takes one exact block step on the s training
//   rows of highest covariance with it (largest k*_ij over its rows, s from
//   the kernel's reach, between VarianceOptions::active_set_size and
//   local_rows): U_S = K̄_SS⁻¹K(X_S, X*), G += K̄[:, S]U_S —
//   as Vecchia [Vecchia88] conditions on neighbours, but shared by the batch,
//   so that one n·s pass serves all its rows. What it leaves of G lies far
//   from the batch, and is smooth there.
// - A certificate that sees that: the Nyström bound (low_rank_error_bound.h)
//   gᵀK̄⁻¹g ≤ gᵀ(σ²I + N)⁻¹g, N ⪯ K, which is ‖g‖²/σ² on the rough part of g
//   and far below it on the smooth part; computed only while it closes rows
//   the plain bound leaves open (gbcd_variances.cpp). GBCD steps continue
//   from the start for the rows not yet certified.
// (Each alone was tried before and removed: a per-row local start left
// bcef's gap rows far from the tolerance and made the union of a batch's sets
// the cost; the Nyström bound on what GBCD steps alone leave, which is rough,
// saved almost nothing. Together, on compact batches, they pay.)
//
// nearest — an upper bound, for models whose exact variances cost too much
// (K̄'s factor does not fit on disk, GBCD's solves are slow on a small σ²):
// each test row conditioned on its M training rows of highest covariance,
// as a nearest-neighbour GP predicts [Datta16 §2.1]. For any set N of
// training rows, var(f* | y_N) ≥ var(f* | y), and the M rows of highest
// covariance with x* are nested in M: the value falls as M grows and is
// exact at M = n. Per batch of r rows, K(X, Z) in one pass (n·r entries),
// then per row K̄_NN = LLᵀ (M³/3 flops) and k_Nᵀ K̄_NN⁻¹ k_N = ‖L⁻¹k_N‖².
// How close it is depends on the kernel's reach (docs/variance.md has
// measurements); it is never chosen by auto.
//
// auto compares the exact routes' flops: the cholesky route's n³/3 + n²·r against
// the gbcd route's steps, measured by a pilot batch of 64 test rows (lying
// together, as its batches do, where the local start applies) capped at
// 2 % of the cholesky route's cost (a kernel of short reach needs tens of
// steps a batch, kin40k's thousands).
//
// Distributed (training rows partitioned among ranks): the gbcd route, each
// rank holding its rows of G = K̄U − K(X, X*) and the BCD family's steps
// shared as in training; the column norms of the stopping rule are summed
// over the ranks. The cholesky route needs all of K̄ in one process, the
// nearest route (as built) each test row's covariances with all n rows.
#pragma once

#include "engine/core/scratch_store.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/kernels/column_cache_setup.h"
#include "engine/solvers/dense_solver.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace gpstream {

enum class VarianceMethod { automatic, cholesky, gbcd, nearest };
// "auto", "cholesky", "gbcd", "nearest"; throws an Error otherwise.
VarianceMethod parse_variance_method(const std::string& text);
const char* to_string(VarianceMethod method);

struct VarianceOptions {
  VarianceMethod method = VarianceMethod::automatic;
  // The gbcd route:
  std::string policy = "gbcd";                 // active-set policy: gbcd, bcd-cyclic, bcd-gradient
  // m (GBCD paper §3): twice training's. A variance solve's coordinates are those near its test rows,
  // and larger blocks reach them in fewer iterations (docs/benchmarks.md, "Tuning constants and their
  // figures").
  std::size_t active_set_size = 1000;
  std::size_t candidates = kGreedyCandidates;  // κ (GBCD paper §3)
  // The local start (see above): each batch first solved exactly on at most
  // this many training rows of highest covariance with it (those within the
  // kernel's reach, at least active_set_size; the figures: docs/benchmarks.md, "Tuning constants and their
  // figures"). 0: off.
  std::size_t local_rows = 1500;
  // The Nyström certificate's training rows (r; low_rank_error_bound.h), with the local start. 0: the
  // plain bound only.
  std::size_t certificate_points = 1000;
  // The bound on each row's relative error (see above).
  double tolerance = 1e-3;
  // The variance the bound is relative to: of y* (noise included), or of f*.
  bool noisy = true;
  std::uint64_t max_iterations = 100000;  // per batch
  // The nearest route: training rows each test row is conditioned on (M; n at most).
  std::size_t neighbours = 512;
  // Test rows solved together; 0: as many as half of the Context's free
  // memory budget holds (n doubles each), at most 1024 (256 with the local
  // start, whose rows grow with the batch's extent).
  std::size_t batch_rows = 0;
  std::uint64_t seed = 1;
  // Rows before it are done already (a resumed run): computed from it on.
  std::size_t first_row = 0;
  // Where the cholesky route keeps K̄'s factor when it does not fit in the
  // memory budget (a file: storage/scratch/scratch_file.h); empty: it must fit.
  ScratchOpener open_factor_store;
  // The bytes free there: the planner leaves the route out when the factor would not fit (unset: not checked).
  ScratchRoom factor_store_room;
  // Stops between iterations after this many seconds, leaving later rows undone.
  double time_limit_seconds = std::numeric_limits<double>::infinity();
  // The gbcd route's kernel-column cache (SolverOptions, solvers/dense_solver.h): the
  // batches re-select the same training variables (a 256-input set: 69 % of
  // the columns of 3 batches were reused), and the results are bitwise the
  // same with it. Configured after the batch memory is reserved, so that it
  // never changes the batch size. Off unless asked.
  ColumnCacheSettings cache = {ColumnCacheMode::off, {}};
};

// Which route, with why, for `count` test rows on the model behind `training`.
struct VariancePlan {
  VarianceMethod method = VarianceMethod::gbcd;
  std::string reason;
  bool factor_on_disk = false;  // cholesky: K̄'s factor in VarianceOptions::open_factor_store
};
// With `test_rows` (count×d, standardised) and method auto, the gbcd route's
// cost is measured by a pilot batch of a few of them (see above).
VariancePlan plan_variances(KernelMatrix& training, std::size_t count, const VarianceOptions& options,
                            const double* test_rows = nullptr);

struct VariancePrediction {
  std::vector<double> latent;    // K** − k*ᵀK̄⁻¹k* per test row (standardised units); add σ² for y*
  std::uint64_t iterations = 0;  // gbcd: over all batches; cholesky: panels and batches; nearest: batches
  std::size_t batches = 0, batch_rows = 0;
  std::size_t unconverged_rows = 0;  // gbcd: stopped by max_iterations above the tolerance
  double largest_error_bound = 0.0;  // gbcd: the largest final relative error bound over all rows
  bool time_limit_reached = false;   // rows after the last batch sent to the sink are not done
  std::string cache;                 // gbcd: what configure_column_cache chose, for the user
  std::size_t local_rows = 0;        // gbcd: the local start's training rows per batch (0: none)
  std::size_t certificate_points = 0;  // gbcd: the Nyström certificate's rows (0: the plain bound)
  std::uint64_t certificate_checks = 0;  // gbcd: the times it was computed (only while it pays)
  std::size_t carried_rows = 0;          // gbcd: rows still open that went on with the next batch
};

// Called with each finished batch: the latent variances of test rows
// first … first + latent.size() − 1, in order.
using VarianceBatchSink = std::function<void(std::size_t first, std::span<const double> latent)>;

// Variances for test rows options.first_row … count − 1 (standardised,
// count×d) of the GP over the training rows behind `training`, by
// plan.method, run by the solver driver in the training's Context: its
// observers see one report per iteration (gbcd: one GBCD step, done = test
// rows finished, the measure the largest relative error bound of the open
// rows; cholesky: one panel or one batch, done and total in Mflop). Throws
// Cancelled when the Context's stop is requested, after the batches that
// finished went to `sink`.
VariancePrediction predict_latent_variance(KernelMatrix& training, const double* test_rows, std::size_t count,
                                           const VarianceOptions& options, const VariancePlan& plan,
                                           const VarianceBatchSink& sink = {});

// The joint latent covariance K** − K*ᵀK̄⁻¹K* (m×m, row-major, standardised
// units) at m test rows Z (standardised, m×d), by the cholesky route kept
// whole instead of its diagonal: K̄ = LLᵀ, W = L⁻¹K(X, Z), K(Z, Z) − WᵀW.
// Reserves what that route does (K̄'s n² doubles and the rows, plus W) from
// the training's Context, or says to ask for per-row variances instead. One
// process only (K̄ factorised whole).
std::vector<double> predict_latent_covariance(KernelMatrix& training, const double* test_rows, std::size_t count);

}  // namespace gpstream

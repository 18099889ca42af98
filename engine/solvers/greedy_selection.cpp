// GBCD's greedy selection (BoSminchisescu08 §3, Algorithm 2): m steps, each
// adding the candidate of a random κ-subset that most decreases the
// objective, taken a chunk of steps at a time (block_coordinate_descent.h),
// with the active-set factor grown by one block per chunk.
#include "engine/solvers/block_coordinate_descent.h"

#include "engine/core/error.h"
#include "engine/data/partitioned_rows.h"
#include "engine/core/size_arithmetic.h"
#include "engine/core/worker_team.h"
#include "engine/linalg/cholesky.h"

#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <cmath>
#include <numeric>
#include <vector>

namespace gpstream {
namespace {

// Gathers the rows of `indices` (resident rows are copied directly).
void gather(RowSource& rows, std::span<const std::size_t> indices, std::vector<double>& out) {
  out.resize(checked_multiply(indices.size(), rows.columns()));
  rows.gather_rows(indices, out.data(), nullptr);
}

// `count` candidates drawn uniformly from the n variables (Algorithm 2's κ-subsets).
void draw_candidates(std::mt19937_64& random, std::size_t n, std::size_t count, std::vector<std::size_t>& out) {
  std::uniform_int_distribution<std::size_t> uniform(0, n - 1);
  out.resize(count);
  for (std::size_t& draw : out) draw = uniform(random);
}

struct Score {
  double value = -1.0;
  std::size_t index = 0;
};

// Each chunk's candidates are scored against B in tiles of at most this
// many rows, one tile per item of the team's round: a tile's K_OB
// (≤ 64 × |B|) stays in cache for its product with Δα_B. Tiles that do not
// depend on the thread count keep the arithmetic independent of it.
constexpr std::size_t kChunkTileRows = 64;

// Tile boundaries (`out`: first rows, then `rows`) from halving [0, rows)
// until no part is longer than `most`: tiles of equal size within one row,
// as tbb's simple_partitioner made them when the tiles were its tasks.
void halving_tiles(std::size_t rows, std::size_t most, std::vector<std::size_t>& out) {
  out.assign(1, 0);
  const auto split = [&](auto&& self, std::size_t begin, std::size_t end) -> void {
    if (end - begin <= most) return out.push_back(end);
    const std::size_t middle = begin + (end - begin) / 2;
    self(self, begin, middle);
    self(self, middle, end);
  };
  if (rows > 0) split(split, 0, rows);
}

// A set of at most `capacity` variable indices, for the (m − 1)κ membership
// tests of a selection, on one thread between rounds: open addressing in a
// table at most half full, a probe or two in cache where std::unordered_set
// chased a node per test (docs/benchmarks.md, "Tuning constants and their figures").
class IndexSet {
 public:
  explicit IndexSet(std::size_t capacity) : slots_(std::bit_ceil(2 * capacity + 2), kEmpty) {}
  bool contains(std::size_t index) const {
    for (std::size_t slot = home(index);; slot = (slot + 1) & (slots_.size() - 1)) {
      if (slots_[slot] == index) return true;
      if (slots_[slot] == kEmpty) return false;
    }
  }
  void insert(std::size_t index) {
    std::size_t slot = home(index);
    while (slots_[slot] != kEmpty && slots_[slot] != index) slot = (slot + 1) & (slots_.size() - 1);
    slots_[slot] = index;
  }

 private:
  static constexpr std::size_t kEmpty = std::numeric_limits<std::size_t>::max();
  // Fibonacci hashing: the top bits of index·2⁶⁴/φ.
  std::size_t home(std::size_t index) const {
    return static_cast<std::size_t>((index * 0x9E3779B97F4A7C15ull) >> (64 - std::countr_zero(slots_.size())));
  }
  std::vector<std::size_t> slots_;
};

// The higher score; ties go to the smaller index, so the choice is deterministic.
Score better_score(const Score& a, const Score& b) {
  return (b.value > a.value || (b.value == a.value && b.index < a.index)) ? b : a;
}

// Σ_j x_j² over the r values of one row.
double squared_norm(const double* row, std::size_t r) {
  double sum = 0.0;
  for (std::size_t j = 0; j < r; ++j) sum += row[j] * row[j];
  return sum;
}

// A chunk of greedy steps: steps [first, last), each over its κ candidates
// at pool positions (step − 1)·κ on, their E_O rows from `row_first`'s.
struct ChunkSteps {
  std::size_t first, last, row_first, candidates, columns;
};

// Step 3 for each step of the chunk: s = argmin_i −e_i² / (2 K̄_ii) over its
// κ candidates, eq. (10), with E_O as of the chunk's start; members of B and
// the chunk's earlier choices are skipped, ties go to the first candidate.
// The pool positions chosen go to `chosen` (cleared first), their variables
// into `in_b`.
void choose_in_chunk(const ChunkSteps& chunk, const std::vector<std::size_t>& draws, const double* e_o,
                     const double* diagonal, IndexSet& in_b, std::vector<std::size_t>& chosen) {
  chosen.clear();
  for (std::size_t step = chunk.first; step < chunk.last; ++step) {
    const std::size_t row0 = (step - 1) * chunk.candidates;
    std::size_t best = chunk.candidates;
    double best_score = -1.0;
    for (std::size_t k = 0; k < chunk.candidates; ++k) {
      if (in_b.contains(draws[row0 + k])) continue;
      const double score =
          squared_norm(e_o + (row0 - chunk.row_first + k) * chunk.columns, chunk.columns) / diagonal[row0 + k];
      if (score > best_score) best_score = score, best = k;
    }
    if (best == chunk.candidates) continue;  // every candidate is already in B
    chosen.push_back(row0 + best);
    in_b.insert(draws[row0 + best]);
  }
}

// argmax_i Σ_j G_ij² / K̄_ii over all n, ties to the smallest i (deterministic):
// over this rank's rows, then over the ranks.
std::size_t best_first_variable(const SelectionContext& context) {
  const double* gradient = context.gradient;
  const std::size_t r = context.columns;
  const std::span<const double> diagonal = context.diagonal;
  const Score best = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, diagonal.size(), 1u << 14), Score{},
      [&](const tbb::blocked_range<std::size_t>& range, Score score) {
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
          const double value = squared_norm(gradient + i * r, r) / diagonal[i];
          if (value > score.value) score = {value, i};
        }
        return score;
      },
      better_score);
  const RowPartition& partition = context.kernel.partition();
  return context.kernel.context().communicator().max_location(best.value, partition.first + best.index).second;
}

// Values of the variables `indices` (numbered over all n), `width` per
// variable, from the ranks that own them: fill(local row, out) writes the
// `width` values of each owned variable, in order, every other value is
// zero, and one sum shares them — exact, since each comes from one rank.
// With one rank it only copies.
template <typename Fill>
std::vector<double> share_owned(KernelMatrix& kernel, std::span<const std::size_t> indices, std::size_t width,
                                Fill&& fill) {
  const RowPartition& partition = kernel.partition();
  std::vector<double> shared(checked_multiply(indices.size(), width), 0.0);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    if (partition.owns(indices[k])) fill(partition.local(indices[k]), shared.data() + k * width);
  }
  kernel.context().communicator().sum(shared);
  return shared;
}

// The rows (d values; none when `rows` is null), scored gradient rows (r
// values) and K̄_ii of the variables `indices`, from their owners, in one
// collective. The owned rows among the first `captured` indices come from
// `capture` when it holds them (a pass brought them), the others are gathered.
void collect_variables(const SelectionContext& context, std::span<const std::size_t> indices, RowCapture* capture,
                       std::size_t captured, std::vector<double>* rows, std::vector<double>& gradient,
                       std::vector<double>& diagonal) {
  KernelMatrix& kernel = context.kernel;
  const RowPartition& partition = kernel.partition();
  const std::size_t d = rows != nullptr ? kernel.rows().columns() : 0, r = context.columns, count = indices.size();
  std::vector<double> owned;
  if (rows != nullptr) {
    const std::vector<std::size_t> local = owned_local_rows(partition, indices.first(captured));
    const std::vector<std::size_t> rest_local = owned_local_rows(partition, indices.subspan(captured));
    std::vector<double> rest;
    if (capture == nullptr || !capture->take(local, owned)) gather(kernel.rows(), local, owned);
    gather(kernel.rows(), rest_local, rest);
    owned.insert(owned.end(), rest.begin(), rest.end());  // in the order of the owned positions
  }
  const std::size_t width = d + r + 1;
  std::size_t next = 0;
  const std::vector<double> shared = share_owned(kernel, indices, width, [&](std::size_t row, double* values) {
    std::copy_n(owned.data() + next++ * d, d, values);
    std::copy_n(context.gradient + row * r, r, values + d);
    values[d + r] = context.diagonal[row];
  });
  if (rows != nullptr) rows->resize(checked_multiply(count, d));
  gradient.resize(checked_multiply(count, r));
  diagonal.resize(count);
  for (std::size_t k = 0; k < count; ++k) {
    const double* values = shared.data() + k * width;
    if (rows != nullptr) std::copy_n(values, d, rows->data() + k * d);
    std::copy_n(values + d, r, gradient.data() + k * r);
    diagonal[k] = values[d + r];
  }
}

// y (rows×r) += A (rows×inner, leading dimension lda) · X (inner×r), all row-major.
void add_product(std::size_t rows, std::size_t inner, const double* a, std::size_t lda, const double* x, std::size_t r,
                 double* y) {
  if (inner == 0 || rows == 0) return;
  if (r == 1) {
    cblas_dgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(rows), static_cast<int>(inner), 1.0, a,
                static_cast<int>(lda), x, 1, 1.0, y, 1);
  } else {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), static_cast<int>(r),
                static_cast<int>(inner), 1.0, a, static_cast<int>(lda), x, static_cast<int>(r), 1.0, y,
                static_cast<int>(r));
  }
}

}  // namespace

// Declared noexcept, which tbb::task_group's destructor is not: select()
// has always waited for the background task before it returned.
GreedySelection::~GreedySelection() noexcept = default;

void GreedySelection::fill_pool(SelectionContext& context, std::size_t draw_count, std::size_t first) {
  KernelMatrix& kernel = context.kernel;
  const RowPartition& partition = kernel.partition();
  const Kernel& covariance = kernel.kernel();
  const std::size_t n = partition.global_rows, d = kernel.rows().columns();
  if (next_.ready && next_.drawn_from == context.random && next_.pool.draws.size() == draw_count) {
    // Drawn and prepared during the last iteration: add the first variable.
    std::swap(pool_, next_.pool);
    context.random = next_.after;
    gather(kernel.rows(), std::span(&first, 1), first_row_);
    covariance.prepare(first_row_.data(), 1, first_prepared_);
    pool_.draws.push_back(first);
    pool_.rows.insert(pool_.rows.end(), first_row_.begin(), first_row_.end());
    pool_.prepared.append(first_prepared_, 0, d);
    collect_variables(context, pool_.draws, nullptr, 0, nullptr, pool_.gradient, pool_.diagonal);
  } else {
    draw_candidates(context.random, n, draw_count, pool_.draws);
    pool_.draws.push_back(first);
    collect_variables(context, pool_.draws, &next_rows_, draw_count, &pool_.rows, pool_.gradient, pool_.diagonal);
    covariance.prepare(pool_.rows.data(), pool_.draws.size(), pool_.prepared);
  }
  next_.ready = false;

  // The next iteration draws the next values of the same stream: draw them
  // now on a copy, and have their rows ready before it starts.
  const bool one_process = partition.count == n;
  if (!kernel.streams_rows() && !one_process) return;  // the rows of other ranks come in its collective
  next_.drawn_from = context.random;
  std::mt19937_64 ahead = context.random;
  draw_candidates(ahead, n, draw_count, next_.pool.draws);
  next_.after = ahead;
  if (kernel.streams_rows()) {
    next_rows_.request(owned_local_rows(partition, next_.pool.draws), d);
    kernel.capture_during_next_pass(next_rows_);
    return;
  }
  // Rows in memory can be read from any thread (RowSource's contract), and
  // prepared rows do not depend on each other: the same bits as in the foreground.
  preparing_.run([this, &rows = kernel.rows(), &covariance] {
    CandidatePool& pool = next_.pool;
    gather(rows, pool.draws, pool.rows);
    covariance.prepare(pool.rows.data(), pool.draws.size(), pool.prepared);
    next_.ready = true;
  });
}

void GreedySelection::select(SelectionContext& context, ActiveSet& out) {
  // The κ-subsets O of steps t = 1 … m−1 (step 6): draw k of step t at
  // position (t − 1)κ + k of the pool, the first variable last. Every rank
  // draws the same.
  PhaseTimes* times = context.kernel.context().phase_times();
  const std::size_t first = [&] {
    const ScopedPhase phase(times, Phase::first_variable);
    return best_first_variable(context);
  }();
  {
    const ScopedPhase phase(times, Phase::candidate_pool);
    fill_pool(context, checked_multiply(context.active_set_size - 1, candidates_), first);
  }
  // The next pool's task is waited for here, inside the task arena that runs
  // it: a wait from outside (a destructor) could find no thread to run it.
  try {
    take_steps(context, out);
  } catch (...) {
    try {
      preparing_.wait();
    } catch (...) {  // the first failure is the one to report
    }
    next_.ready = false;
    throw;
  }
  const ScopedPhase phase(times, Phase::candidate_pool);
  preparing_.wait();
}

void GreedySelection::join_active_set(std::size_t position, std::size_t d, std::size_t r, ActiveSet& out) {
  out.indices.push_back(pool_.draws[position]);
  out.rows.insert(out.rows.end(), pool_.rows.begin() + static_cast<std::ptrdiff_t>(position * d),
                  pool_.rows.begin() + static_cast<std::ptrdiff_t>((position + 1) * d));
  g_b_.insert(g_b_.end(), pool_.gradient.begin() + static_cast<std::ptrdiff_t>(position * r),
              pool_.gradient.begin() + static_cast<std::ptrdiff_t>((position + 1) * r));
  active_.append(pool_.prepared, position, d);
}

const std::vector<double>& GreedySelection::candidate_block(const Kernel& covariance, const PreparedView& candidates,
                                                            const PreparedView& chosen, Precision precision) {
  std::vector<double>& block = tile_blocks_.local();
  block.resize(candidates.count * chosen.count);
  if (precision == Precision::single_precision) {
    std::vector<float>& single = single_blocks_.local();
    single.resize(block.size());
    covariance.evaluate_single(candidates, chosen, single.data());
    std::copy(single.begin(), single.end(), block.begin());
  } else {
    covariance.evaluate_rounded(candidates, chosen, block.data());
  }
  return block;
}

void GreedySelection::take_steps(SelectionContext& context, ActiveSet& out) {
  KernelMatrix& kernel = context.kernel;
  PhaseTimes* times = kernel.context().phase_times();
  const Kernel& covariance = kernel.kernel();
  const std::size_t d = kernel.rows().columns();
  const std::size_t m = context.active_set_size;
  const std::size_t r = context.columns;
  const std::vector<std::size_t>& draws = pool_.draws;
  const std::size_t first_position = draws.size() - 1;
  const std::size_t first = draws[first_position];
  const double* g = pool_.gradient.data();         // position p: the r gradient values of draws[p]
  const double* diagonal = pool_.diagonal.data();  // position p: K̄ of draws[p]

  if (!factor_ || factor_->capacity() < m) factor_ = std::make_unique<IncrementalCholesky>(m);
  IncrementalCholesky& factor = *factor_;
  factor.clear();
  std::vector<std::size_t>& b = out.indices;
  // B, X_B, G_B (one row per chosen variable) and X_B prepared once, grown as variables are chosen.
  b.clear();
  out.rows.clear();
  g_b_.clear();
  active_.count = 0;
  active_.values.clear();
  active_.squared_norms.clear();
  join_active_set(first_position, d, r, out);
  factor.append(nullptr, diagonal[first_position]);

  IndexSet in_b(m);
  in_b.insert(first);
  active_.values.reserve(m * d);
  active_.squared_norms.reserve(m);
  std::uint64_t evaluations = 0;
  // ~m / steps_per_chunk_ rounds of parallel work with serial steps between:
  // one team for all of them (core/worker_team.h).
  WorkerTeam::run([&](WorkerTeam& team) {
    for (std::size_t chunk_first = 1; chunk_first < m; chunk_first += steps_per_chunk_) {
      const std::size_t chunk_last = std::min(m, chunk_first + steps_per_chunk_);
      const std::size_t t = b.size();
      // Δα_B = −K̄_BB⁻¹ G_B for B as it stands (eq. 13 for every column at once).
      std::optional<ScopedPhase> phase(std::in_place, times, Phase::chunk_solves);
      delta_.resize(t * r);
      for (std::size_t k = 0; k < t * r; ++k) delta_[k] = -g_b_[k];
      factor.solve_columns(delta_.data(), r, false);
      factor.solve_columns(delta_.data(), r, true);
      phase.emplace(times, Phase::candidate_scores);
      // E_O = K̄_OB Δα_B + G_O for the chunk's candidates (step 6; O ∩ B = ∅,
      // so K̄_OB = K_OB: no noise term), a tile of rows at a time on all
      // cores: each tile's K_OB is used once, while it is in cache, and not
      // kept. E only ranks the candidates, so K_OB is rounded
      // (Kernel::evaluate_rounded: ~1e-7 of s², at 0.6× the cost; in a
      // single-precision run evaluate_single's, cheaper still); K̄_SB and
      // K̄_SS for the factor, and so Δα_B, are exact.
      const std::size_t row_first = (chunk_first - 1) * candidates_;
      const std::size_t rows = (chunk_last - chunk_first) * candidates_;
      e_o_.assign(g + row_first * r, g + (row_first + rows) * r);
      const PreparedView chosen_so_far = active_.view(d);
      halving_tiles(rows, kChunkTileRows, tiles_);
      team.for_each(tiles_.size() - 1, [&](std::size_t tile) {
        const std::size_t begin = tiles_[tile], size = tiles_[tile + 1] - begin;
        const std::vector<double>& block = candidate_block(covariance, pool_.prepared.view(d, row_first + begin, size),
                                                           chosen_so_far, context.precision);
        add_product(size, t, block.data(), t, delta_.data(), r, e_o_.data() + begin * r);
      });
      evaluations += rows * t;
      phase.emplace(times, Phase::greedy_steps);
      choose_in_chunk({chunk_first, chunk_last, row_first, candidates_, r}, draws, e_o_.data(), diagonal, in_b,
                      chosen_);
      // S joins B: K̄[S, B] and K̄_SS from their rows, and the factor of K̄_BB
      // grown by S in one block.
      phase.emplace(times, Phase::factor_block);
      const std::size_t count = chosen_.size();
      for (const std::size_t position : chosen_) join_active_set(position, d, r, out);
      k_sb_.resize(count * t);
      k_ss_.resize(count * count);
      covariance.evaluate(active_.view(d, t, count), active_.view(d, 0, t), k_sb_.data());
      covariance.evaluate(active_.view(d, t, count), active_.view(d, t, count), k_ss_.data());
      evaluations += count * (t + count);
      for (std::size_t j = 0; j < count; ++j) k_ss_[j * count + j] = diagonal[chosen_[j]];
      // The Schur complement of K̄ = K + σ²I is at least σ², so a pivot below
      // 1e-12·K̄_ss means σ² is lost in rounding and K̄ is singular to working
      // precision (duplicate rows with a negligible noise variance): the
      // system has no well-defined solution, and descent would go on for ever.
      const std::size_t appended = factor.append_block(k_sb_.data(), k_ss_.data(), count, &team);
      if (appended < count) {
        throw_not_positive_definite(
            "K̄", fmt::format("gbcd's factor of K̄_BB failed at column {} of {}: pivot² ≤ {:.0e}·K̄_ss", t + appended + 1,
                             m, kSingularRelativeFloor));
      }
    }
  });
  kernel.count_kernel_evaluations(evaluations);
  factor.copy_factor(out.cholesky);
  out.has_cholesky = true;
}

}  // namespace gpstream

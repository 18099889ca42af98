// The Vecchia factor of K̄ = K + σ²I [Vecchia88; Katzfuss21 §2; Guinness18]:
// with each row i's conditioning set N(i) — the m rows nearest to it among
// those before it in a random order (data/conditioning_sets.h) — and
// J = N(i) then i, K̄_JJ = L Lᵀ,
//
//   K̄⁻¹ ≈ Uᵀ U,   U's row i = the last row of L⁻¹ (on the columns J),
//
// the sparse inverse Cholesky factor of the joint density Πᵢ p(yᵢ | y_N(i))
// the Vecchia likelihood evaluates (hyper/vecchia_likelihood.h): exact when
// every set holds all earlier rows. In two or three inputs the nearest 30
// carry almost all of a row's conditional information, so UᵀU applied to a
// residual is nearly K̄⁻¹ applied to it: the preconditioner of `train
// --solver pcg` (solvers/conjugate_gradient.h), which turns hundreds of
// passes over K̄ into a handful on a field of several scales. Building it
// costs O(n m³) and n(m + 1) entries (twice: U and Uᵀ by rows, so that both
// products run on every core without conflicts); applying it O(n m).
#pragma once

#include "engine/core/context.h"
#include "engine/data/conditioning_sets.h"
#include "engine/data/row_source.h"
#include "engine/kernels/kernel.h"

#include <cstdint>
#include <span>
#include <vector>

namespace gpstream {

class VecchiaFactor {
 public:
  // The factor of K̄ on all rows of `rows` (read once; the rows of a single process), m = `neighbours`, the
  // random order drawn from `seed`; its memory reserved in the context's budget. Deterministic: the same rows,
  // kernel and seed give the same bits on any number of threads. Throws when a conditioning block is not
  // numerically positive definite.
  VecchiaFactor(Context& context, RowSource& rows, const Kernel& kernel, std::size_t neighbours, std::uint64_t seed);

  std::size_t size() const { return sets_.size(); }
  std::size_t neighbours() const { return sets_.neighbours(); }
  // z = Uᵀ U r ≈ K̄⁻¹ r (n values each, in the rows' order); z and r may not overlap.
  void apply_inverse(std::span<const double> r, std::span<double> z) const;
  // The bytes a factor of n rows and m neighbours holds, and those of the rows it reads while it is built.
  static std::size_t bytes(std::size_t n, std::size_t neighbours, std::size_t d);

 private:
  Context& context_;
  ConditioningSets sets_;
  MemoryReservation memory_;
  // U by rows: position k's entries are [offsets_[k], offsets_[k + 1]), on the rows `columns_`.
  std::vector<std::uint64_t> offsets_;
  std::vector<std::uint32_t> columns_;
  std::vector<double> weights_;
  // Uᵀ by rows: row j's entries [transpose_offsets_[j], …), from the positions `transpose_positions_`.
  std::vector<std::uint64_t> transpose_offsets_;
  std::vector<std::uint32_t> transpose_positions_;
  std::vector<double> transpose_weights_;
};

}  // namespace gpstream

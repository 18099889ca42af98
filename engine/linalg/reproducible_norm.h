// ‖v‖₂ of a vector whose entries are shared out among ranks, with the same
// bits whatever the share, the number of ranks and of threads: a stopping
// decision taken on it must not depend on the partition, or α would not be
// independent of P (docs/reliability.md).
//
// The squares v_i² (each rounded once, as in any sum of squares) are added
// exactly. A double is m·2^e with an integer m < 2⁵³, so squares binned by e
// add as integers, in any order and on any rank, and the bins combine over
// the ranks as integers too; only the conversion of the exact total rounds.
// This is reproducible summation [Demmel15] reduced to non-negative terms.
#pragma once

#include "engine/core/communicator.h"

#include <span>

namespace gpstream {

// √(Σ v_i²) over every rank's `local` entries, alike on every rank; NaN when
// any entry is NaN, +inf when one is infinite or its square overflows.
// Collective: every rank calls it.
double reproducible_norm(std::span<const double> local, Communicator& ranks);

}  // namespace gpstream

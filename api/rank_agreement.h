// Every rank of a distributed job must run the same job on the same data: an
// MPMD launch, or node-local copies of a file that differ, would otherwise
// converge to a model of no dataset (the sweep: exact residuals of 31 and
// 0.16 after a claimed convergence), or fail in a collective far from the
// cause. Each part of what the ranks must share is reduced to a digest; rank
// 0's are compared with every rank's before the first product, and every
// rank throws the same InvalidArgument naming the first rank and part that
// differ.
#pragma once

#include "engine/core/communicator.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpstream {

struct AgreedPart {
  std::string what;  // "the training data (a dataset of other contents)"
  std::uint64_t digest;
};

// XXH3 of bytes, of text.
std::uint64_t digest_of(const void* data, std::size_t bytes);
inline std::uint64_t digest_of(const std::string& text) { return digest_of(text.data(), text.size()); }

// A collective: every rank calls it with its parts, in the same order.
void check_ranks_agree(Communicator& ranks, const std::vector<AgreedPart>& parts);

}  // namespace gpstream

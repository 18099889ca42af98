#include "api/rank_agreement.h"

#include "engine/core/error.h"

#include <fmt/format.h>
#include <xxhash.h>

namespace gpstream {

std::uint64_t digest_of(const void* data, std::size_t bytes) { return XXH3_64bits(data, bytes); }

void check_ranks_agree(Communicator& ranks, const std::vector<AgreedPart>& parts) {
  if (ranks.size() == 1) return;
  std::vector<double> digests;  // each 64-bit digest as two 32-bit halves, exact in a double
  for (const AgreedPart& part : parts) {
    digests.push_back(static_cast<double>(part.digest >> 32));
    digests.push_back(static_cast<double>(part.digest & 0xffffffffu));
  }
  const std::vector<double> every = ranks.all_gather(digests);
  const std::size_t width = digests.size();
  GPSTREAM_CHECK(every.size() == width * ranks.size(), "the ranks compared {} digests, expected {}", every.size(),
                 width * ranks.size());
  for (std::size_t rank = 1; rank < ranks.size(); ++rank) {
    for (std::size_t part = 0; part < parts.size(); ++part) {
      const double* theirs = every.data() + rank * width + 2 * part;
      const double* root = every.data() + 2 * part;
      if (theirs[0] != root[0] || theirs[1] != root[1]) {
        throw InvalidArgument(fmt::format(
            "rank {} of {} does not agree with rank 0 on {}: every rank must run the same job on the same data", rank,
            ranks.size(), parts[part].what));
      }
    }
  }
}

}  // namespace gpstream

#include "engine/core/phase_times.h"

namespace gpstream {

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::first_variable:
      return "first variable";
    case Phase::candidate_pool:
      return "candidate pool";
    case Phase::chunk_solves:
      return "chunk solves";
    case Phase::candidate_scores:
      return "candidate scores";
    case Phase::greedy_steps:
      return "greedy steps";
    case Phase::factor_block:
      return "factor block";
    case Phase::block_solve:
      return "block solve";
    case Phase::block_product:
      return "block product";
    case Phase::subspace_step:
      return "subspace step";
    case Phase::convergence:
      return "convergence";
    case Phase::count_:
      break;
  }
  return "?";
}

}  // namespace gpstream

// A dense solver that requests a stop from inside its own work: when a given
// iteration starts, or when a convergence claim is checked. The driver polls
// for a stop only between iterations; this puts one where a Ctrl-C can also
// come, in the middle of an iteration's or a claim's product.
#pragma once

#include "engine/core/stop_flag.h"
#include "engine/solvers/dense_solver.h"

#include <cstdint>
#include <limits>

namespace gpstream::testing {

class StopInside final : public DenseSolver {
 public:
  static constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

  // Requests `stop` as the iteration after the first `iterations` starts,
  // and with `at_claim` when a claim is checked (the only time the driver
  // asks for the solver's error bound).
  StopInside(DenseSolver& inner, StopFlag& stop, std::uint64_t iterations, bool at_claim = false)
      : inner_(inner), stop_(stop), iterations_(iterations), at_claim_(at_claim) {}

  std::string name() const override { return inner_.name(); }
  void start(SolverState& state, std::span<const double> y) override { inner_.start(state, y); }
  void gradient_refreshed(SolverState& state) override { inner_.gradient_refreshed(state); }
  void iterate(SolverState& state, std::span<const double> y) override {
    if (state.iteration == iterations_) stop_.request();
    inner_.iterate(state, y);
  }
  bool is_direct() const override { return inner_.is_direct(); }
  std::optional<double> gradient_error_bound(const SolverState& state) const override {
    if (at_claim_) stop_.request();
    return inner_.gradient_error_bound(state);
  }

 private:
  DenseSolver& inner_;
  StopFlag& stop_;
  std::uint64_t iterations_;
  bool at_claim_;
};

}  // namespace gpstream::testing

#include "engine/solvers/mixed_precision.h"

#include <fmt/format.h>

#include <cmath>

namespace gpstream {
namespace {
constexpr double kSinglePrecisionNoiseFloor = 64.0;  // × √n·2⁻²⁴: the least σ²/s² single precision takes
constexpr double kSingleUnitRoundoff = 0x1p-24;
}  // namespace

PrecisionPlan plan_precision(const SolverState& state, bool asked, const KernelMatrix& kernel, double signal,
                             const std::string& products) {
  if (has_precision_record(state) || state.iteration > 0) {  // resumed: as the run it continues
    const bool single = precision_record(state).single;
    return {single, fmt::format("precision: {} (as the checkpoint's run)", single ? "single" : "double")};
  }
  if (!asked) return {false, "precision: double (as `precision` asks)"};
  if (kernel.column_cache() != nullptr)
    return {false, "precision: double (auto: the kernel-column cache is on, and its columns are exact)"};
  const double noise = kernel.kernel().noise_variance();
  const double floor =
      kSinglePrecisionNoiseFloor * std::sqrt(static_cast<double>(kernel.partition().global_rows)) * kSingleUnitRoundoff;
  if (noise < floor * signal) {
    return {false, fmt::format("precision: double (auto: sigma^2/s^2 = {:.2g} is below {:.2g}, where single "
                               "precision's rounding of the kernel entries would not be small against the noise)",
                               noise / signal, floor)};
  }
  return {true, fmt::format("precision: single for {} (auto: twice the kernel entries per second; the final "
                            "residual computed exactly in double)",
                            products)};
}

void start_precision(SolverState& state, bool planned) {
  PrecisionRecord record = precision_record(state);
  if (record.fell_back_at == 0) record.single = planned;
  set_precision_record(state, record);
}

void fall_back_to_double(SolverState& state) {
  PrecisionRecord record = precision_record(state);
  record.single = false;
  record.fell_back_at = state.iteration;
  set_precision_record(state, record);
}

}  // namespace gpstream

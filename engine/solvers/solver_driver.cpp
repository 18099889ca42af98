#include "engine/solvers/solver_driver.h"

#include "engine/core/context.h"
#include "engine/core/error.h"
#include "engine/linalg/reproducible_norm.h"
#include "engine/solvers/conditioning.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

namespace gpstream {
namespace {
// A single-precision run claims convergence at this fraction of the
// tolerance: its maintained measure drifts from the exact one by the
// entries' rounding, and the margin lets one exact product confirm the
// claim rather than fail it by a hair (docs/benchmarks.md, "Single precision").
constexpr double kSinglePrecisionClaim = 0.9;
// A single-precision run whose relative residual grows past this (it starts
// at 1, and descent lowers it) has diverged.
constexpr double kSinglePrecisionDivergence = 2.0;
}  // namespace

double refresh_gradient(KernelMatrix& kernel, SolverState& state, std::span<const double> y, OnStopRequest on_stop) {
  Communicator& ranks = kernel.context().communicator();
  std::vector<double> exact(state.alpha.size());
  // K̄ times every rank's α, for this rank's rows.
  const std::vector<double> alpha = ranks.size() == 1 ? std::vector<double>() : ranks.all_gather(state.alpha);
  const double* weights = ranks.size() == 1 ? state.alpha.data() : alpha.data();
  if (on_stop == OnStopRequest::finish) {
    kernel.multiply(weights, exact.data());
  } else if (!kernel.multiply_unless_stopped(weights, exact.data())) {
    throw StopRequested();
  }
  double drift = 0.0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    exact[i] -= y[i];
    drift = std::max(drift, std::abs(exact[i] - state.gradient[i]));
  }
  state.gradient = std::move(exact);
  return ranks.max(drift);
}

DenseSolverRun::DenseSolverRun(DenseSolver& solver, KernelMatrix& kernel, SolverState& state, std::span<const double> y)
    : solver_(solver), kernel_(kernel), state_(state), y_(y) {
  GPSTREAM_CHECK(
      state.alpha.size() == kernel.size() && state.gradient.size() == kernel.size() && y.size() == kernel.size(),
      "solver state for {} rows does not fit a problem of {} rows", state.alpha.size(), kernel.size());
  target_norm_ = reproducible_norm(y, kernel.context().communicator());
}

RunCounters counters_of(const SolverState& state) {
  return {state.iteration, state.elapsed_seconds, state.kernel_evaluations};
}

void set_counters_of(SolverState& state, const RunCounters& counters) {
  state.iteration = counters.iteration;
  state.elapsed_seconds = counters.elapsed_seconds;
  state.kernel_evaluations = counters.kernel_evaluations;
}

RunCounters DenseSolverRun::counters() const { return counters_of(state_); }

void DenseSolverRun::set_counters(const RunCounters& counters) { set_counters_of(state_, counters); }

// Over all ranks: each holds its rows of α, g and y.
double DenseSolverRun::objective() const {
  double value = gpstream::objective(state_, y_);
  kernel_.context().communicator().sum(std::span(&value, 1));
  return value;
}

double DenseSolverRun::convergence_measure() const {
  const ScopedPhase phase(kernel_.context().phase_times(), Phase::convergence);
  return relative_residual(state_.gradient, target_norm_, kernel_.context().communicator());
}

double DenseSolverRun::after_iteration(const StoppingRule& rule) {
  if (solver_.single_precision(state_) && !(convergence_measure() <= kSinglePrecisionDivergence)) restart_in_double();
  if (rule.refresh_every == 0 || state_.iteration % rule.refresh_every != 0 || solver_.is_direct()) return -1.0;
  const double drift = refresh_gradient(kernel_, state_, y_);
  solver_.gradient_refreshed(state_);
  return drift;
}

void DenseSolverRun::check_tolerance(double tolerance) {
  if (!solver_.is_direct()) check_tolerance_attainable(kernel_, y_, tolerance);
}

void DenseSolverRun::restart_in_double() {
  kernel_.context().warn(fmt::format(
      "single precision: |g|/|y| grew to {:.3g} by iteration {}: the kernel entries' rounding is not small against "
      "the noise here; starting again from alpha = 0 in double precision",
      convergence_measure(), state_.iteration));
  solver_.use_double_precision(state_);
  std::fill(state_.alpha.begin(), state_.alpha.end(), 0.0);
  std::transform(y_.begin(), y_.end(), state_.gradient.begin(), [](double value) { return -value; });
  solver_.start(state_, y_);
}

double DenseSolverRun::claim_level(double tolerance) const {
  return solver_.single_precision(state_) ? kSinglePrecisionClaim * tolerance : tolerance;
}

std::optional<Certificate> DenseSolverRun::certify(double tolerance) {
  Certificate certificate;
  if (solver_.single_precision(state_)) {
    certificate.drift = refresh_gradient(kernel_, state_, y_, OnStopRequest::drop);
    solver_.gradient_refreshed(state_);
    certificate.measure = convergence_measure();
    PrecisionRecord record = precision_record(state_);
    ++record.exact_residuals;
    set_precision_record(state_, record);
    if (certificate.measure > tolerance) {
      solver_.use_double_precision(state_);
      certificate.fell_back_to_double = true;
    }
    return certificate;
  }
  if (const std::optional<double> bound = solver_.gradient_error_bound(state_); bound && target_norm_ > 0.0) {
    // ‖K̂α − y‖₂ ≤ ‖g‖₂ + √n·β; the margin covers the rounding of the bound's own arithmetic.
    const double rows = static_cast<double>(kernel_.partition().global_rows);
    const double slack = std::sqrt(rows) * *bound * (1.0 + 1e-6) / target_norm_;
    // A bound this small proves the claim, now or within a few more iterations (far cheaper than the product).
    if (slack <= 0.5 * tolerance) {
      certificate.measure = convergence_measure();
      certificate.error_bound = slack;
      return certificate;
    }
  }
  certificate.drift = refresh_gradient(kernel_, state_, y_, OnStopRequest::drop);
  solver_.gradient_refreshed(state_);
  certificate.measure = convergence_measure();
  if (certificate.measure <= tolerance) return certificate;
  // K̄|α| over all n columns, for this rank's rows: a second exact product, paid at convergence claims only.
  Communicator& ranks = kernel_.context().communicator();
  std::vector<double> magnitude = ranks.size() == 1 ? state_.alpha : ranks.all_gather(state_.alpha);
  for (double& value : magnitude) value = std::abs(value);
  std::vector<double> products(state_.alpha.size());
  if (!kernel_.multiply_unless_stopped(magnitude.data(), products.data())) throw StopRequested();
  certificate.rounding_floor = residual_rounding_floor(products, target_norm_, ranks);
  certificate.largest_weight = ranks.max(*std::max_element(magnitude.begin(), magnitude.end()));
  return certificate;
}

namespace {

// Failed certifications after which the maintained measure is taken to
// drift faster than the method progresses.
constexpr int kCertificationAttempts = 3;

// The run's clock and counts, from where it started (a resumed run: its
// checkpoint's), and the report of each iteration made from them.
class RunReporter {
 public:
  RunReporter(IterativeMethod& method, KernelMatrix& kernel)
      : method_(method),
        kernel_(kernel),
        ranks_(kernel.context().communicator()),
        start_(Clock::now()),
        before_(method.counters()),
        evaluations_before_(kernel.kernel_evaluations()),
        cache_before_(kernel.column_cache() != nullptr ? kernel.column_cache()->statistics()
                                                       : ColumnCacheStatistics{}) {}

  // The slowest rank's clock, so that all ranks report (and stop on) the same.
  double job_seconds() const {
    return before_.elapsed_seconds + ranks_.max(std::chrono::duration<double>(Clock::now() - start_).count());
  }

  // The method's counters brought up to now (every rank's evaluations), and the report of where it stands.
  IterationReport report(double drift) {
    RunCounters counters = method_.counters();
    counters.elapsed_seconds = job_seconds();
    std::uint64_t evaluations = kernel_.kernel_evaluations() - evaluations_before_;
    ranks_.sum(std::span(&evaluations, 1));
    counters.kernel_evaluations = before_.kernel_evaluations + evaluations;
    method_.set_counters(counters);
    const auto [done, total] = method_.work_done();
    IterationReport current{.iteration = counters.iteration,
                            .elapsed_seconds = counters.elapsed_seconds,
                            .objective = method_.objective(),
                            .convergence_measure = method_.convergence_measure(),
                            .kernel_evaluations = counters.kernel_evaluations,
                            .gradient_drift = drift,
                            .done = done,
                            .total = total,
                            .point = {},
                            .column_cache_lookups = 0,
                            .column_cache_hits = 0,
                            .column_cache_disk_hits = 0,
                            .column_cache_disk_bytes = 0,
                            .column_cache_seconds_saved = 0};
    if (const KernelColumnCache* cache = kernel_.column_cache()) {
      const ColumnCacheStatistics& now = cache->statistics();
      current.column_cache_lookups = now.lookups - cache_before_.lookups;
      current.column_cache_hits = now.hits - cache_before_.hits;
      current.column_cache_disk_hits = now.disk_hits - cache_before_.disk_hits;
      current.column_cache_disk_bytes = now.disk_bytes_read - cache_before_.disk_bytes_read;
      current.column_cache_seconds_saved = now.seconds_saved - cache_before_.seconds_saved;
    }
    return current;
  }

 private:
  using Clock = std::chrono::steady_clock;
  IterativeMethod& method_;
  KernelMatrix& kernel_;
  Communicator& ranks_;
  const Clock::time_point start_;
  const RunCounters before_;
  const std::uint64_t evaluations_before_;
  const ColumnCacheStatistics cache_before_;
};

// NaN compares false with everything: without this check a NaN measure
// would never meet the tolerance and the run would never end. (+inf is a
// measure not taken yet, as CholQR's decrease before its first epoch; a
// dense gradient that overflows makes the objective non-finite.)
void check_finite(const IterationReport& r) {
  GPSTREAM_CHECK(!std::isnan(r.convergence_measure) && std::isfinite(r.objective),
                 "the run diverged at iteration {}: the convergence measure is {} and the objective {}; the data or "
                 "the hyperparameters produce values that are not finite (check for NaN/inf in the inputs, extreme "
                 "lengthscales, or a noise variance too small for K̄ to be positive definite)",
                 r.iteration, r.convergence_measure, r.objective);
}

// Whether the claim in `claim` holds exactly (its measure replaced by the
// exact one when one was computed); throws when it cannot be made to.
bool certified(IterativeMethod& method, KernelMatrix& kernel, const StoppingRule& rule, IterationReport& claim,
               int& failed_certifications) {
  const std::optional<Certificate> certificate = method.certify(rule.tolerance);
  if (!certificate) return true;
  // Proved by the bound, or not yet: then the run goes on, quietly, until it is.
  if (certificate->error_bound >= 0.0) return certificate->measure + certificate->error_bound <= rule.tolerance;
  const double maintained = claim.convergence_measure;
  claim.convergence_measure = certificate->measure;
  if (certificate->measure <= rule.tolerance) return true;
  Context& context = kernel.context();
  if (certificate->fell_back_to_double) {
    context.warn(fmt::format(
        "single precision: at iteration {} the exact relative residual is {:.3g} (the maintained one {:.3g}, tol "
        "{:g}): continuing from it in double precision",
        claim.iteration, certificate->measure, maintained, rule.tolerance));
    return false;
  }
  const std::string evidence = fmt::format(
      "at iteration {} the exact relative residual |K̄α − y|/|y| is {:.3g} (the maintained one {:.3g}), and with "
      "weights this large (|alpha| up to {:.3g}) it cannot be computed below about {:.3g} in double precision",
      claim.iteration, certificate->measure, maintained, certificate->largest_weight, certificate->rounding_floor);
  if (method.is_direct() || certificate->rounding_floor > rule.tolerance ||
      ++failed_certifications >= kCertificationAttempts) {
    throw_ill_conditioned(kernel.kernel(), rule.tolerance, evidence);
  }
  context.warn(fmt::format("{:.3g} met the tolerance, but the exact residual is {:.3g}: continuing from it", maintained,
                           certificate->measure));
  return false;
}

// Why the run stops before its next iteration, for any reason but convergence; nullopt: it goes on.
std::optional<StopReason> budget_stop(IterativeMethod& method, const StoppingRule& rule, const RunReporter& clock,
                                      const IterationReport& current, Context& context) {
  if (method.complete()) return StopReason::complete;
  if (current.iteration >= rule.max_iterations) return StopReason::iteration_limit;
  // Decided alike on every rank: by the slowest rank's clock, and a stop request to any rank stops all.
  if (clock.job_seconds() >= rule.time_limit_seconds) return StopReason::time_limit;
  if (context.communicator().any(context.stop_requested())) return StopReason::interrupted;
  return std::nullopt;
}

// The loop of run_iterations, inside the Context's arena.
SolverRun drive(IterativeMethod& method, KernelMatrix& kernel, const StoppingRule& rule, Context& context,
                bool fresh_start) {
  RunReporter reporter(method, kernel);
  if (fresh_start) {
    method.check_tolerance(rule.tolerance);
    method.start();
  }
  int failed_certifications = 0;
  IterationReport current = reporter.report(-1.0);
  check_finite(current);
  for (RunObserver* observer : context.observers()) observer->on_start(current);

  StopReason reason = StopReason::converged;
  try {
    for (;;) {
      if (method.converges() && current.convergence_measure <= method.claim_level(rule.tolerance) &&
          certified(method, kernel, rule, current, failed_certifications)) {
        // Reported with the time the check took: an exact product costs as much as thousands of iterations.
        current = reporter.report(current.gradient_drift);
        reason = StopReason::converged;
        break;
      }
      if (const std::optional<StopReason> stop = budget_stop(method, rule, reporter, current, context)) {
        reason = *stop;
        break;
      }
      method.iterate();
      RunCounters counters = method.counters();
      ++counters.iteration;
      method.set_counters(counters);
      const double drift = method.after_iteration(rule);
      current = reporter.report(drift);
      check_finite(current);
      for (RunObserver* observer : context.observers()) observer->on_iteration(current);
      if (method.is_direct()) {
        // A direct method's answer is final: it holds, or the run fails.
        certified(method, kernel, rule, current, failed_certifications);
        reason = StopReason::solved_directly;
        break;
      }
    }
  } catch (const StopRequested&) {
    // A product over all n² entries was dropped part-way (on every rank alike), its iteration or claim undone:
    // the state is that of the last iteration, as a checkpoint keeps it.
    current = reporter.report(current.gradient_drift);
    reason = StopReason::interrupted;
  }
  for (RunObserver* observer : context.observers()) observer->on_stop(current, reason);
  return {reason, current};
}

}  // namespace

SolverRun run_iterations(IterativeMethod& method, KernelMatrix& kernel, const StoppingRule& rule, bool fresh_start) {
  Context& context = kernel.context();
  return context.execute([&] { return drive(method, kernel, rule, context, fresh_start); });
}

SolverRun run_solver(DenseSolver& solver, KernelMatrix& kernel, SolverState& state, std::span<const double> y,
                     const StoppingRule& rule, bool fresh_start) {
  DenseSolverRun run(solver, kernel, state, y);
  return run_iterations(run, kernel, rule, fresh_start);
}

}  // namespace gpstream

#include "engine/hyper/stochastic_gradient.h"
#include "engine/kernels/parameter_gradient_contraction.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/row_source_utilities.h"
#include "engine/kernels/kernel_matrix.h"
#include "engine/linalg/column_norms.h"
#include "engine/solvers/block_coordinate_descent.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <numeric>

namespace gpstream {
namespace {

// A standard normal value for row `row` (numbered over all n) of probe
// `probe`: from a hash of the seed, the row and the probe (splitmix64's
// finaliser, then Box–Muller), so that any rank makes any row's values
// without drawing the others'.
double noise_value(std::uint64_t seed, std::size_t row, std::size_t probe) {
  const auto mix = [](std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  const std::uint64_t key = mix(seed * 0x9e3779b97f4a7c15ULL + probe + 1) ^ static_cast<std::uint64_t>(row);
  const std::uint64_t a = mix(2 * key + 1), b = mix(2 * key + 2);
  const double u = (static_cast<double>(a >> 11) + 0.5) * 0x1.0p-53, v = static_cast<double>(b >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
}

}  // namespace

std::size_t StochasticGradient::bytes(std::size_t n, std::size_t probes) {
  // All n rows of the solutions and of the contraction's right factor; a
  // rank's rows (at most n) of the right-hand sides, the gradients, the
  // solutions being updated and the left factor.
  return checked_multiply(6, checked_multiply(n, probes + 1, sizeof(double)));
}

StochasticGradient::StochasticGradient(Context& context, RowSource& rows, const RowPartition& partition,
                                       const StochasticGradientOptions& options)
    : context_(context), rows_(rows), partition_(partition), options_(options) {
  GPSTREAM_CHECK(options.groups >= 2 && options.probes % options.groups == 0,
                 "{} probe vectors do not split into {} groups of equal size (at least 2 groups)", options.probes,
                 options.groups);
  GPSTREAM_CHECK(options.tolerance > 0.0 && options.alpha_tolerance > 0.0,
                 "the solves' tolerances must be positive, not {} and {} (α's)", options.tolerance,
                 options.alpha_tolerance);
  GPSTREAM_CHECK_ARGUMENT(options.features > 0, "the probes need at least one random feature");
  GPSTREAM_CHECK(rows.has_targets(), "the training rows have no targets to learn hyperparameters from");
  memory_ = context.memory().reserve(
      fmt::format("the all-rows gradient's {} solves of {} rows", columns(), partition.global_rows),
      bytes(partition.global_rows, options.probes), "use fewer probe vectors, or learn on subsets only");
  targets_ = read_all_targets(rows);
}

void StochasticGradient::restore_solutions(std::vector<double> solutions) {
  GPSTREAM_CHECK(solutions.empty() || solutions.size() == checked_multiply(partition_.global_rows, columns()),
                 "{} saved solution values for {} rows of {} columns", solutions.size(), partition_.global_rows,
                 columns());
  solutions_ = std::move(solutions);
}

std::vector<double> StochasticGradient::right_hand_sides(const KernelHyperparameters& kernel) {
  const std::size_t d = rows_.columns(), local = rows_.rows(), c = columns(), t = options_.probes;
  const bool pathwise = options_.probe_kind == StochasticGradientOptions::Probes::pathwise;
  if (pathwise && samples_.empty()) {
    for (std::size_t probe = 0; probe < t; ++probe) {
      samples_.emplace_back(kernel, d, options_.features,
                            options_.seed * 0x9e3779b97f4a7c15ULL + probe + 1);  // each probe its own features
    }
  }
  const double noise = std::sqrt(kernel.noise_variance);
  std::vector<double> sides(checked_multiply(local, c));
  constexpr std::size_t kBlockRows = 4096;
  std::vector<double> x(checked_multiply(kBlockRows, d)), f(kBlockRows);
  for (std::size_t first = 0; first < local; first += kBlockRows) {
    const std::size_t count = std::min(kBlockRows, local - first);
    const double* block = rows_.resident_rows() != nullptr ? rows_.resident_rows() + first * d : x.data();
    if (rows_.resident_rows() == nullptr) rows_.read_rows(first, count, x.data(), nullptr);
    for (std::size_t i = 0; i < count; ++i) sides[(first + i) * c] = targets_[first + i];
    for (std::size_t probe = 0; probe < t; ++probe) {
      if (pathwise) samples_[probe].evaluate(kernel, block, count, f.data());
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t row = first + i;
        const double value = noise_value(options_.seed, partition_.first + row, probe);
        sides[row * c + 1 + probe] = pathwise ? f[i] + noise * value : (value < 0.0 ? -1.0 : 1.0);
      }
    }
  }
  return sides;
}

namespace {

// The estimate from the blocks (row 0: α's part; rows 1 … G: each group of
// probes' part of the trace term), and its error's covariance from the
// groups: each group's part alone is an unbiased estimate of the trace term,
// T_g = G · block_g, of which the estimate takes the mean.
void combine_groups(const std::vector<double>& blocks, std::size_t parameters, std::size_t groups,
                    GradientEstimate& result) {
  result.gradient.assign(parameters, 0.0);
  for (std::size_t block = 0; block <= groups; ++block)
    for (std::size_t p = 0; p < parameters; ++p) result.gradient[p] += blocks[block * parameters + p];
  std::vector<double> trace(parameters, 0.0);  // Σ_g block_g = the mean of T_g
  for (std::size_t g = 1; g <= groups; ++g)
    for (std::size_t p = 0; p < parameters; ++p) trace[p] += blocks[g * parameters + p];
  // Cov(mean T_g) = S/G, S the sample covariance of T_g: G/(G − 1) Σ_g (block_g − trace/G)(·)ᵀ.
  result.covariance.assign(parameters * parameters, 0.0);
  const double share = 1.0 / static_cast<double>(groups);
  const double scale = static_cast<double>(groups) / static_cast<double>(groups - 1);
  for (std::size_t g = 1; g <= groups; ++g) {
    for (std::size_t p = 0; p < parameters; ++p) {
      const double ep = blocks[g * parameters + p] - share * trace[p];
      for (std::size_t q = 0; q < parameters; ++q)
        result.covariance[p * parameters + q] += scale * ep * (blocks[g * parameters + q] - share * trace[q]);
    }
  }
}

}  // namespace

StochasticGradient::ProbeSolves StochasticGradient::solve_probes(KernelMatrix& matrix,
                                                                 const KernelHyperparameters& hyperparameters,
                                                                 const SolveProgress& progress,
                                                                 GradientEstimate& result) {
  const auto started = std::chrono::steady_clock::now();
  const std::size_t n = partition_.global_rows, local = rows_.rows(), c = columns();
  Communicator& ranks = context_.communicator();

  // B = [y Z], each probe's column scaled to unit norm and y's to tolerance / alpha_tolerance: B̃ = B N⁻¹,
  // solved for Ũ = U N⁻¹ until every column of G̃ = K̄Ũ − B̃ has norm ≤ tolerance.
  ProbeSolves solves;
  solves.sides = right_hand_sides(hyperparameters);
  std::vector<double> norms = column_squared_norms(solves.sides, local, c);
  ranks.sum(norms);
  for (double& norm : norms) {
    norm = std::sqrt(norm);
    GPSTREAM_CHECK(norm > 0.0 && std::isfinite(norm),
                   "a right-hand side of the all-rows gradient has norm {}: check the targets", norm);
  }
  norms[0] *= std::min(1.0, options_.alpha_tolerance / options_.tolerance);
  // G = K̄Ũ − B̃, from the last estimate's solutions (all rows, the same on every rank) or from Ũ = 0.
  std::vector<double>& gradient = solves.residuals;
  gradient.assign(checked_multiply(local, c), 0.0);
  std::vector<double> solution(gradient.size(), 0.0);
  if (!solutions_.empty()) {
    std::vector<double> start(solutions_);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t column = 0; column < c; ++column) start[i * c + column] /= norms[column];
    matrix.multiply(start.data(), c, gradient.data());
    std::copy_n(start.begin() + static_cast<std::ptrdiff_t>(partition_.first * c), local * c, solution.begin());
  }
  for (std::size_t i = 0; i < local; ++i)
    for (std::size_t column = 0; column < c; ++column)
      gradient[i * c + column] -= solves.sides[i * c + column] / norms[column];
  const auto largest_residual = [&] {
    std::vector<double> squares = column_squared_norms(gradient, local, c);
    ranks.sum(squares);
    return std::sqrt(*std::max_element(squares.begin(), squares.end()));  // relative to the probes' tolerance
  };

  BlockCoordinateDescent descent(matrix, make_active_set_policy("gbcd", options_.candidates), options_.active_set_size);
  std::mt19937_64 random(options_.seed);
  AuxiliaryState auxiliary;
  std::vector<double> delta;
  result.largest_residual = largest_residual();
  while (result.largest_residual > options_.tolerance && result.iterations < options_.max_iterations) {
    const ActiveSet& active = descent.iterate_columns({gradient.data(), c}, random, auxiliary, delta);
    for (std::size_t j = 0; j < active.indices.size(); ++j) {
      if (!partition_.owns(active.indices[j])) continue;
      double* row = solution.data() + partition_.local(active.indices[j]) * c;
      for (std::size_t column = 0; column < c; ++column) row[column] += delta[j * c + column];
    }
    ++result.iterations;
    result.largest_residual = largest_residual();
    if (progress) progress(result.iterations, result.largest_residual);
  }
  result.solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (result.largest_residual > options_.tolerance) {
    context_.warn(
        fmt::format("the all-rows gradient's solves stopped after {} iterations at {:.2g} times their relative "
                    "residuals' tolerance ({:g}; α's {:g}): this estimate is biased by about as much",
                    result.iterations, result.largest_residual / options_.tolerance, options_.tolerance,
                    std::min(options_.alpha_tolerance, options_.tolerance)));
  }
  // Back to U = Ũ N and the residuals R = G N, all rows of U on every rank.
  for (std::size_t i = 0; i < local; ++i) {
    for (std::size_t column = 0; column < c; ++column) {
      solution[i * c + column] *= norms[column];
      gradient[i * c + column] *= norms[column];
    }
  }
  if (matrix.distributed()) {
    std::vector<std::size_t> all(n);
    std::iota(all.begin(), all.end(), std::size_t{0});
    solutions_ = matrix.exchange().collect_values(all, solution, c);
  } else {
    solutions_ = std::move(solution);
  }
  return solves;
}

std::vector<double> StochasticGradient::trace_blocks(KernelMatrix& matrix, const KernelHyperparameters& hyperparameters,
                                                     const ProbeSolves& solves) {
  const std::size_t n = partition_.global_rows, local = rows_.rows(), c = columns(), t = options_.probes;
  const Kernel& kernel = matrix.kernel();
  // The contraction's factors, W₀ = −½ααᵀ and for each group g of probes W_g = (½/t) U_g Z_gᵀ (Hutchinson's) or
  // (½/t) V_g V_gᵀ (pathwise: V = K̄⁻¹Z for prior draws Z), and per block
  // the dot products σ²'s and s²'s parts take: [uᵀu, uᵀb, uᵀr] summed over its columns (u = α, b = y; or
  // u = v, b = z), r = K̄u − b.
  const std::size_t groups = options_.groups, per_group = t / groups;
  std::vector<double> left(checked_multiply(local, c));
  std::vector<double> dots(3 * (1 + groups), 0.0);
  for (std::size_t i = 0; i < local; ++i) {
    const double* u = solutions_.data() + (partition_.first + i) * c;
    for (std::size_t column = 0; column < c; ++column) {
      const std::size_t block = column == 0 ? 0 : 1 + (column - 1) / per_group;
      left[i * c + column] = column == 0 ? -0.5 * u[0] : 0.5 / static_cast<double>(t) * u[column];
      dots[3 * block] += u[column] * u[column];
      dots[3 * block + 1] += u[column] * solves.sides[i * c + column];
      dots[3 * block + 2] += u[column] * solves.residuals[i * c + column];
    }
  }
  context_.communicator().sum(dots);
  std::vector<std::size_t> widths(1 + groups, per_group);
  widths[0] = 1;
  // The right factor: [α V] itself for pathwise probes (W_g = (½/t)V_gV_gᵀ), [α Z] for Hutchinson's (W_g = (½/t)U_gZ_gᵀ).
  const bool pathwise = options_.probe_kind == StochasticGradientOptions::Probes::pathwise;
  std::vector<double> right;
  if (!pathwise) {
    right.resize(checked_multiply(n, c));
    for (std::size_t i = 0; i < n; ++i) {
      right[i * c] = solutions_[i * c];
      for (std::size_t probe = 0; probe < t; ++probe)
        right[i * c + 1 + probe] = noise_value(options_.seed, i, probe) < 0.0 ? -1.0 : 1.0;
    }
  }
  std::vector<double> blocks =
      contract_parameter_gradient(matrix, left.data(), pathwise ? solutions_.data() : right.data(), c, widths);

  // σ²'s part, ∂K̄/∂log σ² = σ²I: ∓½σ² uᵀu. For a single kernel s²'s too, ∂K̄/∂log s² = K = K̄ − σ²I:
  // −½(yᵀK̄⁻¹y − σ²αᵀα) with yᵀK̄⁻¹y ≈ 2αᵀy − αᵀK̄α = αᵀy − αᵀr, whose error is second order in the
  // solve's (the contraction's is first order, which at a loose tolerance dominates s²'s); and for
  // the probes ½(zᵀK̄⁻¹z − σ²vᵀv) with zᵀK̄⁻¹z replaced by its expectation n, a control variate: its
  // own spread (variance 2n) would otherwise swamp s²'s estimate.
  const std::size_t parameters = kernel.parameter_count(), noise_index = kernel.noise_index();
  const std::size_t signal_index = kernel.signal_index();
  const double noise = kernel.noise_variance();
  // For Hutchinson's probes σ²'s trace part is ½σ² zᵀK̄⁻¹z ≈ ½σ²(uᵀz − uᵀr) per probe (second order), and
  // s²'s ½(zᵀz − σ² zᵀK̄⁻¹z) with zᵀz = n.
  for (std::size_t block = 0; block <= groups; ++block) {
    const double* dot = dots.data() + 3 * block;
    const bool probes = block > 0;
    const double sign = probes ? 0.5 / static_cast<double>(t) : -0.5;
    const double inverse_quadratic = probes && !pathwise ? dot[1] - dot[2] : dot[0];  // σ⁻² × σ²'s part
    blocks[block * parameters + noise_index] = sign * noise * inverse_quadratic;
    if (hyperparameters.term_count() > 1) continue;
    const double quadratic = probes ? static_cast<double>(per_group) * static_cast<double>(n) : dot[1] - dot[2];
    blocks[block * parameters + signal_index] = sign * (quadratic - noise * inverse_quadratic);
  }
  return blocks;
}

GradientEstimate StochasticGradient::estimate(const KernelHyperparameters& hyperparameters,
                                              const SolveProgress& progress) {
  const auto started = std::chrono::steady_clock::now();
  const std::unique_ptr<Kernel> kernel = make_kernel(hyperparameters, rows_.columns());
  KernelMatrix matrix(context_, rows_, partition_, *kernel);
  GradientEstimate result;
  const ProbeSolves solves = solve_probes(matrix, hyperparameters, progress, result);
  combine_groups(trace_blocks(matrix, hyperparameters, solves), kernel->parameter_count(), options_.groups, result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace gpstream

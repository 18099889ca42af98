#include "engine/sparse/greedy_basis_selection.h"
#include "engine/kernels/cross_products.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/cholesky.h"
#include "engine/sparse/sparse_fit.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace gpstream {
namespace {

// A candidate whose new pivot falls below this fraction of its diagonal is
// (numerically) in the span of the basis already: adding it would make the
// factor singular. Ten times IncrementalCholesky's own floor, so that a
// candidate accepted here is accepted by append() too.
constexpr double kPivotFloor = 1e-11;
// Steps in a row without an acceptable candidate before the selection gives up.
constexpr std::size_t kFruitlessStepLimit = 8;

std::vector<double> as_doubles(const std::vector<std::size_t>& values) {
  return std::vector<double>(values.begin(), values.end());
}

double squared_norm(const std::vector<double>& v) {
  double sum = 0.0;
  for (const double x : v) sum += x * x;
  return sum;
}

// Column j of a row-major matrix of `columns` columns.
std::vector<double> column_of(const std::vector<double>& matrix, std::size_t columns, std::size_t j) {
  std::vector<double> column(matrix.size() / columns);
  for (std::size_t i = 0; i < column.size(); ++i) column[i] = matrix[i * columns + j];
  return column;
}

// A candidate's score, and what it brings if chosen.
struct CandidateScore {
  double value = -std::numeric_limits<double>::infinity();
  double z = 0.0;                // the new z component, sggp
  double trace_reduction = 0.0;  // ‖(K − K̃)[:, j]‖² / (K − K̃)_jj
  double s_jj = 0.0;             // σ² + ‖φ_j‖², the new diagonal of S
};

// r_j = k_jj + jitter − ‖u_j‖² for the c columns of U = L_K⁻¹K(B, C) (m×c): each candidate's Nyström residual
// variance, what of it the basis cannot express.
std::vector<double> residual_variances(const std::vector<double>& u, const std::vector<double>& k_cc, double jitter) {
  const std::size_t c = k_cc.size(), m = c == 0 ? 0 : u.size() / c;
  std::vector<double> residual(c);
  for (std::size_t j = 0; j < c; ++j) {
    double u_norm = 0.0;
    for (std::size_t i = 0; i < m; ++i) u_norm += u[i * c + j] * u[i * c + j];
    residual[j] = k_cc[j] + jitter - u_norm;
  }
  return residual;
}

// Keerthi & Chu's score of candidate j for mpgp: only β_j moves; the objective falls by
// (c_jᵀr − σ²k_jBᵀβ)² / (2 A_jj), r = y − K_NBβ. With c_j = R_j + Φu_j, Φᵀy = L_S z and
// ΦᵀΦβ̃ = L_S z − σ²β̃, the slope is R_jᵀy − (ΦᵀR_j)ᵀβ̃ (`r_phi_beta` its second term), and
// A_jj = σ²k_jj + ‖c_j‖² = σ²k_jj + ‖R_j‖² + 2u_jᵀΦᵀR_j + ‖Φu_j‖². U and ΦᵀR are m×c; `s_u` m values of room.
double matching_pursuit_score(const IncrementalCholesky& whitened, const std::vector<double>& u,
                              const CrossProducts& residual, std::size_t j, double noise, double k_jj,
                              double r_phi_beta, std::vector<double>& s_u) {
  const std::size_t m = s_u.size(), c = residual.q_squared_norms.size();
  double u_cross = 0.0, u_s_u = 0.0, u_u = 0.0;
  for (std::size_t i = 0; i < m; ++i) {
    u_cross += u[i * c + j] * residual.pq[i * c + j];
    u_u += u[i * c + j] * u[i * c + j];
  }
  // ‖Φu‖² = uᵀ(S − σ²I)u = ‖L_Sᵀu‖² − σ²‖u‖².
  for (std::size_t i = 0; i < m; ++i) s_u[i] = u[i * c + j];
  whitened.multiply_transposed(s_u.data());
  for (const double value : s_u) u_s_u += value * value;
  const double a_jj = noise * k_jj + residual.q_squared_norms[j] + 2.0 * u_cross + std::max(u_s_u - noise * u_u, 0.0);
  const double slope = residual.q_times_w[j] - r_phi_beta;
  return slope * slope / a_jj;
}

}  // namespace

std::string basis_criterion_name(BasisCriterion criterion) {
  switch (criterion) {
    case BasisCriterion::sgma:
      return "sgma";
    case BasisCriterion::mpgp:
      return "mpgp";
    case BasisCriterion::sggp:
      return "sggp";
  }
  return "unknown";
}

GreedyBasisSelection::GreedyBasisSelection(KernelMatrix& kernel, std::span<const double> y,
                                           const GreedyBasisOptions& options, SolverState& state)
    : kernel_(kernel),
      y_(y),
      options_(options),
      state_(state),
      d_(kernel.rows().columns()),
      noise_(kernel.kernel().noise_variance()),
      whitened_(options.basis_size),
      kernel_factor_(options.basis_size),
      dual_factor_(options.criterion == BasisCriterion::sggp ? options.basis_size : 0) {
  const std::size_t n = kernel.partition().global_rows;  // basis rows are numbered over all n
  GPSTREAM_CHECK_ARGUMENT(options.basis_size > 0, "the basis size must be at least 1");
  GPSTREAM_CHECK(options.basis_size <= n, "a basis of {} rows is larger than the {} training rows", options.basis_size,
                 n);
  GPSTREAM_CHECK_ARGUMENT(options.candidates > 0, "the number of candidates per step must be at least 1");
  GPSTREAM_CHECK(y.size() == kernel.size(), "{} targets for {} training rows", y.size(), kernel.size());
  const std::size_t capacity = options.basis_size;
  in_basis_.assign(n, 0);
  if (options.criterion == BasisCriterion::sggp) in_dual_basis_.assign(n, 0);
  for (const double value : y) half_squared_norm_y_ += 0.5 * value * value;
  if (const std::optional<double> constant = kernel.kernel().constant_self_covariance()) {
    trace_kernel_ = *constant * static_cast<double>(kernel.size());
  } else {
    std::vector<double> diagonal(kernel.size());
    kernel.diagonal(diagonal.data());
    for (const double value : diagonal) trace_kernel_ += value - noise_;
  }
  // Distributed: each rank summed its rows.
  double sums[2] = {half_squared_norm_y_, trace_kernel_};
  kernel.context().communicator().sum(sums);
  half_squared_norm_y_ = sums[0];
  trace_kernel_ = sums[1];
  trace_residual_ = trace_kernel_;

  const auto& saved = state.auxiliary;
  if (saved.find("basis") == saved.end()) return;  // a fresh selection
  constexpr const char* kOwner = "the basis selection";
  auto get = [&](const char* name) -> const std::vector<double>& { return saved_entry(state, name, kOwner); };
  basis_ = saved_row_indices(state, "basis", n, kOwner);
  const std::size_t m = basis_.size();
  GPSTREAM_CHECK(m <= capacity, "checkpoint: a basis of {} rows exceeds the basis size {}", m, capacity);
  GPSTREAM_CHECK(get("z").size() == m, "checkpoint: the basis factors do not fit {} rows", m);
  for (const std::size_t i : basis_) in_basis_[i] = 1;
  kernel.exchange().collect_rows(basis_, basis_rows_);
  whitened_.assign_factor(get("whitened_factor"), m);
  kernel_factor_.assign_factor(get("kernel_factor"), m);
  z_ = get("z");
  update_weights();
  trace_residual_ = get("trace_residual").at(0);
  exhausted_ = get("exhausted").at(0) != 0.0;
  fruitless_steps_ = static_cast<std::size_t>(get("exhausted").at(1));
  if (options.criterion == BasisCriterion::sggp) {
    dual_basis_ = saved_row_indices(state, "dual_basis", n, kOwner);
    const std::size_t dual = dual_basis_.size();
    GPSTREAM_CHECK(dual <= capacity && get("dual_z").size() == dual, "checkpoint: the dual factors do not fit");
    for (const std::size_t i : dual_basis_) in_dual_basis_[i] = 1;
    kernel.exchange().collect_rows(dual_basis_, dual_rows_);
    dual_factor_.assign_factor(get("dual_factor"), dual);
    dual_z_ = get("dual_z");
    dual_objective_ = -0.5 * squared_norm(dual_z_);
  }
}

RunCounters GreedyBasisSelection::counters() const { return counters_of(state_); }

void GreedyBasisSelection::set_counters(const RunCounters& counters) { set_counters_of(state_, counters); }

double GreedyBasisSelection::gap() const {
  // NOTES.md "Sparse greedy GP": Q(α) ≥ Q_min = −½‖y‖² − σ²Q*_min ≥ −½‖y‖² − σ²Q*(α*).
  const double upper = objective_;
  const double lower = -(noise_ * dual_objective_ + half_squared_norm_y_);
  const double scale = std::abs(upper) + std::abs(lower);
  return scale > 0 ? 2.0 * (upper - lower) / scale : 0.0;
}

double GreedyBasisSelection::convergence_measure() const {
  if (options_.criterion == BasisCriterion::sggp) return gap();
  return trace_kernel_ > 0 ? trace_residual_ / trace_kernel_ : 0.0;
}

bool GreedyBasisSelection::complete() const {
  return exhausted_ || basis_.size() >= options_.basis_size || basis_.size() == kernel_.partition().global_rows;
}

void GreedyBasisSelection::draw(std::vector<std::size_t>& chosen, const std::vector<char>& taken,
                                std::size_t taken_count, std::size_t count) {
  const std::size_t n = taken.size();
  chosen.clear();
  const std::size_t free = n - taken_count;
  if (free <= count) {
    for (std::size_t i = 0; i < n; ++i) {
      if (!taken[i]) chosen.push_back(i);
    }
    return;
  }
  std::uniform_int_distribution<std::size_t> uniform(0, n - 1);
  while (chosen.size() < count) {
    const std::size_t i = uniform(state_.random);
    if (!taken[i] && std::find(chosen.begin(), chosen.end(), i) == chosen.end()) chosen.push_back(i);
  }
}

void GreedyBasisSelection::iterate() {
  primal_step();
  if (options_.criterion == BasisCriterion::sggp) dual_step();
}

void GreedyBasisSelection::primal_step() {
  std::vector<std::size_t> candidates;
  draw(candidates, in_basis_, basis_.size(), options_.candidates);
  const std::size_t c = candidates.size();
  if (c == 0) {
    exhausted_ = true;
    return;
  }
  const std::size_t m = basis_.size();
  std::vector<double> x_c;
  kernel_.exchange().collect_rows(candidates, x_c);

  // u_j = L_K⁻¹K(B, c_j), and the candidate's residual variance r_j = k_jj + jitter − ‖u_j‖²
  // (its Nyström residual: what of it the basis cannot express).
  std::vector<double> k_bc(m * c);  // K(B, C)
  kernel_.block(basis_rows_.data(), m, x_c.data(), c, k_bc.data());
  std::vector<double> k_cc(c);
  for (std::size_t j = 0; j < c; ++j) k_cc[j] = kernel_.kernel().self_covariance(x_c.data() + j * d_);
  kernel_.count_kernel_evaluations(m * c + c);
  std::vector<double> u(k_bc);
  kernel_factor_.solve_columns(u.data(), c, false);
  const BasisResolution resolution = basis_resolution(kernel_.kernel().hyperparameters());
  const double jitter = resolution.jitter;

  // One pass over the training rows with the candidates' residual features
  // R = K_NC − K_NB W, W = K_B⁻¹K_BC = L_K⁻ᵀU, formed row by row (so they keep
  // their digits where ‖K_Nj‖² − 2k_jᵀK_NBw_j + … would cancel): K_NBᵀR (m×c),
  // ‖R_j‖², R_jᵀy; then ΦᵀR = L_K⁻¹K_NBᵀR with the whitened features
  // Φ = K_NB L_K⁻ᵀ, and candidate j's whitened feature is φ_j = R_j/√r_j.
  // (Whitening K_NB tile by tile instead would cost O(n m²) per step.)
  std::vector<double> w(u);
  kernel_factor_.solve_columns(w.data(), c, true);
  CrossProducts residual = cross_products(kernel_, basis_rows_.data(), m, x_c.data(), c, y_.data(), 1, nullptr,
                                          m > 0 ? w.data() : nullptr, basis_);
  kernel_factor_.solve_columns(residual.pq.data(), c, false);
  const std::vector<double> residual_diagonal = residual_variances(u, k_cc, jitter);
  std::vector<double> scale(c);
  for (std::size_t j = 0; j < c; ++j) scale[j] = residual_diagonal[j] > 0 ? 1.0 / std::sqrt(residual_diagonal[j]) : 0.0;
  // Φᵀφ_j, the new column of S = σ²I + ΦᵀΦ; l_j = L_S⁻¹Φᵀφ_j.
  std::vector<double> cross(residual.pq);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < c; ++j) cross[i * c + j] *= scale[j];
  }
  std::vector<double> l(cross);
  whitened_.solve_columns(l.data(), c, false);
  // β̃ = L_S⁻ᵀz = L_Kᵀβ, the weights of the whitened features, for mpgp.
  std::vector<double> beta_whitened(m);
  whitened_.back_substitute(z_.data(), beta_whitened.data(), m);

  std::vector<CandidateScore> scores(c);
  std::vector<double> s_u(m);  // mpgp: L_Sᵀu_j
  for (std::size_t j = 0; j < c; ++j) {
    if (!(residual_diagonal[j] > 2.0 * resolution.independence_floor * k_cc[j])) continue;  // in the span of B
    double l_norm = 0.0, lz = 0.0, r_phi_beta = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      const std::size_t k = i * c + j;
      l_norm += l[k] * l[k];
      lz += l[k] * z_[i];
      r_phi_beta += residual.pq[k] * beta_whitened[i];
    }
    const double residual_squared_norm = residual.q_squared_norms[j];
    const double s_jj = noise_ + residual_squared_norm / residual_diagonal[j];
    const double pivot_squared = s_jj - l_norm;
    if (!(pivot_squared > kPivotFloor * s_jj)) continue;
    CandidateScore& score = scores[j];
    score.s_jj = s_jj;
    score.trace_reduction = residual_squared_norm / residual_diagonal[j];
    score.z = (residual.q_times_w[j] * scale[j] - lz) / std::sqrt(pivot_squared);
    switch (options_.criterion) {
      case BasisCriterion::sgma:
        score.value = score.trace_reduction;
        break;
      case BasisCriterion::mpgp:
        score.value = matching_pursuit_score(whitened_, u, residual, j, noise_, k_cc[j], r_phi_beta, s_u);
        break;
      case BasisCriterion::sggp:
        score.value = score.z * score.z;
        break;  // Q falls by ½ z_j² (eq. 12 re-fitted)
    }
  }
  const auto best = std::max_element(
      scores.begin(), scores.end(), [](const CandidateScore& p, const CandidateScore& q) { return p.value < q.value; });
  if (!std::isfinite(best->value)) {
    // Every candidate is (numerically) in the span of the basis already.
    if (++fruitless_steps_ >= kFruitlessStepLimit) exhausted_ = true;
    return;
  }
  fruitless_steps_ = 0;
  const std::size_t j = static_cast<std::size_t>(best - scores.begin());
  add_to_basis({.row = candidates[j],
                .x = x_c.data() + j * d_,
                .whitened_column = column_of(cross, c, j),
                .kernel_column = column_of(k_bc, c, j),
                .s_jj = best->s_jj,
                .kernel_diagonal = k_cc[j] + jitter,
                .z = best->z,
                .trace_reduction = best->trace_reduction});
}

void GreedyBasisSelection::add_to_basis(const BasisCandidate& candidate) {
  const BasisResolution resolution = basis_resolution(kernel_.kernel().hyperparameters());
  const bool appended =
      whitened_.append(candidate.whitened_column.data(), candidate.s_jj) &&
      kernel_factor_.append(candidate.kernel_column.data(), candidate.kernel_diagonal, resolution.independence_floor);
  GPSTREAM_CHECK(appended, "the basis factor lost positive definiteness at row {}", basis_.size() + 1);
  z_.push_back(candidate.z);
  update_weights();
  trace_residual_ = std::max(trace_residual_ - candidate.trace_reduction, 0.0);
  basis_.push_back(candidate.row);
  in_basis_[candidate.row] = 1;
  basis_rows_.insert(basis_rows_.end(), candidate.x, candidate.x + d_);
}

void GreedyBasisSelection::update_weights() {
  // β = L_K⁻ᵀ L_S⁻ᵀ z, and Q = −½‖z‖².
  const std::size_t m = z_.size();
  beta_.resize(m);
  whitened_.back_substitute(z_.data(), beta_.data(), m);
  kernel_factor_.back_substitute(beta_.data(), beta_.data(), m);
  objective_ = -0.5 * squared_norm(z_);
}

void GreedyBasisSelection::dual_step() {
  // Greedy minimisation of Q*(α*) = −yᵀα* + ½α*ᵀK̄α* on B* (Smola & Bartlett eq. 6): the
  // same step as GBCD's, on a growing set: l = L*⁻¹K̄(B*, i), p² = K̄_ii − ‖l‖²,
  // z*_i = (y_i − lᵀz*)/p, which lowers Q* by ½ z*_i².
  if (dual_basis_.size() >= options_.basis_size) return;
  std::vector<std::size_t> candidates;
  draw(candidates, in_dual_basis_, dual_basis_.size(), options_.candidates);
  const std::size_t c = candidates.size();
  if (c == 0) return;
  const std::size_t m = dual_basis_.size();
  std::vector<double> x_c;
  kernel_.exchange().collect_rows(candidates, x_c);
  const std::vector<double> y_c = kernel_.exchange().collect_values(candidates, y_);
  std::vector<double> l(m * c);
  kernel_.block(dual_rows_.data(), m, x_c.data(), c, l.data());  // off-diagonal: no noise term
  kernel_.count_kernel_evaluations(m * c + c);
  const std::vector<double> k_bc = l;
  dual_factor_.solve_columns(l.data(), c, false);
  double best_score = -1.0, best_z = 0.0;
  std::size_t best = c;
  std::vector<double> diagonal(c);
  for (std::size_t j = 0; j < c; ++j) {
    diagonal[j] = kernel_.kernel().self_covariance(x_c.data() + j * d_) + noise_;
    double l_norm = 0.0, lz = 0.0;
    for (std::size_t i = 0; i < m; ++i) {
      l_norm += l[i * c + j] * l[i * c + j];
      lz += l[i * c + j] * dual_z_[i];
    }
    const double pivot_squared = diagonal[j] - l_norm;
    if (!(pivot_squared > kPivotFloor * diagonal[j])) continue;
    const double z = (y_c[j] - lz) / std::sqrt(pivot_squared);
    if (z * z > best_score) {
      best_score = z * z;
      best_z = z;
      best = j;
    }
  }
  if (best == c) return;
  std::vector<double> column(m);
  for (std::size_t i = 0; i < m; ++i) column[i] = k_bc[i * c + best];
  if (!dual_factor_.append(column.data(), diagonal[best])) return;
  dual_z_.push_back(best_z);
  dual_objective_ = -0.5 * squared_norm(dual_z_);
  dual_basis_.push_back(candidates[best]);
  in_dual_basis_[candidates[best]] = 1;
  dual_rows_.insert(dual_rows_.end(), x_c.begin() + static_cast<std::ptrdiff_t>(best * d_),
                    x_c.begin() + static_cast<std::ptrdiff_t>((best + 1) * d_));
}

std::string GreedyBasisSelection::measure_name() const {
  return options_.criterion == BasisCriterion::sggp ? "gap" : "trace residual";
}

void GreedyBasisSelection::store_state() {
  auto& saved = state_.auxiliary;
  saved["basis"] = as_doubles(basis_);
  whitened_.copy_factor(saved["whitened_factor"]);
  kernel_factor_.copy_factor(saved["kernel_factor"]);
  saved["z"] = z_;
  saved["trace_residual"] = {trace_residual_};
  saved["exhausted"] = {exhausted_ ? 1.0 : 0.0, static_cast<double>(fruitless_steps_)};
  if (options_.criterion == BasisCriterion::sggp) {
    saved["dual_basis"] = as_doubles(dual_basis_);
    dual_factor_.copy_factor(saved["dual_factor"]);
    saved["dual_z"] = dual_z_;
  }
}

SparseModel GreedyBasisSelection::model() {
  GPSTREAM_CHECK(!basis_.empty(), "no basis row was selected");
  // β and the factors re-fitted in the whitened form of every SR model
  // (sparse_fit.h): one more streamed pass, free of the squared conditioning
  // of the incremental factor of A that the selection steered by.
  SparseModel model = subset_of_regressors_on(kernel_, y_, basis_rows_, basis_);
  model.method = basis_criterion_name(options_.criterion);
  model.prior.kernel = kernel_.kernel().hyperparameters();
  model.basis_indices = basis_;
  model.diagnostics["trace_residual"] = trace_residual_;
  model.diagnostics["relative_trace_residual"] = trace_kernel_ > 0 ? trace_residual_ / trace_kernel_ : 0.0;
  model.diagnostics["objective"] = objective_;
  if (options_.criterion == BasisCriterion::sggp) {
    // Error bars: Q* minimised with y = k* over α* on the basis (Smola & Bartlett eq. 10), i.e.
    // K** − k_Bᵀ(K_BB + σ²I)⁻¹k_B, an upper bound on the exact variance.
    model.variance_form = SparseVarianceForm::exact_on_subset;
    model.variance_factor =
        basis_kernel_factor(kernel_, basis_rows_, basis_.size(), noise_, "the basis's K + sigma^2 I");
    model.basis_factor.clear();
    model.diagnostics["gap"] = gap();
    model.diagnostics["dual_objective"] = dual_objective_;
    model.diagnostics["dual_basis_size"] = static_cast<double>(dual_basis_.size());
  }
  return model;
}

}  // namespace gpstream

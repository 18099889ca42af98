#include "engine/sparse/cholqr_selection.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/row_source_utilities.h"
#include "engine/hyper/hyperparameter_search.h"
#include "engine/hyper/marginal_likelihood.h"
#include "engine/core/blas_threads.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

namespace gpstream {
namespace {

// A candidate (or information pivot) counts only if its residual variance is
// above this fraction of its prior variance: below it, ℓ = (K − K̂)[:, j]/√d_j
// is rounding noise.
constexpr double kResidualFloor = 1e-10;
// "Resample after a random number of swapping iterations (on average once per five swaps)" (§3.3.2).
constexpr double kResampleProbability = 0.2;

std::vector<double> as_values(std::span<const std::size_t> indices) { return {indices.begin(), indices.end()}; }

}  // namespace

std::size_t cholqr_memory_bytes(std::size_t n, std::size_t d, std::size_t m, std::size_t z) {
  // x, L, Q, W_NI and Φ of a gradient evaluation, the residual columns and L_z (with two n×z products).
  const std::size_t doubles = checked_add(
      checked_add(checked_multiply(n, d), checked_multiply(checked_add(n, m), m)),
      checked_add(checked_multiply(checked_multiply(n, m), 3), checked_multiply(checked_multiply(n, z), 4)));
  return checked_multiply(doubles, sizeof(double));
}

CholQrSelection::CholQrSelection(KernelMatrix& kernel, std::span<const double> y, const CholQrOptions& options,
                                 SolverState& state)
    : matrix_(kernel),
      y_(y),
      options_(options),
      state_(state),
      n_(kernel.size()),
      d_(kernel.rows().columns()),
      hyperparameters_(kernel.kernel().hyperparameters()) {
  GPSTREAM_CHECK_ARGUMENT(options.basis_size > 0 && options.basis_size <= n_,
                          "CholQR needs 1 to {} inducing rows (the training rows), not {}", n_, options.basis_size);
  GPSTREAM_CHECK_ARGUMENT(options.information_pivots > 0, "CholQR needs at least one information pivot");
  GPSTREAM_CHECK_ARGUMENT(
      hyperparameters_.term_count() == 1 || !options.learn_hyperparameters,
      "CholQR learns the hyperparameters of a single kernel, not of the sum {}: give it one kernel, or "
      "keep the sum's values fixed",
      kernel_name(hyperparameters_));
  GPSTREAM_CHECK(y.size() == n_, "{} targets for {} training rows", y.size(), n_);
  if (options_.swaps_per_epoch == 0) options_.swaps_per_epoch = std::min<std::size_t>(60, options.basis_size);
  if (options_.hyperparameter_evaluations == 0) {
    const std::size_t parameters = parameter_layout(hyperparameters_).size();
    options_.hyperparameter_evaluations = std::min<std::size_t>(20, std::max<std::size_t>(15, 2 * parameters));
  }
  memory_ = kernel.context().memory().reserve(
      fmt::format("CholQR's training rows and O(n m) factors (n = {}, m = {}, {} information pivots)", n_,
                  options.basis_size, options.information_pivots),
      cholqr_memory_bytes(n_, d_, options.basis_size, options.information_pivots),
      "lower the basis size or the information pivots, or use fewer rows");
  x_.resize(checked_multiply(n_, d_));
  kernel.rows().read_rows(0, n_, x_.data(), nullptr);
  factorization_ = std::make_unique<CholQrFactorization>(x_.data(), n_, d_, y, options.basis_size);

  if (state.auxiliary.find("inducing") == state.auxiliary.end()) return;  // a fresh run: start() draws the inducing set
  constexpr const char* kOwner = "the CholQR run";
  auto get = [&](const char* name) -> const std::vector<double>& { return saved_entry(state, name, kOwner); };
  const std::vector<std::size_t> inducing = saved_row_indices(state, "inducing", n_, kOwner);
  GPSTREAM_CHECK(inducing.size() == options.basis_size, "checkpoint: {} inducing rows, but the basis size is {}",
                 inducing.size(), options.basis_size);
  // The kernel's values as they were (kernel_parameters.h's layout), not their logarithms.
  const std::vector<double>& values = get("hyperparameters");
  GPSTREAM_CHECK(values.size() == parameter_layout(hyperparameters_).size(),
                 "checkpoint: {} hyperparameters for a kernel that takes {}", values.size(),
                 parameter_layout(hyperparameters_).size());
  hyperparameters_ = with_values(hyperparameters_, values);
  const std::vector<double>& statistics = get("statistics");
  GPSTREAM_CHECK(statistics.size() == 2, "checkpoint: the CholQR statistics hold {} values, not 2", statistics.size());
  accepted_swaps_ = static_cast<std::uint64_t>(statistics[0]);
  last_decrease_ = statistics[1];
  const ScopedBlasThreads all_cores = matrix_.context().parallel_blas();
  rebuild(inducing);
}

CholQrSelection::~CholQrSelection() = default;

void CholQrSelection::start() {
  const ScopedBlasThreads all_cores = matrix_.context().parallel_blas();  // the BLAS calls here run one at a time
  // Algorithm 1 starts from a random subset of the training rows.
  std::vector<std::size_t> inducing = random_row_subset(n_, options_.basis_size, options_.seed);
  std::mt19937_64 random(options_.seed);
  std::shuffle(inducing.begin(), inducing.end(), random);
  rebuild(inducing);
}

RunCounters CholQrSelection::counters() const { return counters_of(state_); }

void CholQrSelection::set_counters(const RunCounters& counters) { set_counters_of(state_, counters); }

void CholQrSelection::draw_information_pivots(std::mt19937_64& random) {
  information_pivots_.clear();
  top_up_information_pivots(random);
}

void CholQrSelection::top_up_information_pivots(std::mt19937_64& random) {
  const std::size_t wanted = std::min(options_.information_pivots, n_ - factorization_->size());
  std::uniform_int_distribution<std::size_t> row(0, n_ - 1);
  while (information_pivots_.size() < wanted) {
    const std::size_t candidate = row(random);
    if (factorization_->is_pivot(candidate)) continue;
    if (std::find(information_pivots_.begin(), information_pivots_.end(), candidate) != information_pivots_.end())
      continue;
    information_pivots_.push_back(candidate);
  }
}

std::size_t CholQrSelection::best_candidate(std::size_t excluded) {
  const CholQrFactorization& f = *factorization_;
  const std::size_t z = information_pivots_.size(), k = f.size();
  if (z == 0) return n_;
  // The residual columns at the information pivots and their partial
  // Cholesky L_z (n×u, u ≤ z, row-major; eq. 20).
  std::vector<double> columns(checked_multiply(n_, z));
  f.residual_columns(information_pivots_, columns.data());
  matrix_.count_kernel_evaluations(checked_multiply(n_, z));
  std::vector<double> l_z(checked_multiply(n_, z), 0.0);
  std::size_t u = 0;
  std::vector<double> column(n_);
  for (std::size_t t = 0; t < z; ++t) {
    const std::size_t pivot = information_pivots_[t];
    for (std::size_t i = 0; i < n_; ++i) column[i] = columns[i * z + t];
    if (u > 0) {
      cblas_dgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(n_), static_cast<int>(u), -1.0, l_z.data(),
                  static_cast<int>(z), &l_z[pivot * z], 1, 1.0, column.data(), 1);
    }
    const double diagonal = column[pivot];
    if (!(diagonal > kResidualFloor * f.self_covariance(pivot))) continue;
    const double scale = 1.0 / std::sqrt(diagonal);
    for (std::size_t i = 0; i < n_; ++i) l_z[i * z + u] = column[i] * scale;
    ++u;
  }
  if (u == 0) return n_;

  // For candidate j with v = L_z[j, :] and ℓ ≈ L_z v/‖v‖ (eq. 21), the terms
  // of eqs. 16–18 need G = L_zᵀL_z, W = Q[:n]ᵀL_z (M = WᵀW), L_zᵀy and Wᵀc.
  const int ni = static_cast<int>(n_), ui = static_cast<int>(u), zi = static_cast<int>(z), ki = static_cast<int>(k);
  std::vector<double> g(u * u), w(std::max<std::size_t>(k, 1) * u, 0.0), m(u * u, 0.0), l_y(u), w_c(u, 0.0);
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ui, ui, ni, 1.0, l_z.data(), zi, l_z.data(), zi, 0.0, g.data(),
              ui);
  cblas_dgemv(CblasRowMajor, CblasTrans, ni, ui, 1.0, l_z.data(), zi, y_.data(), 1, 0.0, l_y.data(), 1);
  if (k > 0) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ki, ui, ni, 1.0, f.q_column(0),
                static_cast<int>(f.q_stride()), l_z.data(), zi, 0.0, w.data(), ui);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ui, ui, ki, 1.0, w.data(), ui, w.data(), ui, 0.0, m.data(),
                ui);
    cblas_dgemv(CblasRowMajor, CblasTrans, ki, ui, 1.0, w.data(), ui, f.q_times_y().data(), 1, 0.0, w_c.data(), 1);
  }
  std::vector<double> l_g(checked_multiply(n_, u)), l_m(checked_multiply(n_, u));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ui, ui, 1.0, l_z.data(), zi, g.data(), ui, 0.0, l_g.data(),
              ui);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ui, ui, 1.0, l_z.data(), zi, m.data(), ui, 0.0, l_m.data(),
              ui);

  const double noise = f.noise_variance(), log_noise = std::log(noise);
  const bool variational = options_.objective == InducingObjective::variational;
  std::size_t best = n_;
  double best_score = -std::numeric_limits<double>::infinity();
  for (std::size_t j = 0; j < n_; ++j) {
    if (j == excluded || f.is_pivot(j)) continue;
    const double* v = &l_z[j * z];
    double squared_norm_v = 0.0, v_g_v = 0.0, v_m_v = 0.0, y_l = 0.0, c_t = 0.0;
    for (std::size_t a = 0; a < u; ++a) {
      squared_norm_v += v[a] * v[a];
      v_g_v += v[a] * l_g[j * u + a];
      v_m_v += v[a] * l_m[j * u + a];
      y_l += v[a] * l_y[a];
      c_t += v[a] * w_c[a];
    }
    if (!(squared_norm_v > kResidualFloor * f.self_covariance(j))) continue;
    const double squared_norm_l = v_g_v / squared_norm_v;
    const double squared_norm_r = squared_norm_l + noise - v_m_v / squared_norm_v;  // ‖ℓ̃ − QQᵀℓ̃‖²
    if (!(squared_norm_r > 0.0)) continue;
    const double y_r = (y_l - c_t) / std::sqrt(squared_norm_v);
    const double score = y_r * y_r / (noise * squared_norm_r) + log_noise - std::log(squared_norm_r) +
                         (variational ? squared_norm_l / noise : 0.0);
    if (score > best_score) best_score = score, best = j;
  }
  return best;
}

bool CholQrSelection::swap(std::size_t row, std::mt19937_64& random) {
  CholQrFactorization& f = *factorization_;
  const double before = objective_;
  const std::vector<std::size_t> pivots(f.pivots().begin(), f.pivots().end());
  const std::size_t position = static_cast<std::size_t>(std::find(pivots.begin(), pivots.end(), row) - pivots.begin());
  f.remove(position);
  const double without = f.objective(options_.objective);
  const std::size_t candidate = best_candidate(row);
  bool accepted = false;
  if (candidate < n_) {
    const std::optional<ObjectiveDecrease> decrease = f.decrease_if_appended(candidate, kResidualFloor);
    matrix_.count_kernel_evaluations(n_);
    // Accept only a decrease beyond rounding, so that F never increases.
    if (decrease && without - decrease->of(options_.objective) < before - 1e-12 * std::abs(before)) {
      accepted = f.append(candidate, kResidualFloor);
    }
  }
  if (!accepted) {
    // Put back as it was; when rounding leaves the removed row (numerically)
    // in the span of the others (a kernel made very smooth by a hyperparameter
    // step), the set it came from is factorised afresh instead.
    if (!f.append(row, 0.0)) rebuild(pivots);
  } else {
    auto pivot = std::find(information_pivots_.begin(), information_pivots_.end(), candidate);
    if (pivot != information_pivots_.end()) information_pivots_.erase(pivot);
  }
  matrix_.count_kernel_evaluations(n_);
  objective_ = f.objective(options_.objective);
  if (std::bernoulli_distribution(kResampleProbability)(random)) draw_information_pivots(random);
  top_up_information_pivots(random);  // replaces a pivot that joined the inducing set
  return accepted;
}

void CholQrSelection::hyperparameter_step() {
  const std::vector<std::size_t> inducing(factorization_->pivots().begin(), factorization_->pivots().end());
  const KernelHyperparameters shape = hyperparameters_;
  const LogParameterObjective objective = [&](std::span<const double> theta, std::span<double> gradient) {
    const InducingObjectiveValue value = evaluate_inducing_objective(with_log_parameters(shape, theta), x_.data(), n_,
                                                                     d_, y_, inducing, options_.objective, true);
    matrix_.count_kernel_evaluations(checked_multiply(n_, inducing.size()));
    GPSTREAM_CHECK(std::isfinite(value.value), "the CholQR objective is not finite ({}) during the hyperparameter step",
                   value.value);
    std::copy(value.gradient.begin(), value.gradient.end(), gradient.begin());
    return value.value;
  };
  const BoundedMinimum minimum =
      minimise_log_parameters(objective, log_parameters(shape), shape, 0, options_.min_noise_variance, 1e-9,
                              options_.hyperparameter_evaluations, nullptr);
  hyperparameters_ = with_log_parameters(shape, minimum.theta);
}

void CholQrSelection::rebuild(std::span<const std::size_t> inducing) {
  kernel_ = make_kernel(hyperparameters_, d_);
  factorization_->rebuild(*kernel_, inducing);
  matrix_.count_kernel_evaluations(checked_multiply(n_, inducing.size()));
  objective_ = factorization_->objective(options_.objective);
}

void CholQrSelection::iterate() {
  const ScopedBlasThreads all_cores = matrix_.context().parallel_blas();  // the BLAS calls here run one at a time
  const double epoch_start = objective_;
  // Each epoch draws from its own stream, so a resumed run repeats it.
  std::seed_seq seeds{options_.seed, static_cast<std::uint64_t>(state_.iteration), std::uint64_t{0xC401}};
  std::mt19937_64 random(seeds);
  last_epoch_ = {};
  if (options_.swap_inducing_rows && factorization_->size() < n_) {
    std::vector<std::size_t> candidates(factorization_->pivots().begin(), factorization_->pivots().end());
    std::shuffle(candidates.begin(), candidates.end(), random);
    candidates.resize(std::min(options_.swaps_per_epoch, candidates.size()));
    draw_information_pivots(random);
    for (const std::size_t row : candidates) {
      ++last_epoch_.proposed;
      if (swap(row, random)) ++last_epoch_.accepted;
    }
  }
  accepted_swaps_ += last_epoch_.accepted;
  if (options_.learn_hyperparameters) hyperparameter_step();
  rebuild(std::vector<std::size_t>(factorization_->pivots().begin(), factorization_->pivots().end()));
  last_decrease_ = (epoch_start - objective_) / std::max(1.0, std::abs(objective_));
}

void CholQrSelection::store_state() {
  auto& saved = state_.auxiliary;
  saved["inducing"] = as_values(factorization_->pivots());
  saved["hyperparameters"] = hyperparameter_values(hyperparameters_);
  saved["statistics"] = {static_cast<double>(accepted_swaps_), last_decrease_};
}

SparseModel CholQrSelection::model() {
  const CholQrFactorization& f = *factorization_;
  const std::size_t m = f.size();
  SparseModel model;
  model.method = "cholqr";
  model.prior.kernel = hyperparameters_;
  model.rows = n_;
  model.columns = d_;
  model.basis_indices.assign(f.pivots().begin(), f.pivots().end());
  model.basis_rows.resize(checked_multiply(m, d_));
  for (std::size_t a = 0; a < m; ++a) std::copy_n(&x_[model.basis_indices[a] * d_], d_, &model.basis_rows[a * d_]);
  // L_I = L[I, :] and chol(S) = Rᵀ with R's rows signed so its diagonal is positive.
  model.basis_factor.assign(m * m, 0.0);
  model.variance_factor.assign(m * m, 0.0);
  std::vector<double> x(m);
  const auto sign = [&](std::size_t b) { return f.r(b, b) < 0.0 ? -1.0 : 1.0; };
  for (std::size_t a = 0; a < m; ++a) {
    for (std::size_t b = 0; b <= a; ++b) {
      model.basis_factor[a * m + b] = f.l(model.basis_indices[a], b);
      model.variance_factor[a * m + b] = sign(b) * f.r(b, a);  // R̂ᵀ with R̂ = diag(sign) R
    }
  }
  // β = L_I⁻ᵀ R⁻¹ c: with the signed R̂ = D R and ĉ = D c (D = diag(sign)), R⁻¹c = R̂⁻¹ĉ.
  for (std::size_t a = 0; a < m; ++a) x[a] = sign(a) * f.q_times_y()[a];
  const int mi = static_cast<int>(m);
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, mi, model.variance_factor.data(), mi, x.data(), 1);
  cblas_dtrsv(CblasRowMajor, CblasLower, CblasTrans, CblasNonUnit, mi, model.basis_factor.data(), mi, x.data(), 1);
  model.weights = std::move(x);
  model.variance_form = SparseVarianceForm::projected_process;
  model.diagnostics["objective"] = objective_;
  model.diagnostics["accepted_swaps"] = static_cast<double>(accepted_swaps_);
  return model;
}

}  // namespace gpstream

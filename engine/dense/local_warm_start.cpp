// The gbcd route's warm start by local conditioning (dense_variance.h): each
// test row's solve starts from the exact solve on its nearest training rows
// in the kernel's own sense (highest covariance), the Vecchia idea
// [Vecchia88] for a right-hand side instead of a likelihood.
#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/dense/variance_routes.h"

#include <lapacke.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace gpstream::variance_routes {
namespace {

using Candidate = std::pair<double, double>;  // (covariance, global row index): a double holds any index below 2^53

// Higher covariance first; among equals, the lower index (a choice that no thread count or rank count changes).
bool better(const Candidate& a, const Candidate& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// The `keep` best of `candidates`, best first.
void keep_best(std::vector<Candidate>& candidates, std::size_t keep) {
  keep = std::min(keep, candidates.size());
  std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end(),
                    better);
  candidates.resize(keep);
}

}  // namespace

std::vector<double> warm_start_by_local_conditioning(KernelMatrix& training, std::vector<double>& gradient,
                                                     std::size_t r, std::size_t local_rows) {
  const std::size_t n = training.size(), first = training.partition().first;
  const std::size_t m = std::min(local_rows, training.partition().global_rows);
  // Each column's m best rows among this rank's (G = −K(X, Z): the covariance is −G), flattened for the ranks.
  std::vector<double> flat(checked_multiply(r, m, 2), -std::numeric_limits<double>::infinity());
  tbb::parallel_for(std::size_t{0}, r, [&](std::size_t j) {
    std::vector<Candidate> best;
    best.reserve(2 * m + 1);
    // Once m are kept: the worst kept, at most the m-th best so far, so that anything at or below it can go.
    double worst = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
      const double covariance = -gradient[i * r + j];
      if (best.size() >= m && covariance <= worst) continue;
      best.emplace_back(covariance, static_cast<double>(first + i));
      if (best.size() > 2 * m) keep_best(best, m);
      if (best.size() >= m)
        worst = std::min_element(best.begin(), best.end(), [](auto& a, auto& b) { return better(b, a); })->first;
    }
    keep_best(best, m);
    for (std::size_t k = 0; k < best.size(); ++k) {
      flat[(j * m + k) * 2] = best[k].first;
      flat[(j * m + k) * 2 + 1] = best[k].second;
    }
  });
  // Every rank's candidates, the same best m everywhere (a single process: its own).
  const std::vector<double> all = training.context().communicator().all_gather(flat);
  const std::size_t ranks = all.size() / flat.size();
  std::vector<std::vector<std::size_t>> chosen(r);
  std::vector<std::vector<double>> covariances(r);
  std::vector<std::size_t> union_rows;
  for (std::size_t j = 0; j < r; ++j) {
    std::vector<Candidate> candidates;
    for (std::size_t rank = 0; rank < ranks; ++rank) {
      for (std::size_t k = 0; k < m; ++k) {
        const double* entry = all.data() + rank * flat.size() + (j * m + k) * 2;
        if (std::isfinite(entry[0])) candidates.emplace_back(entry[0], entry[1]);
      }
    }
    keep_best(candidates, m);
    for (const Candidate& candidate : candidates) {
      chosen[j].push_back(static_cast<std::size_t>(candidate.second));
      covariances[j].push_back(candidate.first);
      union_rows.push_back(chosen[j].back());
    }
  }
  std::sort(union_rows.begin(), union_rows.end());
  union_rows.erase(std::unique(union_rows.begin(), union_rows.end()), union_rows.end());
  const std::size_t columns = union_rows.size(), d = training.rows().columns();
  std::vector<double> x_union;
  training.collect_rows(union_rows, x_union);

  // u_j = K̄_{N_j}⁻¹ k_{N_j}(z_j), placed in U (|N|×r) at N_j's rows; f_j = ½u_jᵀK̄u_j − k*ᵀu_j = −½ k_{N_j}ᵀu_j.
  std::vector<double> weights(checked_multiply(columns, r), 0.0), objective(r, 0.0);
  const double noise = training.kernel().noise_variance();
  tbb::parallel_for(std::size_t{0}, r, [&](std::size_t j) {
    const std::size_t count = chosen[j].size();
    if (count == 0) return;
    std::vector<double> rows(count * d), system(count * count), u = covariances[j];
    std::vector<std::size_t> positions(count);
    for (std::size_t k = 0; k < count; ++k) {
      positions[k] = static_cast<std::size_t>(std::lower_bound(union_rows.begin(), union_rows.end(), chosen[j][k]) -
                                              union_rows.begin());
      std::copy_n(x_union.data() + positions[k] * d, d, rows.data() + k * d);
    }
    training.block(rows.data(), count, rows.data(), count, system.data());
    for (std::size_t k = 0; k < count; ++k) system[k * count + k] += noise;
    const auto order = static_cast<lapack_int>(count);
    if (LAPACKE_dpotrf_work(LAPACK_ROW_MAJOR, 'L', order, system.data(), order) != 0) return;  // starts from 0
    if (LAPACKE_dpotrs_work(LAPACK_ROW_MAJOR, 'L', order, 1, system.data(), order, u.data(), 1) != 0) return;
    double objective_j = 0.0;
    for (std::size_t k = 0; k < count; ++k) {
      weights[positions[k] * r + j] = u[k];
      objective_j -= 0.5 * covariances[j][k] * u[k];
    }
    objective[j] = objective_j;
  });
  training.count_kernel_evaluations(checked_multiply(r, m, m));
  // G = K̄U − K(X, Z): one pass over X for the |N| columns.
  training.multiply_columns(union_rows, x_union.data(), weights.data(), r, gradient.data(), /*accumulate=*/true);
  return objective;
}

}  // namespace gpstream::variance_routes

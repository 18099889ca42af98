#include "engine/hyper/vecchia_likelihood.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/linalg/small_cholesky.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace gpstream {
namespace {

using small_cholesky::backward_solve;
using small_cholesky::factor_in_place;
using small_cholesky::forward_solve;

// Rows per chunk of the sum: a fixed grain, so that the order of additions does not depend on threads or ranks.
constexpr std::size_t kChunkRows = 64;

// One thread's scratch for the rows of a chunk.
struct RowWorkspace {
  std::vector<double> rows, residual, basis, block, z, u, a, weights, derivatives, projected;
  PreparedRows prepared;
};

// Row i's share of the Fisher information (see the header), added to `information` (P×P, P = the kernel's
// parameters then p mean terms): c_q = L⁻¹(∂_q A u) for each kernel parameter q, ∂_q A u one row of A at a
// time by the kernel's gradient contraction (weights uᵀ), σ² u for the noise; then Σ c_j c_kᵀ less half the
// last entries' product, and (H_Jᵀu)(H_Jᵀu)ᵀ for the mean.
void add_information(const Kernel& kernel, RowWorkspace& w, std::size_t size, double noise, std::size_t noise_index,
                     std::size_t p, double* information) {
  const std::size_t d = kernel.dimension(), kernel_parameters = kernel.parameter_count();
  const std::size_t parameters = kernel_parameters + p;
  const PreparedView all = w.prepared.view(d);
  w.derivatives.assign(size * kernel_parameters, 0.0);  // row h: (∂_q A u)_h for every q
  const double* weights[1] = {w.u.data()};
  for (std::size_t h = 0; h < size; ++h) {
    kernel.add_parameter_gradients_serially(w.prepared.view(d, h, 1), all, weights,
                                            w.derivatives.data() + h * kernel_parameters);
  }
  // c_q = L⁻¹ (∂_q A u), q by q (columns of `derivatives`, moved to rows of `weights`).
  w.weights.assign(kernel_parameters * size, 0.0);
  for (std::size_t q = 0; q < kernel_parameters; ++q) {
    double* c = w.weights.data() + q * size;
    for (std::size_t h = 0; h < size; ++h) {
      c[h] = q == noise_index ? noise * w.u[h] : w.derivatives[h * kernel_parameters + q];
    }
    forward_solve(w.block.data(), size, c);
  }
  const std::size_t last = size - 1;
  for (std::size_t j = 0; j < kernel_parameters; ++j) {
    const double* c_j = w.weights.data() + j * size;
    for (std::size_t k = 0; k <= j; ++k) {
      const double* c_k = w.weights.data() + k * size;
      double sum = -0.5 * c_j[last] * c_k[last];
      for (std::size_t h = 0; h < size; ++h) sum += c_j[h] * c_k[h];
      information[j * parameters + k] += sum;
      if (k != j) information[k * parameters + j] += sum;
    }
  }
  for (std::size_t a = 0; a < p; ++a) {
    for (std::size_t b = 0; b < p; ++b) {
      information[(kernel_parameters + a) * parameters + kernel_parameters + b] += w.projected[a] * w.projected[b];
    }
  }
}

// The rows, targets and mean basis in the sets' order, and β: what a row's terms are made of.
struct RowInputs {
  const double *x, *y, *basis;
  std::size_t d, p;
  std::span<const double> beta;
};

// Row i's term of −log p, its gradient and (with `information`) its Fisher information, added to `sum`
// (1 + P values, then P² more): see the header. False when the conditioning block does not factor.
bool add_row_terms(const Kernel& kernel, std::span<const std::uint32_t> set, std::size_t i, const RowInputs& in,
                   RowWorkspace& w, double* sum, bool information) {
  const std::size_t d = in.d, p = in.p, k = set.size(), size = k + 1, last = k;
  const std::size_t kernel_parameters = kernel.parameter_count(), noise_index = kernel.noise_index();
  const double noise = kernel.noise_variance();
  double* gradient = sum + 1;
  // J = N(i) then i.
  w.rows.resize(size * d);
  w.residual.resize(size);
  w.basis.resize(size * p);
  for (std::size_t j = 0; j < size; ++j) {
    const std::size_t position = j < k ? set[j] : i;
    std::copy_n(in.x + position * d, d, w.rows.data() + j * d);
    double residual = in.y[position];
    for (std::size_t q = 0; q < p; ++q) {
      w.basis[j * p + q] = in.basis[position * p + q];
      residual -= in.basis[position * p + q] * in.beta[q];
    }
    w.residual[j] = residual;
  }
  kernel.prepare(w.rows.data(), size, w.prepared);
  w.block.resize(size * size);
  kernel.evaluate(w.prepared, w.prepared, w.block.data());
  for (std::size_t j = 0; j < size; ++j) w.block[j * size + j] += noise;
  if (!factor_in_place(w.block.data(), size)) return false;
  const double* l = w.block.data();
  w.z = w.residual;
  forward_solve(l, size, w.z.data());
  const double z_last = w.z[last];
  sum[0] += std::log(l[last * size + last]) + 0.5 * z_last * z_last + 0.5 * std::log(2.0 * std::numbers::pi);
  w.u.assign(size, 0.0);
  w.u[last] = 1.0;
  backward_solve(l, size, w.u.data());  // u = L⁻ᵀ e_J: the last row of L⁻¹
  w.a = w.z;
  backward_solve(l, size, w.a.data());  // a = A⁻¹ r_J
  w.weights.resize(size * size);
  double trace = 0.0;
  for (std::size_t j = 0; j < size; ++j) {
    const double b_j = w.a[j] - z_last * w.u[j];
    for (std::size_t h = 0; h < size; ++h) {
      const double b_h = w.a[h] - z_last * w.u[h];
      w.weights[j * size + h] =
          0.5 * ((1.0 - z_last * z_last) * w.u[j] * w.u[h] - z_last * (b_j * w.u[h] + w.u[j] * b_h));
    }
    trace += w.weights[j * size + j];
  }
  kernel.add_parameter_gradient_serially(w.prepared.view(d), w.prepared.view(d), w.weights.data(), gradient);
  gradient[noise_index] += noise * trace;  // ∂A/∂log σ² = σ² I
  w.projected.assign(p, 0.0);              // H_Jᵀu
  for (std::size_t q = 0; q < p; ++q) {
    for (std::size_t j = 0; j < size; ++j) w.projected[q] += w.basis[j * p + q] * w.u[j];
    gradient[kernel_parameters + q] -= z_last * w.projected[q];
  }
  if (information) add_information(kernel, w, size, noise, noise_index, p, gradient + kernel_parameters + p);
  return true;
}

}  // namespace

VecchiaLikelihood::VecchiaLikelihood(Context& context, const double* x, std::span<const double> y, std::size_t d,
                                     MeanFunction mean, const VecchiaOptions& options)
    : context_(context), n_(y.size()), d_(d), mean_(std::move(mean)), sets_(n_, options.neighbours, options.seed) {
  GPSTREAM_CHECK(n_ >= 2, "the Vecchia likelihood needs at least 2 rows, not {}", n_);
  GPSTREAM_CHECK_ARGUMENT(options.neighbours >= 1, "the Vecchia likelihood needs at least 1 neighbour per row");
  mean_.coefficients.clear();
  const std::size_t p = mean_.basis_size();
  memory_ = context.memory().reserve(
      fmt::format("the Vecchia likelihood's rows and conditioning sets ({} rows, {} neighbours each)", n_,
                  sets_.neighbours()),
      checked_add(checked_multiply(n_, d + 2 + p, sizeof(double)), checked_multiply(n_, sets_.neighbours() + 1, 4)),
      "learn on a subset of the rows");
  const std::span<const std::size_t> order = sets_.order();
  x_.resize(n_ * d);
  y_.resize(n_);
  basis_.resize(n_ * p);
  for (std::size_t k = 0; k < n_; ++k) {
    std::copy_n(x + order[k] * d, d, x_.begin() + static_cast<std::ptrdiff_t>(k * d));
    y_[k] = y[order[k]];
    mean_.basis(x + order[k] * d, basis_.data() + k * p);
  }
}

double VecchiaLikelihood::condition_on(const KernelHyperparameters& kernel) {
  return sets_.find(context_, x_.data(), d_, conditioning_scale(kernel, d_));
}

MarginalLikelihood VecchiaLikelihood::evaluate(const KernelHyperparameters& kernel, std::span<const double> beta) {
  return evaluate(kernel, beta, false);
}

MarginalLikelihood VecchiaLikelihood::evaluate_with_information(const KernelHyperparameters& kernel,
                                                                std::span<const double> beta) {
  return evaluate(kernel, beta, true);
}

MarginalLikelihood VecchiaLikelihood::evaluate(const KernelHyperparameters& hyperparameters,
                                               std::span<const double> beta, bool information) {
  const std::size_t p = mean_.basis_size(), d = d_;
  GPSTREAM_CHECK(beta.size() == p, "{} mean coefficients for {} basis functions", beta.size(), p);
  const auto kernel = make_kernel(hyperparameters, d);
  const std::size_t parameters = kernel->parameter_count() + p;  // the noise's slot included
  // The term, its gradient, then (when asked) the information's P×P entries.
  const std::size_t values = 1 + parameters + (information ? parameters * parameters : 0);
  const double noise = hyperparameters.noise_variance;
  const RowInputs rows{x_.data(), y_.data(), basis_.data(), d, p, beta};
  // This rank's chunks; every other rank's entries stay 0, so the all-reduce adds each once.
  Communicator& ranks = context_.communicator();
  const std::size_t chunks = (n_ + kChunkRows - 1) / kChunkRows;
  const std::size_t first_chunk = chunks * ranks.rank() / ranks.size();
  const std::size_t last_chunk = chunks * (ranks.rank() + 1) / ranks.size();
  std::vector<double> sums(checked_multiply(chunks, values), 0.0);
  std::vector<std::uint8_t> failed(chunks, 0);
  context_.execute([&] {
    tbb::parallel_for(first_chunk, last_chunk, [&](std::size_t chunk) {
      RowWorkspace w;
      double* sum = sums.data() + chunk * values;
      for (std::size_t i = chunk * kChunkRows; i < std::min(n_, (chunk + 1) * kChunkRows); ++i) {
        if (!add_row_terms(*kernel, sets_.set(i), i, rows, w, sum, information)) {
          failed[chunk] = 1;
          return;
        }
      }
    });
  });
  bool any_failed = std::find(failed.begin(), failed.end(), std::uint8_t{1}) != failed.end();
  any_failed = ranks.any(any_failed);
  if (any_failed) {
    GPSTREAM_THROW(
        "K̄ is not numerically positive definite on a conditioning set of the Vecchia likelihood (noise variance "
        "{:.3g}, signal variance {:.3g}): raise the noise variance, or look for duplicate rows",
        noise, hyperparameters.signal_variance);
  }
  if (ranks.size() > 1) ranks.sum(sums);
  MarginalLikelihood result;
  result.gradient.assign(parameters, 0.0);
  if (information) result.information.assign(parameters * parameters, 0.0);
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    const double* sum = sums.data() + chunk * values;
    result.value += sum[0];
    for (std::size_t j = 0; j < parameters; ++j) result.gradient[j] += sum[1 + j];
    for (std::size_t j = 0; j < result.information.size(); ++j) result.information[j] += sum[1 + parameters + j];
  }
  return result;
}

}  // namespace gpstream

#include "engine/hyper/vecchia_likelihood.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace gpstream {
namespace {

// Rows per chunk of the sum: a fixed grain, so that the order of additions does not depend on threads or ranks.
constexpr std::size_t kChunkRows = 64;

// A = L Lᵀ in place (J×J row-major, lower triangle): the conditioning blocks are small (J ≤ m + 1), where a plain
// loop beats a LAPACK call. False when a pivot is not positive.
bool factor_in_place(double* a, std::size_t size) {
  for (std::size_t j = 0; j < size; ++j) {
    double pivot = a[j * size + j];
    for (std::size_t k = 0; k < j; ++k) pivot -= a[j * size + k] * a[j * size + k];
    if (!(pivot > 0.0)) return false;
    const double diagonal = std::sqrt(pivot);
    a[j * size + j] = diagonal;
    for (std::size_t i = j + 1; i < size; ++i) {
      double value = a[i * size + j];
      for (std::size_t k = 0; k < j; ++k) value -= a[i * size + k] * a[j * size + k];
      a[i * size + j] = value / diagonal;
    }
  }
  return true;
}

// v ← L⁻¹ v.
void forward_solve(const double* l, std::size_t size, double* v) {
  for (std::size_t i = 0; i < size; ++i) {
    double value = v[i];
    for (std::size_t k = 0; k < i; ++k) value -= l[i * size + k] * v[k];
    v[i] = value / l[i * size + i];
  }
}

// v ← L⁻ᵀ v.
void backward_solve(const double* l, std::size_t size, double* v) {
  for (std::size_t i = size; i-- > 0;) {
    double value = v[i];
    for (std::size_t k = i + 1; k < size; ++k) value -= l[k * size + i] * v[k];
    v[i] = value / l[i * size + i];
  }
}

// One thread's scratch for the rows of a chunk.
struct RowWorkspace {
  std::vector<double> rows, residual, basis, block, z, u, a, weights;
  PreparedRows prepared;
};

}  // namespace

VecchiaLikelihood::VecchiaLikelihood(Context& context, const double* x, std::span<const double> y, std::size_t d,
                                     MeanFunction mean, const VecchiaOptions& options)
    : context_(context),
      n_(y.size()),
      d_(d),
      m_(std::min(options.neighbours, y.size() > 0 ? y.size() - 1 : 0)),
      mean_(std::move(mean)) {
  GPSTREAM_CHECK(n_ >= 2, "the Vecchia likelihood needs at least 2 rows, not {}", n_);
  GPSTREAM_CHECK_ARGUMENT(options.neighbours >= 1, "the Vecchia likelihood needs at least 1 neighbour per row");
  mean_.coefficients.clear();
  const std::size_t p = mean_.basis_size();
  memory_ = context.memory().reserve(
      fmt::format("the Vecchia likelihood's rows and conditioning sets ({} rows, {} neighbours each)", n_, m_),
      checked_add(checked_multiply(n_, d + 2 + p, sizeof(double)), checked_multiply(n_, m_ + 1, 4)),
      "learn on a subset of the rows");
  // A random order (Guinness 2018): row order[k] of the data is position k.
  std::vector<std::size_t> order(n_);
  for (std::size_t i = 0; i < n_; ++i) order[i] = i;
  std::mt19937_64 random(options.seed);
  for (std::size_t i = n_ - 1; i > 0; --i) {
    std::swap(order[i], order[std::uniform_int_distribution<std::size_t>(0, i)(random)]);
  }
  x_.resize(n_ * d);
  y_.resize(n_);
  basis_.resize(n_ * p);
  for (std::size_t k = 0; k < n_; ++k) {
    std::copy_n(x + order[k] * d, d, x_.begin() + static_cast<std::ptrdiff_t>(k * d));
    y_[k] = y[order[k]];
    mean_.basis(x + order[k] * d, basis_.data() + k * p);
  }
  neighbours_.assign(n_ * m_, 0);
  counts_.assign(n_, 0);
}

double VecchiaLikelihood::condition_on(const KernelHyperparameters& kernel) {
  std::vector<double> scale(d_, 1.0);
  const std::vector<double>& lengthscales = kernel.lengthscales;
  for (std::size_t l = 0; l < d_ && !lengthscales.empty(); ++l) {
    scale[l] = 1.0 / lengthscales[lengthscales.size() == 1 ? 0 : l];
  }
  const NeighbourIndex index(x_.data(), n_, d_, scale);
  std::vector<std::uint8_t> changed(n_, 0);
  context_.execute([&] {
    tbb::parallel_for(std::size_t{0}, (n_ + kChunkRows - 1) / kChunkRows, [&](std::size_t chunk) {
      std::vector<std::uint32_t> found;
      for (std::size_t i = chunk * kChunkRows; i < std::min(n_, (chunk + 1) * kChunkRows); ++i) {
        index.nearest_before(i, m_, i, found);
        std::uint32_t* set = neighbours_.data() + i * m_;
        changed[i] = counts_[i] != found.size() || !std::equal(found.begin(), found.end(), set);
        std::copy(found.begin(), found.end(), set);
        counts_[i] = static_cast<std::uint32_t>(found.size());
      }
    });
  });
  std::size_t count = 0;
  for (const std::uint8_t flag : changed) count += flag;
  return static_cast<double>(count) / static_cast<double>(n_);
}

MarginalLikelihood VecchiaLikelihood::evaluate(const KernelHyperparameters& hyperparameters,
                                               std::span<const double> beta) {
  const std::size_t p = mean_.basis_size(), d = d_, m = m_;
  GPSTREAM_CHECK(beta.size() == p, "{} mean coefficients for {} basis functions", beta.size(), p);
  const auto kernel = make_kernel(hyperparameters, d);
  const std::size_t kernel_parameters = kernel->parameter_count();  // the noise's slot included
  const std::size_t noise_index = kernel->noise_index();
  const std::size_t values = 1 + kernel_parameters + p;  // the term, then its gradient
  const double noise = hyperparameters.noise_variance;
  const double log_2pi_half = 0.5 * std::log(2.0 * std::numbers::pi);
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
      double* gradient = sum + 1;
      for (std::size_t i = chunk * kChunkRows; i < std::min(n_, (chunk + 1) * kChunkRows); ++i) {
        const std::size_t k = counts_[i], size = k + 1, last = k;
        // J = N(i) then i.
        w.rows.resize(size * d);
        w.residual.resize(size);
        w.basis.resize(size * p);
        for (std::size_t j = 0; j < size; ++j) {
          const std::size_t position = j < k ? neighbours_[i * m + j] : i;
          std::copy_n(x_.data() + position * d, d, w.rows.data() + j * d);
          double residual = y_[position];
          for (std::size_t q = 0; q < p; ++q) {
            w.basis[j * p + q] = basis_[position * p + q];
            residual -= basis_[position * p + q] * beta[q];
          }
          w.residual[j] = residual;
        }
        kernel->prepare(w.rows.data(), size, w.prepared);
        w.block.resize(size * size);
        kernel->evaluate(w.prepared, w.prepared, w.block.data());
        for (std::size_t j = 0; j < size; ++j) w.block[j * size + j] += noise;
        if (!factor_in_place(w.block.data(), size)) {
          failed[chunk] = 1;
          return;
        }
        const double* l = w.block.data();
        w.z = w.residual;
        forward_solve(l, size, w.z.data());
        const double z_last = w.z[last];
        sum[0] += std::log(l[last * size + last]) + 0.5 * z_last * z_last + log_2pi_half;
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
        kernel->add_parameter_gradient_serially(w.prepared.view(d), w.prepared.view(d), w.weights.data(), gradient);
        gradient[noise_index] += noise * trace;  // ∂A/∂log σ² = σ² I
        for (std::size_t q = 0; q < p; ++q) {
          double projection = 0.0;
          for (std::size_t j = 0; j < size; ++j) projection += w.basis[j * p + q] * w.u[j];
          gradient[kernel_parameters + q] -= z_last * projection;
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
  result.gradient.assign(values - 1, 0.0);
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    result.value += sums[chunk * values];
    for (std::size_t j = 0; j + 1 < values; ++j) result.gradient[j] += sums[chunk * values + 1 + j];
  }
  return result;
}

}  // namespace gpstream

#include "engine/core/error.h"
#include "engine/kernels/kernel.h"
#include "engine/kernels/kernel_implementations.h"

#include <tbb/parallel_for.h>

#include <array>
#include <cmath>

namespace gpstream {
namespace {

// Every kernel's names: the canonical one first, then its aliases (today's names, kept for old files and scripts).
struct KernelNames {
  KernelType type;
  std::array<const char*, 2> names;
};
constexpr std::array<KernelNames, 6> kKernels = {{{KernelType::squared_exponential_ard, {"rbf", "se-ard"}},
                                                  {KernelType::squared_exponential, {"se", nullptr}},
                                                  {KernelType::matern12, {"matern12", "exponential"}},
                                                  {KernelType::matern32, {"matern32", nullptr}},
                                                  {KernelType::matern52, {"matern52", nullptr}},
                                                  {KernelType::histogram_intersection, {"hik", nullptr}}}};

void check_positive(double value, const char* what) {
  GPSTREAM_CHECK(std::isfinite(value) && value > 0.0, "the {} must be a positive finite number, not {}", what, value);
}

}  // namespace

std::string kernel_type_name(KernelType type) {
  for (const KernelNames& kernel : kKernels) {
    if (kernel.type == type) return kernel.names[0];
  }
  return "unknown";
}

KernelType parse_kernel_type(const std::string& name) {
  for (const KernelNames& kernel : kKernels) {
    for (const char* known : kernel.names) {
      if (known != nullptr && name == known) return kernel.type;
    }
  }
  GPSTREAM_THROW("unknown kernel \"{}\" (choose {})", name, kKernelNames);
}

std::size_t default_lengthscale_count(KernelType type, std::size_t d) {
  switch (type) {
    case KernelType::squared_exponential:
      return 1;
    case KernelType::histogram_intersection:
      return 0;
    default:
      return d;
  }
}

std::string kernel_name(const KernelHyperparameters& hyperparameters) {
  std::string name = kernel_type_name(hyperparameters.type);
  for (const KernelTerm& term : hyperparameters.added) name += "+" + kernel_type_name(term.type);
  return name;
}

KernelHyperparameters parse_kernel_shape(const std::string& name) {
  KernelHyperparameters shape;
  std::size_t start = 0;
  for (bool first = true;; first = false) {
    const std::size_t plus = name.find('+', start);
    const KernelType type = parse_kernel_type(name.substr(start, plus == std::string::npos ? plus : plus - start));
    if (first) {
      shape.type = type;
    } else {
      shape.added.push_back({type, {}, 1.0});
    }
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  return shape;
}

std::size_t Kernel::parameter_count() const {
  std::size_t count = hyperparameters_.lengthscales.size() + 2;  // with the noise's slot
  for (const KernelTerm& term : hyperparameters_.added) count += term.lengthscales.size() + 1;
  return count;
}

double gamma_from_lengthscale(double lengthscale) { return 1.0 / (2.0 * lengthscale * lengthscale); }
double lengthscale_from_gamma(double gamma) { return std::sqrt(1.0 / (2.0 * gamma)); }

void Kernel::add_parameter_gradient(const PreparedView& a, const PreparedView& b, const double* weights,
                                    double* gradient) const {
  const std::size_t parameters = parameter_count();
  constexpr std::size_t kChunkRows = 32;
  const std::size_t chunks = (a.count + kChunkRows - 1) / kChunkRows;
  std::vector<double> partial(chunks * parameters, 0.0);
  const std::size_t d = dimension_;
  tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t chunk) {
    const std::size_t first = chunk * kChunkRows;
    const std::size_t rows = std::min(kChunkRows, a.count - first);
    const PreparedView slice{a.values + first * d, a.squared_norms + first, rows};
    add_parameter_gradient_rows(slice, b, weights + first * b.count, &partial[chunk * parameters]);
  });
  for (std::size_t chunk = 0; chunk < chunks; ++chunk)
    for (std::size_t p = 0; p < parameters; ++p) gradient[p] += partial[chunk * parameters + p];
}

std::unique_ptr<Kernel> make_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension) {
  GPSTREAM_CHECK(dimension > 0, "a kernel needs at least one input dimension");
  if (!hyperparameters.added.empty()) return detail::make_sum_kernel(hyperparameters, dimension);
  check_positive(hyperparameters.signal_variance, "signal variance");
  check_positive(hyperparameters.noise_variance, "noise variance");
  GPSTREAM_CHECK(std::isfinite(hyperparameters.signal_variance + hyperparameters.noise_variance),
                 "the signal variance {} plus the noise variance {} overflows a double",
                 hyperparameters.signal_variance, hyperparameters.noise_variance);
  for (const double lengthscale : hyperparameters.lengthscales) {
    check_positive(lengthscale, "lengthscale");
    // Inputs are scaled by 1/ℓ and squared norms of scaled rows are summed:
    // below 1e-100 they overflow and the kernel values become NaN.
    GPSTREAM_CHECK(
        lengthscale >= kMinimumLengthscale,
        "the lengthscale {:g} is too small: distances scaled by 1/lengthscale overflow "
        "a double (give lengthscales of at least {:g}; with standardised inputs, useful ones are 1e-3 to 1e5)",
        lengthscale, kMinimumLengthscale);
  }
  const std::size_t given = hyperparameters.lengthscales.size();
  const std::string name = kernel_type_name(hyperparameters.type);
  switch (hyperparameters.type) {
    case KernelType::squared_exponential:
      GPSTREAM_CHECK(given == 1, "the se kernel takes one lengthscale for all inputs, but {} were given", given);
      break;
    case KernelType::squared_exponential_ard:
    case KernelType::matern12:
    case KernelType::matern32:
    case KernelType::matern52:
      GPSTREAM_CHECK(given == dimension || given == 1,
                     "the {} kernel needs {} lengthscales (one per input) or one for all, but {} were given", name,
                     dimension, given);
      break;
    case KernelType::histogram_intersection:
      GPSTREAM_CHECK(given == 0, "the hik kernel has no lengthscales, but {} were given", given);
      return detail::make_histogram_intersection_kernel(hyperparameters, dimension);
  }
  return detail::make_stationary_kernel(hyperparameters, dimension);
}

}  // namespace gpstream

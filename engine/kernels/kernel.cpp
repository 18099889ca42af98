#include "engine/kernels/kernel.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/kernels/kernel_implementations.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace gpstream {
namespace {

void check_positive(double value, const char* what) {
  GPSTREAM_CHECK_ARGUMENT(std::isfinite(value) && value > 0.0, "the {} must be a positive finite number, not {}", what,
                          value);
}

}  // namespace

namespace detail {

// The registry's entries, each defined in its family's file.
#define GPSTREAM_KERNEL_FAMILY(identifier) extern const KernelFamily identifier##_family;
#include "engine/kernels/families/kernel_families.def"
#undef GPSTREAM_KERNEL_FAMILY

namespace {
constexpr const KernelFamily* kFamilies[] = {
#define GPSTREAM_KERNEL_FAMILY(identifier) &identifier##_family,
#include "engine/kernels/families/kernel_families.def"
#undef GPSTREAM_KERNEL_FAMILY
};
}  // namespace

std::span<const KernelFamily* const> kernel_families() { return kFamilies; }

const KernelFamily& kernel_family(KernelType type) {
  const auto index = static_cast<std::size_t>(type);
  GPSTREAM_CHECK(index < std::size(kFamilies), "kernel type {} has no entry in the kernel registry", index);
  return *kFamilies[index];
}

}  // namespace detail

std::string kernel_type_name(KernelType type) { return detail::kernel_family(type).names[0]; }

std::vector<KernelType> kernel_types() {
  std::vector<KernelType> types;
  for (std::size_t index = 0; index < detail::kernel_families().size(); ++index)
    types.push_back(static_cast<KernelType>(index));
  return types;
}

std::string kernel_names() {
  std::string text;
  const std::span<const detail::KernelFamily* const> families = detail::kernel_families();
  for (std::size_t k = 0; k < families.size(); ++k) {
    if (k > 0) text += k + 1 == families.size() ? " or " : ", ";
    text += families[k]->names[0];
    if (families[k]->names[1] != nullptr) text += fmt::format(" (alias {})", families[k]->names[1]);
  }
  return text;
}

KernelType parse_kernel_type(const std::string& name) {
  for (const KernelType type : kernel_types()) {
    for (const char* known : detail::kernel_family(type).names) {
      if (known != nullptr && name == known) return type;
    }
  }
  GPSTREAM_THROW_ARGUMENT("unknown kernel \"{}\" (choose {})", name, kernel_names());
}

bool is_stationary(KernelType type) { return detail::kernel_family(type).stationary != nullptr; }

double spectral_smoothness(KernelType type) {
  const detail::KernelFamily& family = detail::kernel_family(type);
  GPSTREAM_CHECK(family.stationary != nullptr, "the {} kernel is not stationary: it has no spectral density",
                 family.names[0]);
  return family.stationary->smoothness;
}

KernelTerm::KernelTerm(KernelType family, std::vector<double> lengthscales_of_inputs, double signal)
    : lengthscales(std::move(lengthscales_of_inputs)), signal_variance(signal) {
  set_type(family);
}

void KernelTerm::set_type(KernelType family) {
  type = family;
  family_parameters.clear();
  for (const FamilyParameterSpec& spec : family_parameter_specs(type)) family_parameters.push_back(spec.start);
}

KernelHyperparameters KernelHyperparameters::of_terms(std::span<const KernelTerm> terms, double noise_variance) {
  GPSTREAM_CHECK(!terms.empty(), "a kernel needs at least one term");
  KernelHyperparameters h;
  static_cast<KernelTerm&>(h) = terms.front();
  h.noise_variance = noise_variance;
  h.added.assign(terms.begin() + 1, terms.end());
  return h;
}

std::vector<KernelTerm> KernelHyperparameters::terms() const {
  std::vector<KernelTerm> all = {*this};
  all.insert(all.end(), added.begin(), added.end());
  return all;
}

std::span<const FamilyParameterSpec> family_parameter_specs(KernelType type) {
  return detail::kernel_family(type).parameters;
}

bool is_stationary(const KernelHyperparameters& hyperparameters) {
  for (std::size_t t = 0; t < hyperparameters.term_count(); ++t)
    if (!is_stationary(hyperparameters.term(t).type)) return false;
  return true;
}

std::size_t default_lengthscale_count(KernelType type, std::size_t d) {
  switch (detail::kernel_family(type).lengthscales) {
    case detail::Lengthscales::one:
      return 1;
    case detail::Lengthscales::none:
      return 0;
    case detail::Lengthscales::per_input:
      break;
  }
  return d;
}

std::string kernel_name(const KernelHyperparameters& hyperparameters) {
  std::string name = kernel_type_name(hyperparameters.type);
  for (std::size_t t = 1; t < hyperparameters.term_count(); ++t)
    name += "+" + kernel_type_name(hyperparameters.term(t).type);
  return name;
}

KernelHyperparameters parse_kernel_shape(const std::string& name) {
  KernelHyperparameters shape;
  std::size_t start = 0;
  for (bool first = true;; first = false) {
    const std::size_t plus = name.find('+', start);
    const KernelTerm term(parse_kernel_type(name.substr(start, plus == std::string::npos ? plus : plus - start)), {},
                          1.0);
    if (first) {
      static_cast<KernelTerm&>(shape) = term;
    } else {
      shape.added.push_back(term);
    }
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  return shape;
}

// The layout's length (kernel_parameters.h) without making it: called for every block of a likelihood.
std::size_t Kernel::parameter_count() const {
  std::size_t count = 1;  // σ²
  for (std::size_t t = 0; t < hyperparameters_.term_count(); ++t) {
    const KernelTerm& term = hyperparameters_.term(t);
    count += term.lengthscales.size() + 1 + term.family_parameters.size();
  }
  return count;
}

std::vector<double> conditioning_scale(const KernelHyperparameters& hyperparameters, std::size_t d) {
  std::vector<double> scale(d, 1.0);
  const std::vector<double>& lengthscales = hyperparameters.lengthscales;
  for (std::size_t l = 0; l < d && !lengthscales.empty(); ++l) {
    scale[l] = 1.0 / lengthscales[lengthscales.size() == 1 ? 0 : l];
  }
  return scale;
}

double gamma_from_lengthscale(double lengthscale) { return 1.0 / (2.0 * lengthscale * lengthscale); }
double lengthscale_from_gamma(double gamma) { return std::sqrt(1.0 / (2.0 * gamma)); }

void Kernel::evaluate_single(const PreparedView& a, const PreparedView& b, float* block) const {
  std::vector<double> exact(checked_multiply(a.count, b.count));
  evaluate_entrywise(a, b, exact.data());
  std::transform(exact.begin(), exact.end(), block, [](double value) { return static_cast<float>(value); });
}

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
    const double* chunk_weights = weights + first * b.count;
    add_parameter_gradient_rows(slice, b, std::span(&chunk_weights, 1), &partial[chunk * parameters]);
  });
  for (std::size_t chunk = 0; chunk < chunks; ++chunk)
    for (std::size_t p = 0; p < parameters; ++p) gradient[p] += partial[chunk * parameters + p];
}

std::unique_ptr<Kernel> make_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension) {
  GPSTREAM_CHECK(dimension > 0, "a kernel needs at least one input dimension");
  if (hyperparameters.term_count() > 1) return detail::make_sum_kernel(hyperparameters, dimension);
  check_positive(hyperparameters.signal_variance, "signal variance");
  check_positive(hyperparameters.noise_variance, "noise variance");
  GPSTREAM_CHECK_ARGUMENT(std::isfinite(hyperparameters.signal_variance + hyperparameters.noise_variance),
                          "the signal variance {} plus the noise variance {} overflows a double",
                          hyperparameters.signal_variance, hyperparameters.noise_variance);
  for (const double lengthscale : hyperparameters.lengthscales) {
    check_positive(lengthscale, "lengthscale");
    // Inputs are scaled by 1/ℓ and squared norms of scaled rows are summed:
    // below 1e-100 they overflow and the kernel values become NaN.
    GPSTREAM_CHECK_ARGUMENT(
        lengthscale >= kMinimumLengthscale,
        "the lengthscale {:g} is too small: distances scaled by 1/lengthscale overflow "
        "a double (give lengthscales of at least {:g}; with standardised inputs, useful ones are 1e-3 to 1e5)",
        lengthscale, kMinimumLengthscale);
  }
  const std::size_t given = hyperparameters.lengthscales.size();
  const detail::KernelFamily& family = detail::kernel_family(hyperparameters.type);
  const char* name = family.names[0];
  if (hyperparameters.family_parameters.size() != family.parameters.size()) {
    std::string names;
    for (const FamilyParameterSpec& spec : family.parameters)
      names += (names.empty() ? "" : ", ") + std::string(spec.name);
    GPSTREAM_THROW_ARGUMENT("the {} kernel takes its own parameters [{}], but {} values were given", name, names,
                            hyperparameters.family_parameters.size());
  }
  for (std::size_t f = 0; f < family.parameters.size(); ++f)
    check_positive(hyperparameters.family_parameters[f], family.parameters[f].name);
  switch (family.lengthscales) {
    case detail::Lengthscales::one:
      GPSTREAM_CHECK_ARGUMENT(given == 1, "the {} kernel takes one lengthscale for all inputs, but {} were given", name,
                              given);
      break;
    case detail::Lengthscales::per_input:
      GPSTREAM_CHECK_ARGUMENT(given == dimension || given == 1,
                              "the {} kernel needs {} lengthscales (one per input) or one for all, but {} were given",
                              name, dimension, given);
      break;
    case detail::Lengthscales::none:
      GPSTREAM_CHECK_ARGUMENT(given == 0, "the {} kernel has no lengthscales, but {} were given", name, given);
      break;
  }
  return family.stationary != nullptr ? detail::make_stationary_kernel(hyperparameters, dimension, *family.stationary)
                                      : family.make(hyperparameters, dimension);
}

}  // namespace gpstream

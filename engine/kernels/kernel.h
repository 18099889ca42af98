// Kernel: the covariance function k(x, z) of the GP, and the noise σ² that
// turns K into K̄ = K + σ²I.
//
// Every kernel here is evaluated in blocks: prepare() turns a set of rows
// into whatever form makes evaluation cheap (scaled copies and squared norms
// for stationary kernels), and evaluate() fills a dense block K(A, B) — with
// one GEMM for the cross terms and one vectorised pass, never a scalar
// double loop over pairs. Implementations are stateless after construction
// and safe to call from many threads at once.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpstream {

// The covariance families [RW06 §4.2]: one per line of
// families/kernel_families.def, each in its own file of families/ with its
// formula. The stationary ones are functions of
// r² = Σ_l (x_l − z_l)² / ℓ_l², with one lengthscale per input (ARD) or one
// for all; sample paths of a Matérn-ν GP are ⌈ν⌉ − 1 times differentiable,
// so rough real data usually prefer the Matérn kernels to the infinitely
// smooth squared exponential.
enum class KernelType {
#define GPSTREAM_KERNEL_FAMILY(identifier) identifier,
#include "engine/kernels/families/kernel_families.def"
#undef GPSTREAM_KERNEL_FAMILY
};

// The canonical name ("rbf", "matern32", …), as files and reports write it.
std::string kernel_type_name(KernelType type);
// Parses a canonical name or an alias ("se-ard", "exponential"); throws naming the valid choices.
KernelType parse_kernel_type(const std::string& name);
// Every kernel of the registry, for help texts and errors: "rbf (alias se-ard), se, …, matern72 or hik".
std::string kernel_names();
// Every kernel type of the registry, in its order.
std::vector<KernelType> kernel_types();
// The kernels a search over families compares (`--kernel auto`): the
// stationary ARD ones, smoothest first.
// The name that asks for that search instead of one kernel ("auto").
inline constexpr std::string_view kAutomaticKernel = "auto";
inline constexpr KernelType kAutoKernelCandidates[] = {KernelType::squared_exponential_ard, KernelType::matern52,
                                                       KernelType::matern32, KernelType::matern12};
// The smoothness ν of a stationary family's spectral density — Matérn ν
// (1/2, 3/2, 5/2, 7/2), infinity for the squared exponential — which random
// Fourier features sample (kernels/random_features.h); throws for a kernel
// that is not stationary (hik).
double spectral_smoothness(KernelType type);
// Whether a family is a function of x − z alone (hik is not).
bool is_stationary(KernelType type);
// How many lengthscales a kernel of this type takes on d inputs by default
// (one per input for ARD kernels, one for se, none for hik).
std::size_t default_lengthscale_count(KernelType type, std::size_t d);

// A parameter a family has beyond its lengthscales and s² (rational
// quadratic's α), declared by its registry entry: storage, learning,
// descriptions and the front ends iterate over these declarations
// (kernel_parameters.h) instead of knowing the family. Positive and
// dimensionless: learning moves its logarithm, and standardising the
// inputs or targets leaves it as it is.
struct FamilyParameterSpec {
  const char* name;     // as files, reports and Python write it
  double start;         // where learning starts it, and its value when none is given
  double lower, upper;  // the range learning keeps it in
  const char* meaning;  // one line, for help texts
};
// The family's own parameters, in its registry entry's order (empty for most).
std::span<const FamilyParameterSpec> family_parameter_specs(KernelType type);

// One covariance function: its family, lengthscales, signal variance and its family's own parameters.
struct KernelTerm {
  KernelTerm() = default;
  // The family's own parameters at their declared starts.
  KernelTerm(KernelType family, std::vector<double> lengthscales_of_inputs, double signal);
  // Another family, its own parameters at their declared starts.
  void set_type(KernelType family);

  KernelType type = KernelType::squared_exponential_ard;
  std::vector<double> lengthscales;       // d values for ARD kernels; one for isotropic ones
  double signal_variance = 1.0;           // s²
  std::vector<double> family_parameters;  // family_parameter_specs(type)'s values, in order
};

// k = k₁ + k₂ + … + σ²δ: the first term (this struct's own KernelTerm
// values), the shared noise, and the terms added to it. A sum of two ARD
// kernels on every input models structure of two scales — short-range
// variation plus a smooth trend in a covariate, whose ARD lengthscales
// switch the other inputs off — so that far from the training rows
// predictions keep the trend [RW06 §4.2.4, §5.4.3]; a single stationary
// kernel forgets every input at once. Code that treats every term alike
// goes through term_count()/term(), and code that treats every value alike
// through kernel_parameters.h's layout.
struct KernelHyperparameters : KernelTerm {
  KernelHyperparameters() = default;
  KernelHyperparameters(KernelType family, std::vector<double> first_lengthscales, double first_signal_variance,
                        double noise, std::vector<KernelTerm> further_terms = {})
      : KernelTerm(family, std::move(first_lengthscales), first_signal_variance),
        noise_variance(noise),
        added(std::move(further_terms)) {}

  double noise_variance = 0.1;    // σ²
  std::vector<KernelTerm> added;  // further terms (empty: one kernel)

  // A sum of `terms` (at least one) with noise σ².
  static KernelHyperparameters of_terms(std::span<const KernelTerm> terms, double noise_variance);
  std::vector<KernelTerm> terms() const;
  std::size_t term_count() const { return 1 + added.size(); }
  const KernelTerm& term(std::size_t t) const { return t == 0 ? *this : added.at(t - 1); }
  KernelTerm& term(std::size_t t) { return t == 0 ? *this : added.at(t - 1); }
};

// The scaling of the inputs in which the kernel's first term sees distances,
// x̃_l = x_l / ℓ_l (d values; 1 where it has no lengthscales): the nearest
// neighbours of a Vecchia approximation. A learned sum's shortest term comes
// first (hyper/model_learning.h), so its sets follow the finest scale.
std::vector<double> conditioning_scale(const KernelHyperparameters& hyperparameters, std::size_t d);

// "matern12", or "matern12+rbf" for a sum.
std::string kernel_name(const KernelHyperparameters& hyperparameters);
// Whether every term of the kernel is a function of x − z alone (the
// stationary families and their sums; not hik).
bool is_stationary(const KernelHyperparameters& hyperparameters);
// Parses a kernel name or a sum of them ("matern12+rbf"); the terms' values are left empty.
KernelHyperparameters parse_kernel_shape(const std::string& name);

// The smallest lengthscale a kernel takes: inputs are scaled by 1/ℓ and
// their squares summed, which overflows a double below it.
inline constexpr double kMinimumLengthscale = 1e-100;

// γ_l = 1 / (2 ℓ_l²) and back: the GBCD paper writes the SE kernel with γ.
double gamma_from_lengthscale(double lengthscale);
double lengthscale_from_gamma(double gamma);

// A run of prepared rows, as evaluate() reads them (a view: owns nothing).
struct PreparedView {
  const double* values = nullptr;         // count×d, row-major
  const double* squared_norms = nullptr;  // count
  std::size_t count = 0;
};

// Rows of a block in the form a kernel evaluates fastest.
struct PreparedRows {
  std::vector<double> values;         // count×d, row-major (scaled for stationary kernels)
  std::vector<double> squared_norms;  // count
  std::size_t count = 0;

  // Rows [first, first + rows) as a view, for a d-input kernel.
  PreparedView view(std::size_t d, std::size_t first = 0, std::size_t rows = static_cast<std::size_t>(-1)) const {
    const std::size_t n = rows == static_cast<std::size_t>(-1) ? count - first : rows;
    return {values.data() + first * d, squared_norms.data() + first, n};
  }
  // Appends row `position` of `from` (prepared rows are independent of each other).
  void append(const PreparedRows& from, std::size_t position, std::size_t d) {
    const auto begin = from.values.begin() + static_cast<std::ptrdiff_t>(position * d);
    values.insert(values.end(), begin, begin + static_cast<std::ptrdiff_t>(d));
    squared_norms.push_back(from.squared_norms[position]);
    ++count;
  }
};

// The precision of the kernel entries a product runs on: double
// (evaluate_entrywise), or single (evaluate_single) inside a loop whose
// stopping decisions an exact product in double certifies.
enum class Precision { double_precision, single_precision };

class Kernel {
 public:
  virtual ~Kernel() = default;

  const KernelHyperparameters& hyperparameters() const { return hyperparameters_; }
  std::size_t dimension() const { return dimension_; }
  double noise_variance() const { return hyperparameters_.noise_variance; }
  std::string name() const { return kernel_name(hyperparameters_); }

  // Overwrites `out` with `count` rows (count×d, row-major) prepared for
  // evaluate(). Rows are prepared independently of each other, so prepared
  // rows may be copied, sliced and appended to one another.
  virtual void prepare(const double* rows, std::size_t count, PreparedRows& out) const = 0;
  // block[i * b.count + j] = k(a_i, b_j), without noise.
  virtual void evaluate(const PreparedView& a, const PreparedView& b, double* block) const = 0;
  void evaluate(const PreparedRows& a, const PreparedRows& b, double* block) const {
    evaluate(a.view(dimension_), b.view(dimension_), block);
  }
  // As evaluate(), but each k(a_i, b_j) is computed from a_i and b_j alone,
  // in a fixed order of operations, so that its value does not depend on
  // the other rows of the block (a GEMM's result does: OpenBLAS picks its
  // kernels by the block's shape). The kernel-column cache relies on it: a
  // column read from the cache equals the same column computed now.
  virtual void evaluate_entrywise(const PreparedView& a, const PreparedView& b, double* block) const {
    evaluate(a, b, block);  // for kernels whose evaluate() already is
  }
  // As evaluate(), but rounded: the function of the distance in single
  // precision where the kernel has such a path (the stationary families:
  // a relative error of about 1e-6, at about 0.6× the cost of an entry at
  // d = 8), else evaluate() itself. For values that only rank candidates —
  // GBCD's greedy scores — never for products that enter α or g.
  virtual void evaluate_rounded(const PreparedView& a, const PreparedView& b, double* block) const {
    evaluate(a, b, block);
  }
  // As evaluate_entrywise(), in single precision (float entries, the same
  // bits wherever an entry is computed): what single-precision products
  // (`precision` auto) run on, inside a loop a double residual certifies
  // (solvers/mixed_precision.h),
  // never where α or a reported figure is taken from them directly. The
  // stationary families compute D = Σ_l (ã_l − b̃_l)² and k(D) in float,
  // twice the vector lanes: within a few 1e-7 of s² of evaluate()'s entries.
  // Other kernels: evaluate_entrywise() rounded to float.
  virtual void evaluate_single(const PreparedView& a, const PreparedView& b, float* block) const;
  // k(x, x) for one row, without noise.
  virtual double self_covariance(const double* x) const = 0;
  // k(x, x) when it is the same for every x (stationary kernels): diag(K̄) then needs no data pass.
  virtual std::optional<double> constant_self_covariance() const { return std::nullopt; }

  // The log-parameters θ in the order of kernel_parameters.h's layout
  // (log_parameters()): the first term's log ℓ…, log s² and its family's
  // own, log σ², then each added term's; the kernel's own are all but the
  // noise, at noise_index().
  std::size_t parameter_count() const;
  std::size_t signal_index() const { return hyperparameters_.lengthscales.size(); }
  std::size_t noise_index() const {
    return hyperparameters_.lengthscales.size() + 1 + hyperparameters_.family_parameters.size();
  }
  // gradient[p] += Σ_ij W_ij ∂k(a_i, b_j)/∂θ_p with W = weights (a.count ×
  // b.count, row-major), for every θ_p but the noise (gradient has
  // parameter_count() entries; the noise's is left as it is): the
  // contraction every likelihood gradient needs, without forming the a×b
  // matrices ∂K/∂θ_p. Parallel over fixed chunks of rows summed in order,
  // so the result does not depend on the thread count. Every kernel here is
  // proportional to s² and k(x, x) depends on nothing else, so
  // Σ_i w_i ∂k(x_i, x_i)/∂θ adds Σ_i w_i k(x_i, x_i) to the log s² component only.
  void add_parameter_gradient(const PreparedView& a, const PreparedView& b, const double* weights,
                              double* gradient) const;
  // The same on the calling thread: for many small blocks each on its own thread (a Vecchia likelihood's).
  void add_parameter_gradient_serially(const PreparedView& a, const PreparedView& b, const double* weights,
                                       double* gradient) const {
    add_parameter_gradient_rows(a, b, std::span(&weights, 1), gradient);
  }
  // On the calling thread, for several weight blocks W_w at once (each
  // a.count × b.count): gradients[w·P + p] += Σ_ij (W_w)_ij ∂k(a_i, b_j)/∂θ_p,
  // P = parameter_count(), each pair's kernel value and slope computed once
  // for all of them (the all-rows stochastic gradient's pass,
  // hyper/stochastic_gradient.h).
  void add_parameter_gradients_serially(const PreparedView& a, const PreparedView& b,
                                        std::span<const double* const> weights, double* gradients) const {
    add_parameter_gradient_rows(a, b, weights, gradients);
  }

 protected:
  // add_parameter_gradients_serially: rows a (a few) against all of b, serially.
  virtual void add_parameter_gradient_rows(const PreparedView& a, const PreparedView& b,
                                           std::span<const double* const> weights, double* gradients) const = 0;

  Kernel(KernelHyperparameters hyperparameters, std::size_t dimension)
      : hyperparameters_(std::move(hyperparameters)), dimension_(dimension) {}

 private:
  KernelHyperparameters hyperparameters_;
  std::size_t dimension_;
};

// Validates the hyperparameters against the input dimension d (positive and
// finite values, one lengthscale per input for ARD or exactly one for
// isotropic kernels) and builds the kernel. Throws a clear Error otherwise.
std::unique_ptr<Kernel> make_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension);

}  // namespace gpstream

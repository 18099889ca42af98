// A sum of stationary kernels, k = k₁ + k₂ + … (kernel.h, KernelHyperparameters' terms).
// Each term scales the inputs its own way, so the prepared rows are the raw
// rows, and each evaluation prepares them for every term: O((a + b)·d) per
// term beside the O(a·b·d) of the block itself. Terms are added in order,
// each entrywise when asked, so the cache's guarantee (a column read back
// equals one computed now) holds for the sum.
#include "engine/core/error.h"
#include "engine/kernels/kernel_implementations.h"
#include "engine/kernels/kernel_parameters.h"

#include <algorithm>
#include <vector>

namespace gpstream::detail {
namespace {

class SumKernel final : public Kernel {
 public:
  SumKernel(const KernelHyperparameters& hyperparameters, std::size_t dimension,
            std::vector<std::unique_ptr<Kernel>> terms)
      : Kernel(hyperparameters, dimension), terms_(std::move(terms)) {
    // Where each term's own parameters start in the layout (the noise's slot follows the first term's).
    const std::vector<KernelParameter> layout = parameter_layout(hyperparameters);
    for (std::size_t k = 0; k < layout.size(); ++k) {
      if (layout[k].kind != KernelParameterKind::noise_variance && (k == 0 || layout[k - 1].term != layout[k].term))
        offsets_.push_back(k);
    }
  }

  void prepare(const double* rows, std::size_t count, PreparedRows& out) const override {
    out.count = count;
    out.values.assign(rows, rows + count * dimension());
    out.squared_norms.assign(count, 0.0);
  }

  using Kernel::evaluate;
  void evaluate(const PreparedView& a, const PreparedView& b, double* block) const override {
    accumulate(a, b, block, &Kernel::evaluate);
  }
  void evaluate_entrywise(const PreparedView& a, const PreparedView& b, double* block) const override {
    accumulate(a, b, block, &Kernel::evaluate_entrywise);
  }
  void evaluate_rounded(const PreparedView& a, const PreparedView& b, double* block) const override {
    accumulate(a, b, block, &Kernel::evaluate_rounded);
  }
  void evaluate_single(const PreparedView& a, const PreparedView& b, float* block) const override {
    accumulate(a, b, block, &Kernel::evaluate_single);
  }

  double self_covariance(const double* x) const override {
    double sum = 0.0;
    for (const auto& term : terms_) sum += term->self_covariance(x);
    return sum;
  }
  std::optional<double> constant_self_covariance() const override {
    double sum = 0.0;
    for (const auto& term : terms_) {
      const std::optional<double> value = term->constant_self_covariance();
      if (!value) return std::nullopt;
      sum += *value;
    }
    return sum;
  }

 protected:
  // Each term's gradient block goes to its offset in every weight's P values.
  void add_parameter_gradient_rows(const PreparedView& a, const PreparedView& b, std::span<const double* const> weights,
                                   double* gradients) const override {
    const std::size_t parameters = parameter_count();
    PreparedRows term_a, term_b;
    std::vector<double> term_gradients;
    for (std::size_t t = 0; t < terms_.size(); ++t) {
      terms_[t]->prepare(a.values, a.count, term_a);
      terms_[t]->prepare(b.values, b.count, term_b);
      const std::size_t term_parameters = terms_[t]->parameter_count();
      term_gradients.assign(weights.size() * term_parameters, 0.0);
      terms_[t]->add_parameter_gradients_serially(term_a.view(dimension()), term_b.view(dimension()), weights,
                                                  term_gradients.data());
      // A term's P values are its own, then its (unused) noise slot.
      const std::size_t own = term_parameters - 1;
      for (std::size_t w = 0; w < weights.size(); ++w) {
        for (std::size_t p = 0; p < own; ++p)
          gradients[w * parameters + offsets_[t] + p] += term_gradients[w * term_parameters + p];
      }
    }
  }

 private:
  // Σ_t term_t's block, each by `evaluation` (one of Kernel's block evaluations), in its precision.
  template <typename Real>
  void accumulate(const PreparedView& a, const PreparedView& b, Real* block,
                  void (Kernel::*evaluation)(const PreparedView&, const PreparedView&, Real*) const) const {
    if (a.count == 0 || b.count == 0) return;
    PreparedRows term_a, term_b;
    std::vector<Real> term_block(a.count * b.count);
    for (std::size_t t = 0; t < terms_.size(); ++t) {
      terms_[t]->prepare(a.values, a.count, term_a);
      terms_[t]->prepare(b.values, b.count, term_b);
      Real* out = t == 0 ? block : term_block.data();
      ((*terms_[t]).*evaluation)(term_a.view(dimension()), term_b.view(dimension()), out);
      if (t > 0) {
        for (std::size_t k = 0; k < term_block.size(); ++k) block[k] += term_block[k];
      }
    }
  }

  std::vector<std::unique_ptr<Kernel>> terms_;
  std::vector<std::size_t> offsets_;  // where each term's parameters start in the gradient
};

}  // namespace

std::unique_ptr<Kernel> make_sum_kernel(const KernelHyperparameters& hyperparameters, std::size_t dimension) {
  std::vector<std::unique_ptr<Kernel>> terms;
  for (std::size_t t = 0; t < hyperparameters.term_count(); ++t) {
    KernelHyperparameters term;
    static_cast<KernelTerm&>(term) = hyperparameters.term(t);
    term.noise_variance = hyperparameters.noise_variance;
    terms.push_back(make_kernel(term, dimension));
  }
  for (const auto& term : terms) {
    GPSTREAM_CHECK(term->constant_self_covariance().has_value(),
                   "a sum kernel's terms must be stationary (rbf, se or a Matérn), not {}", term->name());
  }
  return std::make_unique<SumKernel>(hyperparameters, dimension, std::move(terms));
}

}  // namespace gpstream::detail

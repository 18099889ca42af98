// Batched predictive variances against the Cholesky closed form.
#include "engine/data/standardisation.h"
#include "engine/linalg/cholesky.h"
#include "engine/models/dense_variance.h"
#include "problems.h"

#include <doctest/doctest.h>

using namespace gpstream;
using namespace gpstream::testing;

namespace {

// K** − k*ᵀK̄⁻¹k* = K** − ‖L⁻¹k*‖² for each test row, with K̄ = L Lᵀ.
std::vector<double> closed_form_variance(const KernelHyperparameters& h, const Problem& training, const Problem& test) {
  const std::size_t n = training.rows();
  std::vector<double> factor = reference_kernel_matrix(h, training);
  cholesky_factor(factor.data(), n, "K̄");
  std::vector<double> variance;
  for (std::size_t t = 0; t < test.rows(); ++t) {
    const double* z = &test.x[t * test.d];
    std::vector<double> k(n);
    for (std::size_t i = 0; i < n; ++i) k[i] = reference_kernel(h, &training.x[i * training.d], z, training.d);
    // Forward substitution L v = k*.
    double quadratic = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      double sum = k[i];
      for (std::size_t j = 0; j < i; ++j) sum -= factor[i * n + j] * k[j];
      k[i] = sum / factor[i * n + i];
      quadratic += k[i] * k[i];
    }
    variance.push_back(reference_kernel(h, z, z, training.d) - quadratic);
  }
  return variance;
}

VariancePrediction batched(const Problem& training, const Problem& test, const KernelHyperparameters& h,
                           VarianceOptions options, bool streamed = false, RunObserver* observer = nullptr) {
  InMemoryRowSource resident = training.source();
  StandardisedRowSource wrapped(resident, Standardisation::identity());
  RowSource& rows = streamed ? static_cast<RowSource&>(wrapped) : resident;
  const auto kernel = make_kernel(h, training.d);
  Context context({.memory_budget_bytes = 1u << 20});
  KernelMatrix matrix(context, rows, *kernel);
  const Context::ObserverScope observe(
      context, observer != nullptr ? std::vector<RunObserver*>{observer} : std::vector<RunObserver*>{});
  return predict_latent_variance(matrix, test.x.data(), test.rows(), options);
}

double max_relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return worst;
}

}  // namespace

TEST_CASE("batched variances equal per-row variances and the Cholesky closed form (relative error <= 1e-6)") {
  const Problem training = make_problem(400, 3, 51);
  const Problem test = make_problem(45, 3, 52);
  const KernelHyperparameters h = se_ard(3, 0.8, 0.05);
  const std::vector<double> exact = closed_form_variance(h, training, test);
  VarianceOptions options;
  options.tolerance = 1e-10;
  options.active_set_size = 60;

  options.batch_rows = 1;
  const VariancePrediction per_row = batched(training, test, h, options);
  CHECK(per_row.batches == 45);
  options.batch_rows = 20;  // three batches, the last one partial
  const VariancePrediction in_batches = batched(training, test, h, options);
  CHECK(in_batches.batches == 3);
  options.batch_rows = 0;  // one batch, from the memory budget: more columns than the greedy scores exactly (32)
  const VariancePrediction one_batch = batched(training, test, h, options, /*streamed=*/true);
  CHECK(one_batch.batches == 1);

  for (const VariancePrediction* prediction : {&per_row, &in_batches, &one_batch}) {
    CHECK(prediction->unconverged_rows == 0);
    CHECK(prediction->gradient_max_norm <= 1e-10);
    CHECK(max_relative_error(prediction->latent, exact) <= 1e-6);
  }
  CHECK(max_relative_error(in_batches.latent, per_row.latent) <= 1e-6);
  CHECK(max_relative_error(one_batch.latent, per_row.latent) <= 1e-6);
}

TEST_CASE("every BCD policy and every kernel give the closed-form variance") {
  const Problem training = make_problem(200, 2, 53);
  const Problem test = make_problem(12, 2, 54);
  const std::vector<KernelHyperparameters> kernels = {se_ard(2, 0.6, 0.1),
                                                      {KernelType::matern52, {0.9, 1.4}, 1.3, 0.02},
                                                      {KernelType::squared_exponential, {1.1}, 0.7, 0.3}};
  for (const KernelHyperparameters& h : kernels) {
    const std::vector<double> exact = closed_form_variance(h, training, test);
    for (const char* policy : {"gbcd", "bcd-cyclic", "bcd-gradient"}) {
      CAPTURE(policy);
      CAPTURE(kernel_type_name(h.type));
      VarianceOptions options;
      options.policy = policy;
      options.tolerance = 1e-8;
      options.active_set_size = 50;
      CHECK(max_relative_error(batched(training, test, h, options).latent, exact) <= 1e-6);
    }
  }
}

TEST_CASE("rows converge and leave the batch one by one, and a row far from the data costs no iteration") {
  const Problem training = make_problem(400, 2, 55);
  Problem test = make_problem(10, 2, 56);
  test.x[0] = 1e3, test.x[1] = 1e3;  // k* = 0: the variance is the prior's
  const KernelHyperparameters h = se_ard(2, 0.7, 0.05);
  VarianceOptions options;
  options.tolerance = 1e-8;
  options.active_set_size = 40;
  // One batch: the rows still open are the total less the rows done.
  struct OpenRows final : RunObserver {
    void on_start(const IterationReport& r) override { open_rows.push_back(r.total - r.done); }
    void on_iteration(const IterationReport& r) override { open_rows.push_back(r.total - r.done); }
    std::vector<std::size_t> open_rows;
  } recorder;
  const VariancePrediction prediction = batched(training, test, h, options, false, &recorder);
  const std::vector<std::size_t>& open_rows = recorder.open_rows;
  REQUIRE(!open_rows.empty());
  CHECK(open_rows.front() == 9);  // the far row is done before the first iteration
  CHECK(open_rows.back() == 0);
  CHECK(std::is_sorted(open_rows.rbegin(), open_rows.rend()));
  CHECK(prediction.latent[0] == doctest::Approx(1.0).epsilon(1e-15));
  // A loose tolerance errs on the large side (−2f underestimates k*ᵀK̄⁻¹k*).
  const std::vector<double> exact = closed_form_variance(h, training, test);
  options.tolerance = 1e-2;
  const VariancePrediction loose = batched(training, test, h, options);
  for (std::size_t t = 0; t < test.rows(); ++t) CHECK(loose.latent[t] >= exact[t] - 1e-12);
}

TEST_CASE("an iteration limit ends the batch and counts the rows left above tolerance") {
  const Problem training = make_problem(300, 2, 57);
  const Problem test = make_problem(5, 2, 58);
  VarianceOptions options;
  options.tolerance = 1e-12;
  options.active_set_size = 10;
  options.max_iterations = 2;
  const VariancePrediction prediction = batched(training, test, se_ard(2, 0.5, 0.01), options);
  CHECK(prediction.iterations == 2);
  CHECK(prediction.unconverged_rows == 5);
  CHECK(prediction.gradient_max_norm > 1e-12);
}

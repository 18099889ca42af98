// Batched predictive variances against the Cholesky closed form.
#include "engine/data/standardisation.h"
#include "engine/linalg/cholesky.h"
#include "engine/core/scratch_store.h"
#include "engine/dense/dense_variance.h"
#include "engine/dense/low_rank_error_bound.h"
#include "problems.h"

#include <doctest/doctest.h>

#include <cstring>
#include <numeric>

using namespace gpstream;
using namespace gpstream::testing;

namespace {

// K** − k*ᵀK̄⁻¹k* = K** − ‖L⁻¹k*‖² for each test row, with K̄ = L Lᵀ, in
// long double (64-bit significand): a reference 2,000 times finer than the
// double-precision routes it checks, so that their errors show at σ²/s² = 1e-9.
std::vector<double> closed_form_variance(const KernelHyperparameters& h, const Problem& training, const Problem& test) {
  const std::size_t n = training.rows();
  const std::vector<double> matrix = reference_kernel_matrix(h, training);
  std::vector<long double> factor(matrix.begin(), matrix.end());
  for (std::size_t j = 0; j < n; ++j) {  // column-by-column Cholesky, lower triangle
    long double pivot = factor[j * n + j];
    for (std::size_t k = 0; k < j; ++k) pivot -= factor[j * n + k] * factor[j * n + k];
    REQUIRE(pivot > 0);
    factor[j * n + j] = std::sqrt(pivot);
    for (std::size_t i = j + 1; i < n; ++i) {
      long double sum = factor[i * n + j];
      for (std::size_t k = 0; k < j; ++k) sum -= factor[i * n + k] * factor[j * n + k];
      factor[i * n + j] = sum / factor[j * n + j];
    }
  }
  std::vector<double> variance;
  for (std::size_t t = 0; t < test.rows(); ++t) {
    const double* z = &test.x[t * test.d];
    std::vector<long double> k(n);
    for (std::size_t i = 0; i < n; ++i) k[i] = reference_kernel(h, &training.x[i * training.d], z, training.d);
    long double quadratic = 0.0L;  // ‖L⁻¹k*‖² by forward substitution
    for (std::size_t i = 0; i < n; ++i) {
      long double sum = k[i];
      for (std::size_t j = 0; j < i; ++j) sum -= factor[i * n + j] * k[j];
      k[i] = sum / factor[i * n + i];
      quadratic += k[i] * k[i];
    }
    variance.push_back(static_cast<double>(reference_kernel(h, z, z, training.d) - quadratic));
  }
  return variance;
}

// A ScratchStore in memory, counting what it is asked to read.
class VectorStore final : public ScratchStore {
 public:
  explicit VectorStore(std::uint64_t doubles) : values_(doubles) {}
  void write(std::uint64_t offset, std::span<const double> values) override {
    REQUIRE(offset + values.size() <= values_.size());
    std::copy(values.begin(), values.end(), values_.begin() + static_cast<std::ptrdiff_t>(offset));
  }
  void read(std::uint64_t offset, std::span<double> values) override {
    REQUIRE(offset + values.size() <= values_.size());
    std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(offset), values.size(), values.begin());
    if (read_ != nullptr) *read_ += values.size();
  }
  std::string where() const override { return "memory"; }
  std::uint64_t* read_ = nullptr;

 private:
  std::vector<double> values_;
};

// The tests bound the latent variance f*, the harder of the two.
VarianceOptions latent_options(double tolerance, std::size_t active_set_size) {
  VarianceOptions options;
  options.tolerance = tolerance;
  options.noisy = false;
  options.active_set_size = active_set_size;
  return options;
}

VariancePrediction batched(const Problem& training, const Problem& test, const KernelHyperparameters& h,
                           VarianceOptions options, bool streamed = false, RunObserver* observer = nullptr,
                           VarianceMethod method = VarianceMethod::gbcd, const VarianceBatchSink& sink = {},
                           bool factor_on_disk = false) {
  InMemoryRowSource resident = training.source();
  StandardisedRowSource wrapped(resident, Standardisation::identity());
  RowSource& rows = streamed ? static_cast<RowSource&>(wrapped) : resident;
  const auto kernel = make_kernel(h, training.d);
  Context context({.memory_budget_bytes = 8u << 20});
  KernelMatrix matrix(context, rows, *kernel);
  const Context::ObserverScope observe(
      context, observer != nullptr ? std::vector<RunObserver*>{observer} : std::vector<RunObserver*>{});
  return predict_latent_variance(matrix, test.x.data(), test.rows(), options, {method, "", factor_on_disk}, sink);
}

// A rough field of long reach with small noise (heaton_sim's Matérn-1/2, in small): 900 training rows in two
// inputs, ~500 of them within reach of a test row (covariance ≥ half the prior), where the local start applies.
struct LongReachField {
  explicit LongReachField(std::size_t test_rows) : test(make_problem(test_rows, 2, 64)) {}
  Problem training = make_problem(900, 2, 63);
  Problem test;
  KernelHyperparameters h{KernelType::matern12, {2.0, 3.0}, 1.0, 2e-3};
};

// Every row's variance an upper bound on the exact one, within `tolerance` of it (the gbcd route's promise).
void check_within_tolerance_from_above(const std::vector<double>& latent, const std::vector<double>& exact,
                                       double tolerance) {
  for (std::size_t t = 0; t < exact.size(); ++t) {
    CAPTURE(t);
    const double error = (latent[t] - exact[t]) / exact[t];
    CHECK(error >= -1e-9);
    CHECK(error <= tolerance);
  }
}

double max_relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return worst;
}

}  // namespace

TEST_CASE("batched variances equal per-row variances and the closed form, by either route") {
  const Problem training = make_problem(400, 3, 51);
  const Problem test = make_problem(45, 3, 52);
  const KernelHyperparameters h = se_ard(3, 0.8, 0.05);
  const std::vector<double> exact = closed_form_variance(h, training, test);
  VarianceOptions options = latent_options(1e-8, 60);

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
    CHECK(prediction->largest_error_bound <= 1e-8);
    CHECK(max_relative_error(prediction->latent, exact) <= 1e-8);  // what the bound promises
  }
  const VariancePrediction cholesky = batched(training, test, h, options, false, nullptr, VarianceMethod::cholesky);
  CHECK(cholesky.batches == 1);
  CHECK(max_relative_error(cholesky.latent, exact) <= 1e-10);
}

TEST_CASE("variances from streamed training rows equal those from resident rows, bitwise, by every route") {
  const Problem training = make_problem(300, 2, 55);
  const Problem test = make_problem(25, 2, 56);
  const KernelHyperparameters h = se_ard(2, 0.7, 0.05);
  VarianceOptions options = latent_options(1e-6, 60);
  options.batch_rows = 10;
  options.neighbours = 40;
  for (const VarianceMethod method : {VarianceMethod::gbcd, VarianceMethod::cholesky, VarianceMethod::nearest}) {
    CAPTURE(to_string(method));
    const VariancePrediction resident = batched(training, test, h, options, false, nullptr, method);
    const VariancePrediction streamed = batched(training, test, h, options, true, nullptr, method);
    CHECK(resident.latent == streamed.latent);
    CHECK(resident.iterations == streamed.iterations);
  }
}

TEST_CASE("the gbcd route with the kernel-column cache gives the same variances bitwise, in batches of the same size") {
  const Problem training = make_problem(300, 2, 57);
  const Problem test = make_problem(40, 2, 58);
  const KernelHyperparameters h = se_ard(2, 0.7, 0.05);
  const auto kernel = make_kernel(h, training.d);
  InMemoryRowSource rows = training.source();
  VarianceOptions options = latent_options(1e-6, 60);  // batch size from the budget, which the cache shares
  std::vector<VariancePrediction> results;
  for (const ColumnCacheMode mode : {ColumnCacheMode::off, ColumnCacheMode::ram}) {
    Context context({.memory_budget_bytes = 96u << 10});  // batches of half of it: 20 rows of 2,400 bytes
    KernelMatrix matrix(context, rows, *kernel);
    options.cache.mode = mode;
    results.push_back(
        predict_latent_variance(matrix, test.x.data(), test.rows(), options, {VarianceMethod::gbcd, ""}, {}));
    if (mode == ColumnCacheMode::ram) {
      CHECK(results.back().cache.find("kernel-column cache in RAM") != std::string::npos);
      REQUIRE(matrix.column_cache() != nullptr);
      CHECK(matrix.column_cache()->statistics().hits > 0);  // later batches re-select earlier batches' variables
    } else {
      CHECK(results.back().cache == "kernel-column cache off");
    }
  }
  CHECK(results[0].batches > 1);
  CHECK(results[0].batch_rows == results[1].batch_rows);
  CHECK(results[0].iterations == results[1].iterations);
  CHECK(std::memcmp(results[0].latent.data(), results[1].latent.data(), results[0].latent.size() * sizeof(double)) ==
        0);
}

TEST_CASE("every BCD policy and every kernel give the closed-form variance") {
  const Problem training = make_problem(200, 2, 53);
  const Problem test = make_problem(12, 2, 54);
  const std::vector<KernelHyperparameters> kernels = {se_ard(2, 0.6, 0.1),
                                                      {KernelType::matern52, {0.9, 1.4}, 1.3, 0.02},
                                                      {KernelType::squared_exponential, {1.1}, 0.7, 0.3}};
  for (const KernelHyperparameters& h : kernels) {
    CAPTURE(kernel_type_name(h.type));
    const std::vector<double> exact = closed_form_variance(h, training, test);
    for (const char* policy : {"gbcd", "bcd-cyclic", "bcd-gradient"}) {
      CAPTURE(policy);
      VarianceOptions options = latent_options(1e-6, 50);
      options.policy = policy;
      CHECK(max_relative_error(batched(training, test, h, options).latent, exact) <= 1e-6);
    }
    const VariancePrediction cholesky =
        batched(training, test, h, latent_options(1e-6, 50), false, nullptr, VarianceMethod::cholesky);
    CHECK(max_relative_error(cholesky.latent, exact) <= 1e-10);
  }
}

// With σ² ≪ s² an absolute tolerance on ‖K̄u − k*‖ left variances off by
// 21 % (median) to a factor 11 against Cholesky. Both routes hold a relative
// 1e-3 on every row down to σ²/s² = 1e-9: the cholesky route always; gbcd by
// its bound b/(V̂ − b), b = ‖g‖₂²/σ², which also stays above the true error
// when the iteration limit stops it first.
TEST_CASE("with noise down to 1e-9 of the signal variance every row's variance is within the tolerance") {
  SUBCASE("well-conditioned K: both routes") {
    const Problem training = make_problem(300, 6, 59);
    const Problem test = make_problem(25, 6, 60);
    for (const double noise : {1e-3, 1e-6, 1e-9}) {
      CAPTURE(noise);
      const KernelHyperparameters h = se_ard(6, 1.5, noise);
      const std::vector<double> exact = closed_form_variance(h, training, test);
      for (const bool noisy : {false, true}) {
        CAPTURE(noisy);
        VarianceOptions options = latent_options(1e-3, 60);
        options.noisy = noisy;
        const double added = noisy ? noise : 0.0;  // the variance the bound is on: of y* or of f*
        for (const VarianceMethod method : {VarianceMethod::gbcd, VarianceMethod::cholesky}) {
          CAPTURE(std::string(to_string(method)));
          const VariancePrediction prediction = batched(training, test, h, options, false, nullptr, method);
          CHECK(prediction.unconverged_rows == 0);
          for (std::size_t t = 0; t < test.rows(); ++t) {
            CAPTURE(t);
            CHECK(std::abs(prediction.latent[t] - exact[t]) <= 1e-3 * (exact[t] + added));
          }
        }
      }
    }
  }
  SUBCASE("K singular to working precision (λ_min(K̄) = σ²): cholesky, and gbcd's bound") {
    const Problem training = make_problem(300, 3, 59);
    const Problem test = make_problem(25, 3, 60);
    for (const double noise : {1e-3, 1e-6, 1e-9}) {
      CAPTURE(noise);
      const KernelHyperparameters h = se_ard(3, 1.5, noise);
      const std::vector<double> exact = closed_form_variance(h, training, test);
      VarianceOptions options = latent_options(1e-3, 60);
      const VariancePrediction cholesky = batched(training, test, h, options, false, nullptr, VarianceMethod::cholesky);
      // GBCD's rate falls with σ²/s² (172 iterations at 1e-3, 63,411 at 1e-6): here it runs to a limit.
      options.max_iterations = 300;
      const VariancePrediction gbcd = batched(training, test, h, options);
      CHECK((gbcd.unconverged_rows == 0) == (noise == 1e-3));
      for (std::size_t t = 0; t < test.rows(); ++t) {
        CAPTURE(t);
        CHECK(std::abs(cholesky.latent[t] - exact[t]) <= 1e-3 * exact[t]);
        const double gbcd_error = (gbcd.latent[t] - exact[t]) / exact[t];
        CHECK(gbcd_error >= -1e-9);  // from above
        CHECK(gbcd_error <= gbcd.largest_error_bound);
      }
    }
  }
}

TEST_CASE("rows converge and leave the batch one by one, and a row far from the data costs no iteration") {
  const Problem training = make_problem(400, 2, 55);
  Problem test = make_problem(10, 2, 56);
  test.x[0] = 1e3, test.x[1] = 1e3;  // k* = 0: the variance is the prior's
  const KernelHyperparameters h = se_ard(2, 0.7, 0.05);
  VarianceOptions options = latent_options(1e-8, 40);
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
  // A loose tolerance errs on the large side (−2f underestimates k*ᵀK̄⁻¹k*), by at most the tolerance.
  const std::vector<double> exact = closed_form_variance(h, training, test);
  options.tolerance = 0.3;
  const VariancePrediction loose = batched(training, test, h, options);
  for (std::size_t t = 0; t < test.rows(); ++t) {
    CHECK(loose.latent[t] >= exact[t] * (1 - 1e-12));
    CHECK(loose.latent[t] <= exact[t] * (1 + 0.3));
  }
  CHECK(loose.iterations < prediction.iterations);
}

TEST_CASE("an iteration limit ends the batch and counts the rows left above tolerance") {
  const Problem training = make_problem(300, 2, 57);
  const Problem test = make_problem(5, 2, 58);
  VarianceOptions options = latent_options(1e-12, 10);
  options.max_iterations = 2;
  const VariancePrediction prediction = batched(training, test, se_ard(2, 0.5, 0.01), options);
  CHECK(prediction.iterations == 2);
  CHECK(prediction.unconverged_rows == 5);
  CHECK(prediction.largest_error_bound > 1e-12);
}

TEST_CASE(
    "finished batches reach the sink in order, and a run from a later row gives those rows bitwise, by every route") {
  const Problem training = make_problem(300, 3, 61);
  const Problem test = make_problem(35, 3, 62);
  const KernelHyperparameters h = se_ard(3, 0.9, 0.02);
  for (const auto& [method, on_disk] :
       {std::pair{VarianceMethod::gbcd, false}, std::pair{VarianceMethod::cholesky, false},
        std::pair{VarianceMethod::cholesky, true}}) {
    CAPTURE(std::string(to_string(method)));
    CAPTURE(on_disk);
    VarianceOptions options = latent_options(1e-4, 50);
    // The gbcd route publishes a window of 4 batches at a time (16 with the local start), ordered into
    // compact batches; the cholesky route each batch.
    const bool gbcd = method == VarianceMethod::gbcd;
    options.batch_rows = gbcd ? 2 : 10;
    const std::size_t published = gbcd ? 8 : 10, parts = (test.rows() + published - 1) / published;
    options.open_factor_store = [](std::uint64_t doubles) {
      return std::unique_ptr<ScratchStore>(std::make_unique<VectorStore>(doubles));
    };
    std::vector<std::pair<std::size_t, std::vector<double>>> received;
    const VarianceBatchSink sink = [&](std::size_t first, std::span<const double> latent) {
      received.emplace_back(first, std::vector<double>(latent.begin(), latent.end()));
    };
    const VariancePrediction whole = batched(training, test, h, options, false, nullptr, method, sink, on_disk);
    CHECK(whole.batches == (test.rows() + options.batch_rows - 1) / options.batch_rows);
    REQUIRE(received.size() == parts);
    for (std::size_t b = 0; b < received.size(); ++b) {
      CHECK(received[b].first == published * b);
      CHECK(received[b].second.size() == (b + 1 < parts ? published : test.rows() - published * b));
      for (std::size_t j = 0; j < received[b].second.size(); ++j) {
        CHECK(received[b].second[j] == whole.latent[received[b].first + j]);
      }
    }
    // A resumed run: the rows after the second-to-last part published, as a run of their own (the batches
    // it would have reached).
    const std::size_t resume = published * (parts - (gbcd ? 1 : 2));
    options.first_row = resume;
    received.clear();
    struct FirstReport final : RunObserver {
      void on_start(const IterationReport& r) override { done = r.done; }
      std::uint64_t done = 99;
    } first_report;
    const VariancePrediction rest = batched(training, test, h, options, false, &first_report, method, sink, on_disk);
    if (gbcd) CHECK(first_report.done == resume);  // progress counts the rows done before
    REQUIRE(received.size() == parts - resume / published);
    CHECK(received[0].first == resume);
    for (std::size_t t = resume; t < test.rows(); ++t) CHECK(rest.latent[t] == whole.latent[t]);
  }
}

TEST_CASE("auto takes the cholesky route when K̄'s factor fits and is cheaper, gbcd otherwise") {
  const Problem training = make_problem(400, 3, 63);
  const auto kernel = make_kernel(se_ard(3), 3);
  InMemoryRowSource rows = training.source();
  {
    Context context({.memory_budget_bytes = 8u << 20});
    KernelMatrix matrix(context, rows, *kernel);
    const VariancePlan plan = plan_variances(matrix, 100, VarianceOptions{});
    CHECK(plan.method == VarianceMethod::cholesky);
    CHECK(plan.reason.find("fits") != std::string::npos);
  }
  {
    Context context({.memory_budget_bytes = 1u << 20});  // the factor is 1.3 MB
    KernelMatrix matrix(context, rows, *kernel);
    const VariancePlan plan = plan_variances(matrix, 100, VarianceOptions{});
    CHECK(plan.method == VarianceMethod::gbcd);
    CHECK(plan.reason.find("does not fit") != std::string::npos);
    VarianceOptions cholesky;
    cholesky.method = VarianceMethod::cholesky;
    CHECK_THROWS_WITH_AS(plan_variances(matrix, 100, cholesky), doctest::Contains("give the run more memory"), Error);
  }
}

TEST_CASE("the cholesky route with K̄'s factor on disk gives the closed form, in panels and batches") {
  const Problem training = make_problem(700, 3, 71);
  const Problem test = make_problem(150, 3, 72);
  const KernelHyperparameters h = se_ard(3, 0.8, 0.05);
  const std::vector<double> exact = closed_form_variance(h, training, test);
  const auto kernel = make_kernel(h, 3);
  InMemoryRowSource rows = training.source();
  VarianceOptions options = latent_options(1e-6, 60);
  std::uint64_t doubles = 0, read = 0;
  options.open_factor_store = [&](std::uint64_t size) {
    doubles = size;
    auto store = std::make_unique<VectorStore>(size);
    store->read_ = &read;
    return std::unique_ptr<ScratchStore>(std::move(store));
  };
  Context context({.memory_budget_bytes = 1536u << 10});  // the factor is 3.9 MB: panels of 64 columns fit
  KernelMatrix matrix(context, rows, *kernel);
  options.method = VarianceMethod::cholesky;
  const VariancePlan plan = plan_variances(matrix, test.rows(), options);
  CHECK(plan.factor_on_disk);
  CHECK(plan.reason.find("on disk") != std::string::npos);
  const VariancePrediction disk = predict_latent_variance(matrix, test.x.data(), test.rows(), options, plan);
  CHECK(max_relative_error(disk.latent, exact) <= 1e-10);
  CHECK(disk.batches >= 2);
  // The lower part in panels (n(n+1)/2 and each panel's strict upper triangle), read back more than once.
  CHECK(doubles >= 700u * 701u / 2);
  CHECK(doubles < 700u * 700u);
  CHECK(read > doubles);
  // auto takes it too where it is cheaper than gbcd and the factor does not fit in memory.
  options.method = VarianceMethod::automatic;
  CHECK(plan_variances(matrix, 2000, options).factor_on_disk);
  options.factor_store_room = [] { return std::uint64_t{3} << 20; };  // 3 MiB free, short of the factor's ~4 MB
  const VariancePlan no_room = plan_variances(matrix, 2000, options);
  CHECK(no_room.method == VarianceMethod::gbcd);
  CHECK(no_room.reason.find("nor on disk (3.0 MiB free for its") != std::string::npos);
  options.factor_store_room = [] { return std::uint64_t{5} << 20; };
  CHECK(plan_variances(matrix, 2000, options).factor_on_disk);
  options.open_factor_store = {};  // nowhere to put it: gbcd
  CHECK(plan_variances(matrix, 2000, options).method == VarianceMethod::gbcd);
}

TEST_CASE(
    "auto measures the gbcd route by a pilot batch: a kernel of short reach takes it where its fixed estimate "
    "would not") {
  // Lengthscale 0.01 on U[−2, 2]³: every test row is far from the data (k* ≈ 0), and its solve takes no step.
  const Problem training = make_problem(3000, 3, 75);
  const Problem test = make_problem(2000, 3, 76);
  const auto kernel = make_kernel(se_ard(3, 0.01, 0.05), 3);
  InMemoryRowSource rows = training.source();
  Context context({.memory_budget_bytes = 256u << 20});  // K̄'s factor (72 MB) fits
  KernelMatrix matrix(context, rows, *kernel);
  const VarianceOptions options;
  const VariancePlan estimated = plan_variances(matrix, test.rows(), options);
  CHECK(estimated.method == VarianceMethod::cholesky);
  const VariancePlan measured = plan_variances(matrix, test.rows(), options, test.x.data());
  CHECK(measured.method == VarianceMethod::gbcd);
  CHECK(measured.reason.find("a pilot batch of 64 rows took") != std::string::npos);
}

TEST_CASE("the nearest route bounds the exact variance from above, falls as M grows, and is exact at M = n") {
  const Problem training = make_problem(200, 2, 61);
  const Problem test = make_problem(30, 2, 62);
  for (const KernelHyperparameters& h : every_kernel(2)) {
    CAPTURE(kernel_name(h));
    const std::vector<double> exact = closed_form_variance(h, training, test);
    double scale = h.signal_variance;  // of the kernel's values
    for (const KernelTerm& term : h.added) scale += term.signal_variance;
    std::vector<double> previous;
    for (const std::size_t neighbours : {4, 16, 64, 200, 500}) {
      CAPTURE(neighbours);
      VarianceOptions options = latent_options(1e-6, 50);
      options.neighbours = neighbours;
      options.batch_rows = 7;  // five batches, the last one partial
      const VariancePrediction nearest = batched(training, test, h, options, false, nullptr, VarianceMethod::nearest);
      CHECK(nearest.batches == 5);
      for (std::size_t t = 0; t < exact.size(); ++t) {
        // Up to rounding: K̄'s condition number here is below 1e4, so both solves are good to ~1e-12 of s²,
        // on any CPU; the gaps the bound and the nesting leave at small M are many orders larger.
        CHECK(nearest.latent[t] >= exact[t] - 1e-10 * scale);                            // an upper bound
        if (!previous.empty()) CHECK(nearest.latent[t] <= previous[t] + 1e-10 * scale);  // nested sets
      }
      if (neighbours >= training.rows()) CHECK(max_relative_error(nearest.latent, exact) <= 1e-9);
      if (neighbours == 16) {
        // Against the closed form on the 16 rows of highest covariance with each test row, found here by brute force.
        for (std::size_t t = 0; t < test.rows(); ++t) {
          const double* z = &test.x[t * test.d];
          std::vector<std::size_t> order(training.rows());
          std::iota(order.begin(), order.end(), 0);
          std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return reference_kernel(h, &training.x[a * 2], z, 2) > reference_kernel(h, &training.x[b * 2], z, 2);
          });
          Problem nearest_rows{{}, {}, 2}, test_row{{z[0], z[1]}, {0.0}, 2};
          for (std::size_t q = 0; q < neighbours; ++q) {
            nearest_rows.x.insert(nearest_rows.x.end(), &training.x[order[q] * 2], &training.x[order[q] * 2] + 2);
            nearest_rows.y.push_back(training.y[order[q]]);
          }
          const double reference = closed_form_variance(h, nearest_rows, test_row)[0];
          CHECK(nearest.latent[t] == doctest::Approx(reference).epsilon(1e-9).scale(scale));
        }
      }
      previous = nearest.latent;
    }
  }
}

// The local start and the Nyström certificate, on a rough field of long reach with small noise (the case they
// are for: heaton_sim's Matérn-1/2): every row within the tolerance of the closed form, from above.
TEST_CASE("the local start and the Nyström certificate keep every row within the tolerance, from above") {
  const auto [training, test, h] = LongReachField(120);
  const std::vector<double> exact = closed_form_variance(h, training, test);
  for (const std::size_t local_rows : {std::size_t{0}, std::size_t{150}}) {
    for (const std::size_t points : {std::size_t{0}, std::size_t{200}}) {
      CAPTURE(local_rows);
      CAPTURE(points);
      VarianceOptions options = latent_options(1e-3, 60);
      options.local_rows = local_rows;
      options.certificate_points = points;
      options.batch_rows = 30;
      const VariancePrediction prediction = batched(training, test, h, options);
      CHECK(prediction.local_rows == local_rows);  // at most that many, from the kernel's reach
      // With the local start only; as many rows as its share of the 8 MiB holds.
      CHECK((prediction.certificate_points > 0) == (points > 0 && local_rows > 0));
      CHECK(prediction.certificate_points <= points);
      CHECK(prediction.unconverged_rows == 0);
      CHECK(prediction.largest_error_bound <= 1e-3);
      check_within_tolerance_from_above(prediction.latent, exact, 1e-3);
    }
  }
}

// The certificate is made only while it pays: at a tolerance no bound meets within the iteration limit, a
// check closes nothing, so after the window's first check after a start and first after a step, only the
// checks at each batch's limit remain (one window: 120 rows in batches of 30, under 16 batches).
TEST_CASE("the Nyström certificate is not made again in a window once it closes nothing") {
  const auto [training, test, h] = LongReachField(120);
  VarianceOptions options = latent_options(1e-15, 60);
  options.local_rows = 150;
  options.certificate_points = 200;
  options.batch_rows = 30;
  options.max_iterations = 4;
  const VariancePrediction prediction = batched(training, test, h, options);
  REQUIRE(prediction.certificate_points > 0);
  CHECK(prediction.batches == 4);
  CHECK(prediction.unconverged_rows == test.rows());
  // Every batch reaches its limit: 2 checks that did not pay, then one at each batch's limit (each batch
  // would otherwise check after its start and after each of its 4 steps: 20).
  CHECK(prediction.certificate_checks == 2 + prediction.batches);
  // The bounds reported stay bounds: every row above the exact value.
  const std::vector<double> exact = closed_form_variance(h, training, test);
  for (std::size_t t = 0; t < test.rows(); ++t) CHECK(prediction.latent[t] >= exact[t] * (1.0 - 1e-9));
}

// A batch's last open rows go on with the next batch of its window (from a quarter of a batch open: here
// 2 of 8 rows); windows are still published whole, so a run from a later window gives its rows bitwise. With
// the local start (windows of 16 batches: 128 rows) and from zero (4 batches: 32 rows).
TEST_CASE("rows still open go on with the next batch, within the tolerance, and a later window's rows bitwise") {
  const auto [training, test, h] = LongReachField(150);
  const std::vector<double> exact = closed_form_variance(h, training, test);
  for (const std::size_t local_rows : {std::size_t{0}, std::size_t{150}}) {
    CAPTURE(local_rows);
    VarianceOptions options = latent_options(1e-3, 30);
    options.local_rows = local_rows;
    options.certificate_points = 0;
    options.batch_rows = 8;
    const VariancePrediction whole = batched(training, test, h, options);
    CHECK(whole.local_rows == local_rows);
    CHECK(whole.carried_rows > 0);
    CHECK(whole.unconverged_rows == 0);
    check_within_tolerance_from_above(whole.latent, exact, 1e-3);
    const std::size_t window = (local_rows > 0 ? 16 : 4) * options.batch_rows;
    options.first_row = window;
    const VariancePrediction rest = batched(training, test, h, options);
    for (std::size_t t = window; t < test.rows(); ++t) CHECK(rest.latent[t] == whole.latent[t]);
  }
}

// A kernel of short reach against the rows' spacing (bcef's) takes the route from zero.
TEST_CASE("the local start is left out where few training rows lie within the kernel's reach") {
  const Problem training = make_problem(900, 2, 63);
  const Problem test = make_problem(40, 2, 64);
  const KernelHyperparameters h{KernelType::matern12, {0.1, 0.1}, 1.0, 2e-3};
  VarianceOptions options = latent_options(1e-3, 60);
  options.local_rows = 150;
  const VariancePrediction prediction = batched(training, test, h, options);
  CHECK(prediction.local_rows == 0);
  CHECK(prediction.certificate_points == 0);
  const std::vector<double> exact = closed_form_variance(h, training, test);
  CHECK(max_relative_error(prediction.latent, exact) <= 1e-3);
}

// The certificate against the exact gᵀK̄⁻¹g: never below it, never above ‖g‖²/σ², and far below that for a
// smooth residual (a kernel column of a distant point), the case it is built for.
TEST_CASE("the Nyström bound lies between gᵀK̄⁻¹g and ‖g‖²/σ², and near the first for a smooth g") {
  const Problem training = make_problem(500, 2, 65);
  const KernelHyperparameters h{KernelType::matern12, {0.8, 0.8}, 1.0, 1e-3};
  const std::size_t n = training.rows(), r = 3;
  InMemoryRowSource rows = training.source();
  const auto kernel = make_kernel(h, training.d);
  Context context({.memory_budget_bytes = 64u << 20});
  KernelMatrix matrix(context, rows, *kernel);
  const LowRankErrorBound certificate(matrix, 100);
  REQUIRE(certificate.points() == 100);
  // Columns: random signs; K(X, z) for a point z outside the rows' square; a mix.
  std::vector<double> g(n * r);
  std::mt19937_64 random(7);
  const double far_point[2] = {3.5, 3.0};
  std::vector<double> column(n);
  matrix.cross_covariance(far_point, 1, column.data());
  for (std::size_t i = 0; i < n; ++i) {
    const double sign = (random() & 1u) != 0 ? 1.0 : -1.0;
    g[i * r] = 1e-3 * sign;
    g[i * r + 1] = column[i];
    g[i * r + 2] = column[i] + 1e-3 * sign;
  }
  std::vector<double> factor = reference_kernel_matrix(h, training), solved = g;
  cholesky_factor(factor.data(), n, "K̄");
  cholesky_solve(factor.data(), n, solved.data(), r);
  std::vector<double> squared_norms(r, 0.0), exact(r, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < r; ++j) {
      squared_norms[j] += g[i * r + j] * g[i * r + j];
      exact[j] += g[i * r + j] * solved[i * r + j];
    }
  }
  const std::vector<double> bounds = certificate.bound(g.data(), r, squared_norms);
  for (std::size_t j = 0; j < r; ++j) {
    CAPTURE(j);
    CHECK(bounds[j] >= exact[j] * (1 - 1e-9));
    CHECK(bounds[j] <= squared_norms[j] / h.noise_variance);
  }
  CHECK(bounds[1] <= 1e-2 * squared_norms[1] / h.noise_variance);
}

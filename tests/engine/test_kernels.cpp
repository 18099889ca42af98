#include "engine/core/error.h"
#include "engine/kernels/parameter_gradient_contraction.h"
#include "engine/data/standardisation.h"
#include "engine/hyper/marginal_likelihood.h"
#include "engine/kernels/kernel_column_cache.h"
#include "engine/kernels/families/decay.h"
#include "engine/kernels/kernel_matrix.h"
#include "problems.h"

#include <doctest/doctest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>

using namespace gpstream;
using namespace gpstream::testing;

TEST_CASE("kernel blocks equal the formulas evaluated pair by pair, for every kernel") {
  const Problem a = make_problem(37, 5, 1), b = make_problem(53, 5, 2);
  for (const KernelHyperparameters& h : every_kernel(5)) {
    CAPTURE(kernel_type_name(h.type));
    const auto kernel = make_kernel(h, 5);
    PreparedRows pa, pb;
    kernel->prepare(a.x.data(), a.rows(), pa);
    kernel->prepare(b.x.data(), b.rows(), pb);
    std::vector<double> block(a.rows() * b.rows());
    kernel->evaluate(pa, pb, block.data());
    for (std::size_t i = 0; i < a.rows(); ++i)
      for (std::size_t j = 0; j < b.rows(); ++j)
        REQUIRE(block[i * b.rows() + j] ==
                doctest::Approx(reference_kernel(h, &a.x[i * 5], &b.x[j * 5], 5)).epsilon(1e-12));
    // A row against itself: k(x, x) (s² for stationary kernels, with no negative rounding).
    kernel->evaluate(pa, pa, block.data());
    for (std::size_t i = 0; i < a.rows(); ++i) {
      CHECK(block[i * a.rows() + i] == doctest::Approx(kernel->self_covariance(&a.x[i * 5])).epsilon(1e-13));
      double signal = h.signal_variance;  // a sum's: every term's
      for (const KernelTerm& term : h.added) signal += term.signal_variance;
      if (kernel->constant_self_covariance()) CHECK(block[i * a.rows() + i] == doctest::Approx(signal).epsilon(1e-13));
    }
  }
}

TEST_CASE(
    "single-precision blocks are within 1e-6 of s² of the double ones, and each entry the same bits in any block") {
  const Problem a = make_problem(37, 5, 1), b = make_problem(53, 5, 2);
  for (const double lengthscale : {0.05, 0.7, 3.0}) {  // D from ~0 to far past e^{-80}'s cap
    for (KernelHyperparameters h : every_kernel(5)) {
      CAPTURE(kernel_type_name(h.type));
      CAPTURE(lengthscale);
      for (double& value : h.lengthscales) value *= lengthscale;
      double signal = h.signal_variance;
      for (KernelTerm& term : h.added) {
        for (double& value : term.lengthscales) value *= lengthscale;
        signal += term.signal_variance;
      }
      const auto kernel = make_kernel(h, 5);
      PreparedRows pa, pb;
      kernel->prepare(a.x.data(), a.rows(), pa);
      kernel->prepare(b.x.data(), b.rows(), pb);
      std::vector<double> exact(a.rows() * b.rows());
      std::vector<float> single(exact.size()), part(exact.size());
      kernel->evaluate(pa, pb, exact.data());
      kernel->evaluate_single(pa.view(5), pb.view(5), single.data());
      double largest = 0.0;
      for (std::size_t k = 0; k < exact.size(); ++k) largest = std::max(largest, std::abs(single[k] - exact[k]));
      CHECK(largest <= 1e-6 * signal);
      // Rows 3 to 12 of a against columns 5 to 50 of b: the same bits as in the whole block.
      kernel->evaluate_single(pa.view(5, 3, 10), pb.view(5, 5, 46), part.data());
      bool same = true;
      for (std::size_t i = 0; i < 10; ++i)
        for (std::size_t j = 0; j < 46; ++j) same = same && part[i * 46 + j] == single[(i + 3) * b.rows() + j + 5];
      CHECK(same);
      // k(x, x) = s² to single precision's rounding.
      kernel->evaluate_single(pa.view(5), pa.view(5), part.data());
      if (kernel->constant_self_covariance()) {
        for (std::size_t i = 0; i < a.rows(); ++i) CHECK(std::abs(part[i * a.rows() + i] - signal) <= 1e-6 * signal);
      }
    }
  }
}

TEST_CASE("kernel blocks do not cancel: inputs far from the origin and lengthscales of 1e-8 give the pairwise values") {
  // ‖x̃‖² + ‖z̃‖² − 2 x̃·z̃ loses u·‖x̃‖² of D: at 3e5 + U[0, 1] with ℓ = 0.3 that is 1e-5 of D, at ℓ = 1e-8 it is
  // 1e1 — the diagonal was e^{-35}·s². Every stationary family, every evaluation path.
  const Problem near = make_problem(29, 3, 11);
  for (const double offset : {0.0, 3e5, 1e8}) {
    for (const double scale : {0.3, 1e-8}) {
      CAPTURE(offset);
      CAPTURE(scale);
      Problem far = near;
      for (double& value : far.x) value = offset + value;
      for (KernelHyperparameters h : every_kernel(3)) {
        if (h.type == KernelType::histogram_intersection) continue;
        CAPTURE(kernel_name(h));
        for (double& lengthscale : h.lengthscales) lengthscale *= scale;
        for (KernelTerm& term : h.added)
          for (double& lengthscale : term.lengthscales) lengthscale *= scale;
        const auto kernel = make_kernel(h, 3);
        PreparedRows prepared;
        kernel->prepare(far.x.data(), far.rows(), prepared);
        const std::size_t n = far.rows();
        std::vector<double> gemm(n * n), entrywise(n * n), rounded(n * n);
        kernel->evaluate(prepared.view(3), prepared.view(3), gemm.data());
        kernel->evaluate_entrywise(prepared.view(3), prepared.view(3), entrywise.data());
        kernel->evaluate_rounded(prepared.view(3), prepared.view(3), rounded.data());
        double signal = h.signal_variance;
        for (const KernelTerm& term : h.added) signal += term.signal_variance;
        for (std::size_t i = 0; i < n; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            // The pairwise formula on the differences of the unshifted rows (distances do not change with the
            // offset; the stored inputs differ from them by the offset's rounding, 1e-8 at 1e8).
            const double exact = reference_kernel(h, &near.x[i * 3], &near.x[j * 3], 3);
            const double stored_rounding = offset * 2.3e-16 / (scale * 0.6);  // of r, at the shortest lengthscale
            const double allowed = 1e-8 * signal + 4 * signal * stored_rounding;
            REQUIRE(std::abs(gemm[i * n + j] - exact) <= allowed);
            REQUIRE(std::abs(entrywise[i * n + j] - exact) <= allowed);
            REQUIRE(std::abs(rounded[i * n + j] - exact) <= 1e-6 * signal + allowed);
          }
          CHECK(gemm[i * n + i] == doctest::Approx(signal).epsilon(1e-13));
        }
      }
    }
  }
}

TEST_CASE("the parameter gradient contraction equals finite differences of the weighted kernel sum, for every kernel") {
  const Problem a = make_problem(23, 4, 5), b = make_problem(19, 4, 6);
  std::vector<double> weights(a.rows() * b.rows());
  for (std::size_t k = 0; k < weights.size(); ++k) weights[k] = std::sin(0.7 * static_cast<double>(k));
  // f(θ) = Σ_ij W_ij k_θ(a_i, b_j), evaluated from the pair formula.
  const auto weighted_sum = [&](const KernelHyperparameters& h) {
    double sum = 0.0;
    for (std::size_t i = 0; i < a.rows(); ++i)
      for (std::size_t j = 0; j < b.rows(); ++j)
        sum += weights[i * b.rows() + j] * reference_kernel(h, &a.x[i * 4], &b.x[j * 4], 4);
    return sum;
  };
  for (const KernelHyperparameters& h : every_kernel(4)) {
    CAPTURE(kernel_name(h));
    CAPTURE(h.lengthscales.size());
    const auto kernel = make_kernel(h, 4);
    PreparedRows pa, pb;
    kernel->prepare(a.x.data(), a.rows(), pa);
    kernel->prepare(b.x.data(), b.rows(), pb);
    std::vector<double> gradient(kernel->parameter_count(), 0.0);
    kernel->add_parameter_gradient(pa.view(4), pb.view(4), weights.data(), gradient.data());
    const std::vector<double> theta = log_parameters(h);  // [log ℓ…, log s², log σ², added terms'…]
    REQUIRE(theta.size() == gradient.size());             // the noise's entry left 0: the kernel's sum has none
    const std::vector<double> numeric =
        central_differences([&](const std::vector<double>& t) { return weighted_sum(with_log_parameters(h, t)); },
                            theta, gradient.size(), 1e-6);
    for (std::size_t p = 0; p < gradient.size(); ++p)
      CHECK(gradient[p] == doctest::Approx(numeric[p]).epsilon(1e-6).scale(1.0));
  }
}

TEST_CASE("several weight blocks contracted at once equal each contracted alone, for every kernel") {
  const Problem a = make_problem(13, 4, 7), b = make_problem(29, 4, 8);
  std::vector<std::vector<double>> weights(3, std::vector<double>(a.rows() * b.rows()));
  for (std::size_t w = 0; w < weights.size(); ++w)
    for (std::size_t k = 0; k < weights[w].size(); ++k) weights[w][k] = std::cos(0.3 * static_cast<double>(k + 7 * w));
  const std::vector<const double*> blocks = {weights[0].data(), weights[1].data(), weights[2].data()};
  for (const KernelHyperparameters& h : every_kernel(4)) {
    CAPTURE(kernel_name(h));
    const auto kernel = make_kernel(h, 4);
    PreparedRows pa, pb;
    kernel->prepare(a.x.data(), a.rows(), pa);
    kernel->prepare(b.x.data(), b.rows(), pb);
    const std::size_t parameters = kernel->parameter_count();
    std::vector<double> together(3 * parameters, 0.0);
    kernel->add_parameter_gradients_serially(pa.view(4), pb.view(4), blocks, together.data());
    for (std::size_t w = 0; w < 3; ++w) {
      std::vector<double> alone(parameters, 0.0);
      kernel->add_parameter_gradient_serially(pa.view(4), pb.view(4), blocks[w], alone.data());
      for (std::size_t p = 0; p < parameters; ++p)
        CHECK(together[w * parameters + p] == doctest::Approx(alone[p]).epsilon(1e-13).scale(1.0));
    }
  }
}

TEST_CASE("kernel hyperparameters are checked") {
  CHECK_THROWS_WITH_AS(make_kernel({KernelType::squared_exponential_ard, {1, 1}, 1, 0.1}, 3),
                       doctest::Contains("needs 3 lengthscales (one per input) or one for all, but 2 were given"),
                       Error);
  // One lengthscale serves every input of an ARD kernel, as --help says: the isotropic kernel's values.
  const auto one = make_kernel({KernelType::squared_exponential_ard, {0.7}, 1.3, 0.1}, 3);
  const auto isotropic = make_kernel({KernelType::squared_exponential, {0.7}, 1.3, 0.1}, 3);
  const std::vector<double> rows = {0.1, -0.4, 0.9, 1.2, 0.3, -0.5};
  PreparedRows a, b;
  one->prepare(rows.data(), 2, a);
  isotropic->prepare(rows.data(), 2, b);
  double ard_block[4], isotropic_block[4];
  one->evaluate(a, a, ard_block);
  isotropic->evaluate(b, b, isotropic_block);
  for (int k = 0; k < 4; ++k) CHECK(ard_block[k] == doctest::Approx(isotropic_block[k]).epsilon(1e-15));
  CHECK_THROWS_WITH_AS(make_kernel({KernelType::squared_exponential, {1, 2}, 1, 0.1}, 2),
                       doctest::Contains("takes one lengthscale"), InvalidArgument);
  CHECK_THROWS_WITH_AS(make_kernel({KernelType::squared_exponential_ard, {1, -1}, 1, 0.1}, 2),
                       doctest::Contains("lengthscale must be a positive finite number, not -1"), InvalidArgument);
  CHECK_THROWS_WITH_AS(make_kernel({KernelType::histogram_intersection, {1}, 1, 0.1}, 2),
                       doctest::Contains("the hik kernel has no lengthscales, but 1 were given"), InvalidArgument);
  CHECK_THROWS_WITH_AS(make_kernel({KernelType::matern12, {1, 1}, 1, 0.1}, 3),
                       doctest::Contains("matern12 kernel needs 3 lengthscales (one per input) or one for all"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(make_kernel(se_ard(2, 1.0, 0.0), 2), doctest::Contains("noise variance must be a positive"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(make_kernel({KernelType::squared_exponential_ard, {1, 1}, -2, 0.1}, 2),
                       doctest::Contains("signal variance"), InvalidArgument);
  CHECK_THROWS_WITH_AS(parse_kernel_type("matern92"), doctest::Contains("choose rbf (alias se-ard), se, matern12"),
                       InvalidArgument);
  // The names users know, and today's names as aliases.
  CHECK(parse_kernel_type("rbf") == KernelType::squared_exponential_ard);
  CHECK(parse_kernel_type("se-ard") == KernelType::squared_exponential_ard);
  CHECK(parse_kernel_type("exponential") == KernelType::matern12);
  CHECK(parse_kernel_type("matern32") == KernelType::matern32);
  CHECK(kernel_type_name(KernelType::matern12) == "matern12");
  CHECK(kernel_type_name(KernelType::squared_exponential_ard) == "rbf");
}

// e^{−x} of the stationary families (families/decay.h: our own reduction and polynomial, which
// vectorise as libmvec's exp does): within 4 ulps of the value in long double wherever that is a normal
// double, below the least subnormal's few multiples where it is not, and 0 from x = 746 on.
TEST_CASE("the families' e^-x is within 4 ulps from 0 to the underflow, and 0 beyond it") {
  double largest_ulps = 0.0;
  for (double x = 0.0; x < 760.0; x += 0.0137) {
    CAPTURE(x);
    const double value = detail::stationary::decay(x);
    const long double exact = std::exp(-static_cast<long double>(x));
    if (exact >= std::numeric_limits<double>::min()) {
      const long double ulp = std::ldexp(1.0L, std::ilogb(static_cast<double>(exact)) - 52);
      largest_ulps = std::max(largest_ulps, static_cast<double>(std::abs(value - exact) / ulp));
    } else {
      REQUIRE(std::abs(value - exact) <= 4 * std::numeric_limits<double>::denorm_min());
    }
    if (x >= 746.0) REQUIRE(value == 0.0);
  }
  CHECK(largest_ulps <= 4.0);
  CHECK(detail::stationary::decay(0.0) == 1.0);
  // Through a kernel's vectorised row pass: Matérn 1/2 at r = 0 … 40 (D = r², one input, ℓ = 1) in one block.
  const auto kernel = make_kernel({KernelType::matern12, {1.0}, 1.0, 0.1}, 1);
  std::vector<double> far(4001);
  for (std::size_t j = 0; j < far.size(); ++j) far[j] = 0.01 * static_cast<double>(j);
  const double origin[1] = {0.0};
  PreparedRows a, b;
  kernel->prepare(origin, 1, a);
  kernel->prepare(far.data(), far.size(), b);
  std::vector<double> block(far.size());
  kernel->evaluate_entrywise(a.view(1), b.view(1), block.data());
  // D = r² rounded once: r within an ulp, so e^{−r} within r·2⁻⁵² of itself, and the exponential's own ulps.
  for (std::size_t j = 0; j < far.size(); ++j)
    CHECK(std::abs(block[j] - std::exp(-far[j])) <= (far[j] + 8.0) * 2.3e-16 * std::exp(-far[j]));
}

TEST_CASE("the Matérn kernels take their closed forms at known distances, and tend to the rbf as ν grows") {
  // r = 1 exactly (one input, ℓ = 2, |x − z| = 2): Matérn 1/2 e⁻¹, 3/2 (1 + √3) e^−√3, 5/2 (1 + √5 + 5/3) e^−√5.
  const double x[1] = {0.5}, z[1] = {2.5};
  const auto at_one = [&](KernelType type) {
    const auto kernel = make_kernel({type, {2.0}, 1.7, 0.1}, 1);
    PreparedRows a, b;
    kernel->prepare(x, 1, a);
    kernel->prepare(z, 1, b);
    double value = 0;
    kernel->evaluate(a, b, &value);
    return value;
  };
  CHECK(at_one(KernelType::matern12) == doctest::Approx(1.7 * std::exp(-1.0)).epsilon(1e-14));
  CHECK(at_one(KernelType::matern32) ==
        doctest::Approx(1.7 * (1 + std::sqrt(3.0)) * std::exp(-std::sqrt(3.0))).epsilon(1e-14));
  CHECK(at_one(KernelType::matern52) ==
        doctest::Approx(1.7 * (1 + std::sqrt(5.0) + 5.0 / 3.0) * std::exp(-std::sqrt(5.0))).epsilon(1e-14));
  CHECK(at_one(KernelType::squared_exponential_ard) == doctest::Approx(1.7 * std::exp(-0.5)).epsilon(1e-14));
  // The general Matérn formula the other kernel tests use as their reference agrees with these closed forms.
  CHECK(matern_correlation(0.5, 1.0) == doctest::Approx(std::exp(-1.0)).epsilon(1e-13));
  CHECK(matern_correlation(1.5, 1.0) ==
        doctest::Approx((1 + std::sqrt(3.0)) * std::exp(-std::sqrt(3.0))).epsilon(1e-13));
  CHECK(matern_correlation(2.5, 1.0) ==
        doctest::Approx((1 + std::sqrt(5.0) + 5.0 / 3.0) * std::exp(-std::sqrt(5.0))).epsilon(1e-13));
  // Every stationary family of the registry: its value at r = 1 is the Matérn class's at its smoothness, and
  // smoothness orders the values there — the rougher the kernel, the faster it decays.
  std::vector<std::pair<double, double>> by_smoothness;
  for (const KernelType type : kernel_types()) {
    // The Matérn class and its limit; a family with parameters of its own is checked against its formula.
    if (!is_stationary(type) || default_lengthscale_count(type, 1) == 0 || !family_parameter_specs(type).empty())
      continue;
    CAPTURE(kernel_type_name(type));
    const double smoothness = spectral_smoothness(type);
    CHECK(at_one(type) == doctest::Approx(1.7 * matern_correlation(smoothness, 1.0)).epsilon(1e-13));
    by_smoothness.emplace_back(smoothness, at_one(type));
  }
  std::sort(by_smoothness.begin(), by_smoothness.end());
  for (std::size_t k = 1; k < by_smoothness.size(); ++k) {
    if (by_smoothness[k].first > by_smoothness[k - 1].first)
      CHECK(by_smoothness[k - 1].second < by_smoothness[k].second);
  }
}

TEST_CASE("the rational quadratic takes its closed form, tends to the rbf as alpha grows, and owns alpha") {
  const std::vector<double> origin = {0.0, 0.0}, unit = {0.6, 0.8};  // r = 1 at lengthscale 1
  const auto at_one = [&](double alpha) {
    KernelHyperparameters h(KernelType::rational_quadratic, {1.0}, 1.7, 0.1);
    h.family_parameters = {alpha};
    const auto kernel = make_kernel(h, 2);
    PreparedRows a, b;
    kernel->prepare(origin.data(), 1, a);
    kernel->prepare(unit.data(), 1, b);
    double value = 0;
    kernel->evaluate(a, b, &value);
    return value;
  };
  CHECK(at_one(0.5) == doctest::Approx(1.7 * std::pow(2.0, -0.5)).epsilon(1e-14));
  CHECK(at_one(2.0) == doctest::Approx(1.7 * std::pow(1.25, -2.0)).epsilon(1e-14));
  CHECK(at_one(1e4) == doctest::Approx(1.7 * std::exp(-0.5)).epsilon(1e-4));
  CHECK(at_one(0.5) > at_one(2.0));  // the smaller alpha, the heavier the tail

  // alpha is one entry of the parameter layout, named by the registry, between s² and σ² (and in a sum's term).
  KernelHyperparameters sum(KernelType::matern12, {0.3, 0.4}, 1.0, 0.05,
                            {KernelTerm(KernelType::rational_quadratic, {2.0, 3.0}, 0.5)});
  sum.term(1).family_parameters = {0.7};
  const std::vector<KernelParameter> layout = parameter_layout(sum);
  REQUIRE(layout.size() == 8);
  CHECK(parameter_name(sum, layout[2]) == "signal_variance");
  CHECK(parameter_name(sum, layout[3]) == "noise_variance");
  CHECK(parameter_name(sum, layout[7]) == "alpha");
  CHECK(parameter_value(sum, layout[7]) == 0.7);
  CHECK(hyperparameter_values(with_log_parameters(sum, log_parameters(sum)))[7] == doctest::Approx(0.7));
  CHECK(kernel_name(parse_kernel_shape("rq+matern32")) == "rq+matern32");
  CHECK(parse_kernel_shape("rational-quadratic").family_parameters == std::vector<double>{1.0});  // its start

  KernelHyperparameters bad(KernelType::rational_quadratic, {1.0}, 1.0, 0.1);
  bad.family_parameters = {-1.0};
  CHECK_THROWS_WITH_AS(make_kernel(bad, 2), doctest::Contains("the alpha must be a positive finite number, not -1"),
                       InvalidArgument);
  bad.family_parameters.clear();
  CHECK_THROWS_WITH_AS(make_kernel(bad, 2),
                       doctest::Contains("the rq kernel takes its own parameters [alpha], but 0 values were given"),
                       InvalidArgument);
}

TEST_CASE("KernelMatrix products equal dense K̄ products, resident and streamed") {
  const Problem p = make_problem(700, 3, 3);
  const KernelHyperparameters h = se_ard(3, 0.8, 0.05);
  const auto kernel = make_kernel(h, 3);
  const std::vector<double> dense = reference_kernel_matrix(h, p);
  const std::size_t n = p.rows();
  InMemoryRowSource resident = p.source();
  // Wrapping hides the resident rows, so this one streams blocks through a RowBlockStream.
  StandardisedRowSource streamed(resident, Standardisation::identity());
  for (RowSource* rows : {static_cast<RowSource*>(&resident), static_cast<RowSource*>(&streamed)}) {
    CAPTURE(rows == &resident);
    // A tiny budget forces many small blocks; odd tile and panel sizes cut them unevenly.
    Context context({.memory_budget_bytes = 64 * 1024});
    KernelMatrix matrix(context, *rows, *kernel, {.tile_rows = 37, .panel_columns = 129});
    std::vector<double> v(n), out(n), expected(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<double>(i));
    matrix.multiply(v.data(), out.data());
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) expected[i] += dense[i * n + j] * v[j];
    CHECK(relative_difference(out, expected) < 1e-13);

    // K̄[:, B] V with two right-hand sides, accumulated onto existing values.
    const std::vector<std::size_t> b = {5, 699, 0, 350};
    std::vector<double> x_b(b.size() * 3), w(b.size() * 2), result(n * 2, 1.0), reference(n * 2, 1.0);
    rows->gather_rows(b, x_b.data(), nullptr);
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = 0.5 + static_cast<double>(k);
    matrix.multiply_columns(b, x_b.data(), w.data(), 2, result.data(), true);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < b.size(); ++j)
        for (std::size_t c = 0; c < 2; ++c) reference[i * 2 + c] += dense[i * n + b[j]] * w[j * 2 + c];
    CHECK(relative_difference(result, reference) < 1e-13);

    // K(X, Z)ᵀ U for points Z outside the training set (no noise term).
    const Problem z = make_problem(9, 3, 4);
    std::vector<double> transposed(9);
    matrix.multiply_columns_transposed(z.x.data(), 9, v.data(), 1, transposed.data());
    for (std::size_t t = 0; t < 9; ++t) {
      double sum = 0.0;
      for (std::size_t i = 0; i < n; ++i) sum += reference_kernel(h, &p.x[i * 3], &z.x[t * 3], 3) * v[i];
      CHECK(transposed[t] == doctest::Approx(sum).epsilon(1e-12));
    }
    std::vector<double> diagonal(n);
    matrix.diagonal(diagonal.data());
    CHECK(diagonal[17] == doctest::Approx(1.05).epsilon(1e-15));
  }
}

TEST_CASE(
    "the all-pairs gradient contraction and the multi-column product equal their dense forms, resident and "
    "streamed, and do not depend on the thread count") {
  const Problem p = make_problem(300, 3, 9);
  const std::size_t n = p.rows(), c = 3;
  const std::vector<std::size_t> widths = {1, 2};  // W₀ = L₀R₀ᵀ, W₁ = L₁R₁ᵀ over two columns
  std::vector<double> left(n * c), right(n * c);
  for (std::size_t k = 0; k < n * c; ++k) {
    left[k] = std::sin(0.37 * static_cast<double>(k));
    right[k] = std::cos(0.11 * static_cast<double>(k));
  }
  for (const KernelHyperparameters& h :
       {se_ard(3, 0.8, 0.05), KernelHyperparameters{KernelType::matern32, {0.6, 1.1, 0.9}, 1.3, 0.1}}) {
    CAPTURE(kernel_name(h));
    const auto kernel = make_kernel(h, 3);
    const std::size_t parameters = kernel->parameter_count();
    // The dense reference: W over all n×n pairs, contracted by the kernel in one call per block.
    std::vector<double> expected(2 * parameters, 0.0);
    {
      PreparedRows all;
      kernel->prepare(p.x.data(), n, all);
      std::size_t column = 0;
      for (std::size_t w = 0; w < widths.size(); ++w) {
        std::vector<double> weights(n * n, 0.0);
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j)
            for (std::size_t k = column; k < column + widths[w]; ++k)
              weights[i * n + j] += left[i * c + k] * right[j * c + k];
        kernel->add_parameter_gradient(all.view(3), all.view(3), weights.data(), expected.data() + w * parameters);
        column += widths[w];
      }
    }
    const std::vector<double> dense = reference_kernel_matrix(h, p);
    InMemoryRowSource resident = p.source();
    StandardisedRowSource streamed(resident, Standardisation::identity());
    std::vector<double> first;
    for (RowSource* rows : {static_cast<RowSource*>(&resident), static_cast<RowSource*>(&streamed)}) {
      CAPTURE(rows == &resident);
      Context context({.memory_budget_bytes = 64 * 1024});
      KernelMatrix matrix(context, *rows, *kernel, {.tile_rows = 37, .panel_columns = 129});
      const std::vector<double> contracted = contract_parameter_gradient(matrix, left.data(), right.data(), c, widths);
      for (std::size_t k = 0; k < expected.size(); ++k)
        CHECK(contracted[k] == doctest::Approx(expected[k]).epsilon(1e-11).scale(1.0));
      std::vector<double> single;
      {
        tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
        single = contract_parameter_gradient(matrix, left.data(), right.data(), c, widths);
      }
      CHECK(std::memcmp(contracted.data(), single.data(), contracted.size() * sizeof(double)) == 0);
      if (first.empty()) first = contracted;
      CHECK(std::memcmp(contracted.data(), first.data(), contracted.size() * sizeof(double)) == 0);
      // K̄V for c columns at once against the dense product.
      std::vector<double> product(n * c), reference(n * c, 0.0);
      matrix.multiply(right.data(), c, product.data());
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
          for (std::size_t k = 0; k < c; ++k) reference[i * c + k] += dense[i * n + j] * right[j * c + k];
      CHECK(relative_difference(product, reference) < 1e-13);
    }
    Context context;
    KernelMatrix matrix(context, resident, *kernel);
    const std::vector<std::size_t> wrong(2, 1);
    CHECK_THROWS_WITH_AS(contract_parameter_gradient(matrix, left.data(), right.data(), c, wrong),
                         doctest::Contains("blocks of 2 columns in all for 3 columns"), Error);
  }
}

TEST_CASE("the transposed product (predictive means) is bit-identical across calls and thread counts") {
  const Problem p = make_problem(3000, 4, 5);
  const Problem z = make_problem(40, 4, 6);
  const KernelHyperparameters h = se_ard(4, 0.9, 0.1);
  const auto kernel = make_kernel(h, 4);
  InMemoryRowSource rows = p.source();
  Context context;
  KernelMatrix matrix(context, rows, *kernel, {.tile_rows = 64});
  std::vector<double> first(40), again(40), single(40);
  matrix.multiply_columns_transposed(z.x.data(), 40, p.y.data(), 1, first.data());
  matrix.multiply_columns_transposed(z.x.data(), 40, p.y.data(), 1, again.data());
  {
    tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
    matrix.multiply_columns_transposed(z.x.data(), 40, p.y.data(), 1, single.data());
  }
  CHECK(std::memcmp(first.data(), again.data(), 40 * sizeof(double)) == 0);
  CHECK(std::memcmp(first.data(), single.data(), 40 * sizeof(double)) == 0);
}

TEST_CASE(
    "entrywise kernel blocks equal the blocks, and each entry does not depend on the rest of its block, and rounded blocks "
    "are within 1e-6 of the signal variance") {
  const Problem a = make_problem(45, 6, 21), b = make_problem(67, 6, 22);
  std::size_t rounded_kernels = 0;
  for (const KernelHyperparameters& h : every_kernel(6)) {
    CAPTURE(kernel_type_name(h.type));
    const auto kernel = make_kernel(h, 6);
    PreparedRows pa, pb;
    kernel->prepare(a.x.data(), a.rows(), pa);
    kernel->prepare(b.x.data(), b.rows(), pb);
    std::vector<double> block(a.rows() * b.rows()), entrywise(block.size());
    kernel->evaluate(pa, pb, block.data());
    kernel->evaluate_entrywise(pa.view(6), pb.view(6), entrywise.data());
    for (std::size_t q = 0; q < block.size(); ++q) REQUIRE(entrywise[q] == doctest::Approx(block[q]).epsilon(1e-13));
    // Any slice of rows of a gives bitwise the same entries (a GEMM need not).
    for (const std::size_t first : {0u, 1u, 7u, 44u}) {
      for (const std::size_t rows : {1u, 2u, 3u, 5u}) {
        if (first + rows > a.rows()) continue;
        std::vector<double> part(rows * b.rows());
        kernel->evaluate_entrywise(pa.view(6, first, rows), pb.view(6), part.data());
        REQUIRE(std::memcmp(part.data(), entrywise.data() + first * b.rows(), part.size() * sizeof(double)) == 0);
      }
    }
    std::vector<double> rounded(block.size());
    kernel->evaluate_rounded(pa.view(6), pb.view(6), rounded.data());
    double largest = 0.0;
    for (std::size_t q = 0; q < block.size(); ++q) largest = std::max(largest, std::abs(rounded[q] - block[q]));
    CAPTURE(largest);
    double signal = h.signal_variance;
    for (const KernelTerm& term : h.added) signal += term.signal_variance;
    CHECK(largest <= 1e-6 * signal);
    rounded_kernels += largest > 0.0 ? 1 : 0;  // zero: a kernel without a single-precision path
  }
  CHECK(rounded_kernels >= 8);  // the four stationary families, ARD and isotropic, are rounded
}

TEST_CASE("the kernel-column cache admits a column on its second request and evicts the least recently used") {
  constexpr std::size_t kRows = 10;
  MemoryBudget budget(1u << 20);
  KernelColumnCache cache(kRows, budget.reserve("cache", KernelColumnCache::bytes_for(kRows, 3)));
  REQUIRE(cache.capacity() == 3);
  KernelColumnCache::Plan plan;
  // A pass with columns b: fills what the cache stores, checks what it
  // serves, and says which columns were hits.
  const auto use = [&](std::vector<std::size_t> b) {
    cache.plan(b, plan);
    std::vector<bool> hit;
    for (std::size_t k = 0; k < b.size(); ++k) {
      hit.push_back(plan.cached[k] != nullptr);
      if (plan.cached[k] != nullptr) CHECK(plan.cached[k][kRows - 1] == static_cast<double>(b[k]));
      if (plan.store[k] != nullptr) std::fill(plan.store[k], plan.store[k] + kRows, static_cast<double>(b[k]));
    }
    cache.complete();
    return hit;
  };
  const auto hits = use;
  use({1, 2});
  CHECK(cache.size() == 0);  // first requests are not admitted
  use({1, 2, 3});
  CHECK(cache.size() == 2);
  CHECK(hits({1, 2, 3}) == std::vector<bool>{true, true, false});  // 3 admitted now, at its second request
  CHECK(cache.size() == 3);
  use({4});
  use({1, 3});  // 2 is now the least recently used
  use({4});     // admitted: evicts 2
  CHECK(hits({2, 1, 3, 4}) == std::vector<bool>{false, true, true, true});
  CHECK(cache.statistics().evicted >= 1);

  SUBCASE("columns in use by a plan are not evicted to admit others in the same plan") {
    use({7, 8, 9});
    CHECK(hits({1, 3, 4, 7, 8, 9}) == std::vector<bool>{true, true, true, false, false, false});
    CHECK(hits({1, 3, 4}) == std::vector<bool>{true, true, true});
  }
  SUBCASE("a pass that did not complete leaves no column half-written") {
    use({5});
    cache.plan(std::vector<std::size_t>{5}, plan);  // admitted, but the pass fails before complete()
    REQUIRE(plan.store[0] != nullptr);
    CHECK(hits({5}) == std::vector<bool>{false});
  }
}

namespace {

// 30 products K̄[:, B]·V with random B (repeats within a call too) drawn from
// `columns` columns, by `plain` and by `cached`: bitwise equal.
void check_products_equal(KernelMatrix& plain, KernelMatrix& cached, RowSource& rows, std::size_t columns) {
  const std::size_t n = rows.rows(), d = rows.columns();
  std::mt19937_64 random(5);
  std::uniform_int_distribution<std::size_t> column(0, columns - 1);
  for (int call = 0; call < 30; ++call) {
    CAPTURE(call);
    std::vector<std::size_t> b(24);
    for (std::size_t& j : b) j = column(random);
    const std::size_t r = call % 3 == 2 ? 2 : 1;
    std::vector<double> x_b(b.size() * d), v(b.size() * r);
    rows.gather_rows(b, x_b.data(), nullptr);
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = std::cos(static_cast<double>(call + k));
    std::vector<double> expected(n * r, 0.5), out(n * r, 0.5);
    plain.multiply_columns(b, x_b.data(), v.data(), r, expected.data(), call % 2 == 0);
    cached.multiply_columns(b, x_b.data(), v.data(), r, out.data(), call % 2 == 0);
    REQUIRE(std::memcmp(out.data(), expected.data(), out.size() * sizeof(double)) == 0);
  }
  CHECK(cached.kernel_evaluations() == plain.kernel_evaluations() - cached.column_cache()->statistics().hits * n);
}

// A disk tier in RAM, for the cache's side of the contract: it can be told
// to refuse writes (its queue full) or to fail reads (the data changed on disk).
class TestDiskTier final : public ColumnDiskTier {
 public:
  TestDiskTier(std::size_t rows, std::size_t capacity) : rows_(rows), slots_(capacity) {}
  std::size_t rows() const override { return rows_; }
  std::size_t capacity() const override { return slots_.size(); }
  bool write(std::size_t slot, std::span<const double> values) override {
    REQUIRE(slot < slots_.size());
    if (refuse_writes) return false;
    slots_[slot].assign(values.begin(), values.end());
    return true;
  }
  bool read(std::size_t slot, std::span<double> values, std::string& problem) override {
    REQUIRE(slot < slots_.size());
    REQUIRE(slots_[slot].size() == values.size());
    ++reads;
    if (fail_reads) {
      problem = "its checksum differs";
      return false;
    }
    std::copy(slots_[slot].begin(), slots_[slot].end(), values.begin());
    return true;
  }
  double measure_read_seconds_per_value() override { return 1e-9; }
  std::string describe() const override { return "a test tier"; }

  bool refuse_writes = false, fail_reads = false;
  std::size_t reads = 0;

 private:
  std::size_t rows_;
  std::vector<std::vector<double>> slots_;
};

class WarningCollector final : public RunObserver {
 public:
  void on_warning(const std::string& message) override { warnings.push_back(message); }
  std::vector<std::string> warnings;
};

}  // namespace

TEST_CASE("products with the kernel-column cache equal those without, bitwise, resident and streamed") {
  const Problem p = make_problem(600, 8, 23);
  const std::size_t n = p.rows();
  for (const KernelHyperparameters& h : every_kernel(8)) {
    CAPTURE(kernel_type_name(h.type));
    const auto kernel = make_kernel(h, 8);
    InMemoryRowSource resident = p.source();
    StandardisedRowSource streamed(resident, Standardisation::identity());
    for (RowSource* rows : {static_cast<RowSource*>(&resident), static_cast<RowSource*>(&streamed)}) {
      CAPTURE(rows == &resident);
      Context context({.memory_budget_bytes = 1u << 20});
      KernelMatrix plain(context, *rows, *kernel, {.tile_rows = 37});
      KernelMatrix cached(context, *rows, *kernel, {.tile_rows = 37});
      // Room for 30 of the 60 columns used: the sequence hits, admits and evicts.
      cached.enable_column_cache(context.memory().reserve("cache", KernelColumnCache::bytes_for(n, 30)));
      check_products_equal(plain, cached, *rows, 60);
      const ColumnCacheStatistics& statistics = cached.column_cache()->statistics();
      CHECK(statistics.hits > 20);
      CHECK(statistics.evicted > 0);
    }
  }
}

TEST_CASE("with a disk tier, columns evicted from RAM are read back from it instead of computed, bitwise the same") {
  const Problem p = make_problem(500, 8, 29);
  const std::size_t n = p.rows();
  const auto kernel = make_kernel(every_kernel(8).front(), 8);
  InMemoryRowSource rows = p.source();
  for (const std::size_t disk_capacity : {60u, 10u}) {
    CAPTURE(disk_capacity);
    Context context({.memory_budget_bytes = 1u << 20});
    KernelMatrix plain(context, rows, *kernel, {.tile_rows = 37});
    KernelMatrix cached(context, rows, *kernel, {.tile_rows = 37});
    auto owned = std::make_unique<TestDiskTier>(n, disk_capacity);
    TestDiskTier& disk = *owned;
    // RAM for the 24 columns of one product, of the 60 used: most reuse must come from disk.
    cached.enable_column_cache(context.memory().reserve("cache", KernelColumnCache::bytes_for(n, 24)),
                               std::move(owned));
    cached.column_cache()->set_entry_seconds(1e-6);
    check_products_equal(plain, cached, rows, 60);
    const KernelColumnCache& cache = *cached.column_cache();
    // Every hit saved n entries at 1 µs each, less the (in-memory, far shorter) reads.
    const double computation = static_cast<double>(cache.statistics().hits * n) * 1e-6;
    CHECK(cache.statistics().seconds_saved <= computation);
    CHECK(cache.statistics().seconds_saved > 0.5 * computation);
    const ColumnCacheStatistics& statistics = cache.statistics();
    CHECK(statistics.disk_hits == disk.reads);
    CHECK(statistics.disk_bytes_read == statistics.disk_hits * n * sizeof(double));
    CHECK(statistics.spilled > 0);
    CHECK(cache.disk_size() <= disk_capacity);
    if (disk_capacity == 60) {
      CHECK(statistics.disk_hits > 200);  // of 720 lookups (measured: 264, and 474 hits in all)
      CHECK(statistics.hits > statistics.disk_hits);
    } else {
      CHECK(statistics.disk_hits > 30);  // evicted from disk too, least recently used first (measured: 72)
      CHECK(statistics.disk_hits < 200);
    }
  }
}

TEST_CASE(
    "a column the disk tier cannot give back is computed again with a warning, and repeated failures retire the tier") {
  const Problem p = make_problem(300, 8, 31);
  const std::size_t n = p.rows();
  const auto kernel = make_kernel(every_kernel(8).front(), 8);
  InMemoryRowSource rows = p.source();
  Context context({.memory_budget_bytes = 1u << 20});
  WarningCollector warnings;
  const Context::ObserverScope observe(context, {&warnings});
  KernelMatrix plain(context, rows, *kernel, {.tile_rows = 37});
  KernelMatrix cached(context, rows, *kernel, {.tile_rows = 37});
  auto owned = std::make_unique<TestDiskTier>(n, 60);
  TestDiskTier& disk = *owned;

  SUBCASE("reads fail: every column is computed, and after the limit the tier is no longer used") {
    disk.fail_reads = true;
    cached.enable_column_cache(context.memory().reserve("cache", KernelColumnCache::bytes_for(n, 4)), std::move(owned));
    check_products_equal(plain, cached, rows, 60);
    const ColumnCacheStatistics& statistics = cached.column_cache()->statistics();
    CHECK(statistics.disk_hits == 0);
    CHECK(statistics.disk_failures == KernelColumnCache::kMaxDiskFailures);
    CHECK(cached.column_cache()->disk_tier() == nullptr);
    REQUIRE(warnings.warnings.size() == KernelColumnCache::kMaxDiskFailures);
    CHECK(warnings.warnings.front().find("could not read column") != std::string::npos);
    CHECK(warnings.warnings.front().find("its checksum differs") != std::string::npos);
    CHECK(warnings.warnings.back().find("no longer used") != std::string::npos);
  }
  SUBCASE("writes refused (the queue full): nothing is kept on disk, nothing goes wrong") {
    disk.refuse_writes = true;
    cached.enable_column_cache(context.memory().reserve("cache", KernelColumnCache::bytes_for(n, 4)), std::move(owned));
    check_products_equal(plain, cached, rows, 60);
    const ColumnCacheStatistics& statistics = cached.column_cache()->statistics();
    CHECK(statistics.spilled == 0);
    CHECK(statistics.spills_dropped > 0);
    CHECK(statistics.disk_hits == 0);
    CHECK(disk.reads == 0);
    CHECK(warnings.warnings.empty());
  }
}

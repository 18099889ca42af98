// The Vecchia likelihood (hyper/vecchia_likelihood.h) against the exact one,
// and its neighbour sets against a brute-force search.
#include "engine/data/nearest_neighbours.h"
#include "engine/hyper/vecchia_likelihood.h"
#include "tests/engine/problems.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace gpstream;
using namespace gpstream::testing;

TEST_CASE("nearest neighbours before a limit equal a brute-force search, in scaled inputs") {
  const Problem p = make_problem(6000, 3, 41);
  const std::vector<double> scale = {2.0, 0.5, 1.0};
  const NeighbourIndex index(p.x.data(), p.rows(), 3, scale);
  std::vector<std::uint32_t> found;
  for (const std::size_t i :
       {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1500}, std::size_t{2500}, std::size_t{5999}}) {
    for (const std::size_t limit : {i, p.rows()}) {
      CAPTURE(i);
      CAPTURE(limit);
      index.nearest_before(i, 10, limit, found);
      std::vector<std::pair<double, std::uint32_t>> all;
      for (std::size_t j = 0; j < limit; ++j) {
        double distance = 0.0;
        for (std::size_t l = 0; l < 3; ++l) distance += std::pow((p.x[i * 3 + l] - p.x[j * 3 + l]) * scale[l], 2);
        all.emplace_back(distance, static_cast<std::uint32_t>(j));
      }
      std::sort(all.begin(), all.end());
      REQUIRE(found.size() == std::min<std::size_t>(10, limit));
      for (std::size_t t = 0; t < found.size(); ++t) CHECK(found[t] == all[t].second);
    }
  }
}

TEST_CASE("with every earlier row as a neighbour, the Vecchia likelihood and its gradient are the exact ones") {
  const Problem p = make_problem(120, 2, 42);
  MeanFunction mean;
  mean.intercept = true;
  mean.inputs = {1};
  const std::vector<double> beta = {0.3, -0.2};
  Context context;
  for (const KernelHyperparameters& h : every_kernel(2)) {
    if (h.type == KernelType::histogram_intersection) continue;
    CAPTURE(kernel_type_name(h.type));
    VecchiaLikelihood vecchia(context, p.x.data(), p.y, 2, mean, {.neighbours = 119, .seed = 3});
    vecchia.condition_on(h);
    const MarginalLikelihood approximate = vecchia.evaluate(h, beta);
    const MarginalLikelihood exact = ExactLikelihood(p.x.data(), p.y, 2, mean).evaluate(h, beta);
    CHECK(approximate.value == doctest::Approx(exact.value).epsilon(1e-9));
    REQUIRE(approximate.gradient.size() == exact.gradient.size());
    for (std::size_t j = 0; j < exact.gradient.size(); ++j) {
      CAPTURE(j);
      CHECK(approximate.gradient[j] == doctest::Approx(exact.gradient[j]).epsilon(1e-7).scale(1e-6));
    }
  }
}

TEST_CASE("the Vecchia gradient equals finite differences of its value, and the sum does not depend on threads") {
  const Problem p = make_problem(800, 3, 43);
  MeanFunction mean;
  mean.intercept = true;
  const KernelHyperparameters h{KernelType::matern32, {0.9, 1.4, 0.7}, 1.3, 0.05};
  Context context;
  VecchiaLikelihood vecchia(context, p.x.data(), p.y, 3, mean, {.neighbours = 12, .seed = 5});
  vecchia.condition_on(h);
  const std::vector<double> beta = {0.1};
  const MarginalLikelihood at = vecchia.evaluate(h, beta);
  std::vector<double> point = log_parameters(h);
  point.push_back(beta[0]);
  const std::vector<double> numeric = central_differences(
      [&](const std::vector<double>& t) {
        return vecchia.evaluate(from_log_parameters(h.type, std::span(t).first(5)), std::span(t).last(1)).value;
      },
      point, point.size(), 1e-6);
  for (std::size_t j = 0; j < numeric.size(); ++j) {
    CAPTURE(j);
    CHECK(at.gradient[j] == doctest::Approx(numeric[j]).epsilon(1e-5).scale(1e-3));
  }
  Context one_thread({.threads = 1});
  VecchiaLikelihood serial(one_thread, p.x.data(), p.y, 3, mean, {.neighbours = 12, .seed = 5});
  serial.condition_on(h);
  const MarginalLikelihood again = serial.evaluate(h, beta);
  CHECK(again.value == at.value);
  CHECK(again.gradient == at.gradient);
}

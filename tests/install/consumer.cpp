// Trains the exact GP on y = sin(x) through gpstream's API and predicts at x = 1.5: prints the mean and
// its error against sin(1.5).
#include "api/predictor.h"
#include "api/training.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

struct Means final : gpstream::PredictionSink {
  std::vector<double> values;
  void means(std::span<const double> mean) override { values.assign(mean.begin(), mean.end()); }
  void variances(std::size_t, std::span<const double>) override {}
};

}  // namespace

int main() {
  std::vector<double> x, y;
  for (int i = 0; i < 300; ++i) x.push_back(0.01 * i), y.push_back(std::sin(0.01 * i));
  gpstream::Context context;
  const gpstream::TrainingData data = gpstream::TrainingData::in_memory({x.data(), y.data(), 300, 1});
  gpstream::TrainingConfiguration configuration;
  configuration.prior.kernel = {gpstream::KernelType::squared_exponential_ard, {1.0}, 1.0, 1e-4};
  configuration.standardisation = gpstream::dataset_standardisation(gpstream::describe_training_data(data));
  gpstream::Training training(context, data, configuration);
  training.prepare({});
  const gpstream::TrainingResult trained = training.run("");
  const auto predictor = gpstream::open_predictor(context, *trained.model, data);
  const double at = 1.5;
  Means means;
  predictor->predict(&at, 1, {}, means);
  std::printf("mean %.6f error %.2e\n", means.values.at(0), std::abs(means.values.at(0) - std::sin(at)));
  return std::abs(means.values.at(0) - std::sin(at)) < 1e-3 ? 0 : 1;
}

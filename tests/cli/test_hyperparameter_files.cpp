// Hyperparameter files (JSON) as train --hyper, hyper --init and info read
// them: inputs matched by name, every block of the file used or refused by
// name, and errors that name the field at fault (docs/reliability.md).
#include "storage/dataset/dataset_format.h"
#include "storage/model/dense_model_file.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

using gpstream::testing::quote;
using gpstream::testing::read_file;
using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;
using gpstream::testing::write_file;

namespace {

// A CSV of `rows` rows of three inputs a, b, c (of different scales) and a target, with its columns in
// `order` (a permutation of "abc").
void write_three_inputs(const std::string& path, std::size_t rows, const std::string& order) {
  std::string text;
  for (const char name : order) text += std::string(1, name) + ",";
  text += "y\n";
  for (std::size_t i = 0; i < rows; ++i) {
    const double t = static_cast<double>(i);
    const double values[3] = {std::sin(0.37 * t), 10.0 * std::cos(0.11 * t), 0.01 * std::fmod(7.0 * t, 13.0)};
    for (const char name : order) text += fmt::format("{},", values[name - 'a']);
    text += fmt::format("{}\n", values[0] + 0.05 * values[1] + std::sin(3.0 * values[2]));
  }
  write_file(path, text);
}

void check_message(const gpstream::testing::CommandResult& result, const std::string& message) {
  CAPTURE(result.err);
  CHECK(result.exit_code == 1);
  CHECK(result.err.find(message) != std::string::npos);
}

}  // namespace

TEST_CASE("a hyperparameter file is applied to inputs by name, whatever their order in the dataset") {
  ScratchDirectory directory;
  const std::string abc = directory.file("abc.csv"), cab = directory.file("cab.csv");
  write_three_inputs(abc, 300, "abc");
  write_three_inputs(cab, 300, "cab");
  for (const std::string& csv : {abc, cab}) {
    REQUIRE(run_gpstream("convert -q " + quote(csv) + " -o " + quote(csv + ".h5")).exit_code == 0);
  }
  const std::string hyper = directory.file("h.json");
  REQUIRE(run_gpstream("hyper " + quote(abc + ".h5") + " -q --kernel matern52 --subset 300 --restarts 0 -o " +
                       quote(hyper))
              .exit_code == 0);
  const nlohmann::json json = nlohmann::json::parse(read_file(hyper));
  CHECK(json["input_names"] == nlohmann::json::array({"a", "b", "c"}));

  // Trained on the rows with their columns in another order: the same model, input for input.
  const std::string model_abc = directory.file("abc_model.h5"), model_cab = directory.file("cab_model.h5");
  REQUIRE(run_gpstream("train " + quote(abc + ".h5") + " -q --hyper " + quote(hyper) + " -o " + quote(model_abc))
              .exit_code == 0);
  const auto reordered =
      run_gpstream("train " + quote(cab + ".h5") + " --hyper " + quote(hyper) + " -o " + quote(model_cab));
  CAPTURE(reordered.err);
  REQUIRE(reordered.exit_code == 0);
  CHECK(reordered.err.find("note") == std::string::npos);  // matched by name: nothing to say
  const gpstream::DenseModel a = gpstream::read_dense_model(model_abc), c = gpstream::read_dense_model(model_cab);
  const std::vector<double>& in_abc = a.prior.kernel.lengthscales;
  REQUIRE(in_abc.size() == 3);
  CHECK(c.prior.kernel.lengthscales == std::vector<double>{in_abc[2], in_abc[0], in_abc[1]});
  CHECK(c.standardisation.x_std == std::vector<double>{a.standardisation.x_std[2], a.standardisation.x_std[0],
                                                       a.standardisation.x_std[1]});
  // Both predict the same at the same points, each read by name from either CSV.
  const std::string p1 = directory.file("p1.csv"), p2 = directory.file("p2.csv");
  REQUIRE(run_gpstream("predict " + quote(model_abc) + " " + quote(cab) + " -q -o " + quote(p1)).exit_code == 0);
  REQUIRE(run_gpstream("predict " + quote(model_cab) + " " + quote(abc) + " -q -o " + quote(p2)).exit_code == 0);
  const auto first = gpstream::testing::read_numbers(p1), second = gpstream::testing::read_numbers(p2);
  REQUIRE(first.size() == second.size());
  for (std::size_t i = 0; i < first.size(); ++i) CHECK(first[i][0] == doctest::Approx(second[i][0]).epsilon(1e-9));

  SUBCASE("a file whose inputs the dataset does not have is refused, naming them") {
    nlohmann::json renamed = json;
    renamed["input_names"] = {"a", "b", "z"};
    write_file(directory.file("z.json"), renamed.dump());
    check_message(run_gpstream("train " + quote(cab + ".h5") + " -q --hyper " + quote(directory.file("z.json")) +
                               " -o " + quote(directory.file("m.h5"))),
                  "was learned on inputs that '" + cab + ".h5' does not have: z");
    CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));
  }
  SUBCASE("a file without names is applied in order when the counts agree, and says so once") {
    nlohmann::json unnamed = json;
    unnamed.erase("input_names");
    write_file(directory.file("unnamed.json"), unnamed.dump());
    const auto applied = run_gpstream("train " + quote(cab + ".h5") + " --hyper " +
                                      quote(directory.file("unnamed.json")) + " -o " + quote(directory.file("m.h5")));
    CAPTURE(applied.err);
    CHECK(applied.exit_code == 0);
    const std::string note = "does not name its inputs: its values are applied to the inputs of '" + cab +
                             ".h5' in order (c, a, b)";
    CHECK(applied.err.find(note) != std::string::npos);
    CHECK(applied.err.find(note, applied.err.find(note) + 1) == std::string::npos);
  }
}

TEST_CASE("a hyperparameter file's mean is used without a standardisation block, as with one") {
  ScratchDirectory directory;
  const std::string csv = directory.file("abc.csv");
  write_three_inputs(csv, 200, "abc");
  const std::string data = csv + ".h5";
  REQUIRE(run_gpstream("convert -q " + quote(csv) + " -o " + quote(data)).exit_code == 0);
  // The dataset's own statistics, written out: a file with them and one without must give the same model.
  const gpstream::DatasetDescription described = gpstream::read_dataset_description(data);
  nlohmann::json base = {{"kernel_name", "rbf"},
                         {"length_scales", {1.5, 2.0, 0.7}},
                         {"signal_variance", 1.0},
                         {"noise_variance", 0.05},
                         {"mean", {{"intercept", true}, {"inputs", {0, 2}}, {"coefficients", {0.1, 0.3, -0.2}}}}};
  nlohmann::json with_statistics = base;
  with_statistics["standardisation"] = {{"x_mean", described.x_mean},
                                        {"x_std", described.x_std},
                                        {"y_mean", described.y_mean},
                                        {"y_std", described.y_std}};
  nlohmann::json without_mean = base;
  without_mean.erase("mean");
  std::vector<std::vector<std::vector<double>>> predictions;
  for (const auto& [name, file] : {std::pair{"alone", base}, std::pair{"stats", with_statistics},
                                   std::pair{"none", without_mean}}) {
    const std::string hyper = directory.file(std::string(name) + ".json"), model = directory.file(name + std::string(".h5"));
    write_file(hyper, file.dump());
    const auto trained = run_gpstream("train " + quote(data) + " -q --hyper " + quote(hyper) + " -o " + quote(model));
    CAPTURE(trained.err);
    REQUIRE(trained.exit_code == 0);
    const std::string out = directory.file(std::string(name) + "_p.csv");
    REQUIRE(run_gpstream("predict " + quote(model) + " " + quote(csv) + " -q -o " + quote(out)).exit_code == 0);
    predictions.push_back(gpstream::testing::read_numbers(out));
  }
  CHECK(predictions[0] == predictions[1]);  // the mean used alike
  CHECK(predictions[0] != predictions[2]);  // and it matters
  // A mean naming an input the dataset does not have is refused.
  base["mean"]["inputs"] = {0, 5};
  write_file(directory.file("bad.json"), base.dump());
  check_message(run_gpstream("train " + quote(data) + " -q --hyper " + quote(directory.file("bad.json")) + " -o " +
                             quote(directory.file("m.h5"))),
                ": mean");
}

TEST_CASE("a hyperparameter file's errors name the field at fault and what it needs") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), hyper = directory.file("h.json");
  REQUIRE(run_gpstream("generate friedman1 --rows 100 --seed 2 -q -o " + quote(data)).exit_code == 0);
  const std::string train = "train " + quote(data) + " -q -o " + quote(directory.file("m.h5")) + " --hyper " + quote(hyper);
  const nlohmann::json sum = {{"kernel_name", "matern32+matern32"},
                              {"length_scales", {1.0}},
                              {"signal_variance", 1.0},
                              {"noise_variance", 0.1},
                              {"added_terms", {{{"kernel_name", "matern32"}, {"length_scales", {5.0}}, {"signal_variance", 0.5}}}}};
  const auto refused = [&](const nlohmann::json& file, const std::string& message) {
    write_file(hyper, file.dump());
    const auto result = run_gpstream(train);
    CAPTURE(file.dump());
    check_message(result, message);
    CHECK(result.err.find("json.exception") == std::string::npos);
    CHECK(gpstream::testing::count_lines(result.err) == 1);
    CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));
  };
  SUBCASE("a sum without its further terms") {
    nlohmann::json file = sum;
    file.erase("added_terms");
    refused(file, "the kernel matern32+matern32 is a sum of 2 terms: field \"added_terms\"");
  }
  SUBCASE("a term whose kernel disagrees with the sum's") {
    nlohmann::json file = sum;
    file["added_terms"][0]["kernel_name"] = "rbf";
    refused(file, "added_terms[0]: \"kernel_name\" is rbf, but the sum matern32+matern32 has matern32 as term 2");
  }
  SUBCASE("a field of the wrong type") {
    nlohmann::json file = sum;
    file["kernel_name"] = 3;
    refused(file, "field \"kernel_name\" must be a string, not 3");
    file = sum;
    file["signal_variance"] = "big";
    refused(file, "field \"signal_variance\" must be a number, not \"big\"");
  }
  SUBCASE("gamma and length_scales that disagree") {
    nlohmann::json file = sum;
    file["gamma"] = {0.01};
    refused(file, "\"length_scales\" and \"gamma\" disagree");
  }
  SUBCASE("a standard deviation of 0") {
    nlohmann::json file = sum;
    file["standardisation"] = {{"x_mean", std::vector<double>(10, 0.0)},
                               {"x_std", std::vector<double>(10, 1.0)},
                               {"y_mean", 0.0},
                               {"y_std", 1.0}};
    file["standardisation"]["x_std"][3] = 0.0;
    refused(file, "x_std of input 4 is 0: a scale must be positive");
  }
  SUBCASE("not JSON") {
    write_file(hyper, "{\"kernel_name\": \"rbf\",\n  \"signal_variance\": }");
    check_message(run_gpstream(train), "not JSON (parse error at line 2");
  }
}

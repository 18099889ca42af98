// Hyperparameter learning through the gpstream binary: `hyper`, `train
// --hyper`, `train --learn-hyper`, and their errors.
#include "engine/hyper/marginal_likelihood.h"
#include "storage/hyper/hyperparameter_file.h"
#include "storage/model/dense_model_file.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

using gpstream::testing::read_file;
using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;

namespace {
std::string quote(const std::string& path) { return "'" + path + "'"; }
}  // namespace

TEST_CASE("hyper learns, prints its trace and writes a file that train uses, and train --learn-hyper learns the same") {
  ScratchDirectory directory;
  const std::string data = directory.file("train.h5"), hyper = directory.file("hyper.json");
  REQUIRE(run_gpstream("generate friedman1 --rows 400 --seed 3 -q -o " + quote(data)).exit_code == 0);

  const auto learned =
      run_gpstream("hyper " + quote(data) + " -o " + quote(hyper) + " --subset 250 --restarts 1 --seed 4");
  CAPTURE(learned.err);
  REQUIRE(learned.exit_code == 0);
  CHECK(learned.out.find("-log p(y|X)") != std::string::npos);
  CHECK(learned.out.find("start 1:") != std::string::npos);
  CHECK(learned.out.find("<- best") != std::string::npos);

  const nlohmann::json json = nlohmann::json::parse(read_file(hyper));
  CHECK(json["kernel_name"] == "rbf");
  CHECK(json["length_scales"].size() == 10);
  CHECK(json["gamma"].size() == 10);
  CHECK(json["hyper_subset"]["size"] == 250);
  CHECK(json["hyper_subset"]["seed"] == 4);
  CHECK(json["standardisation"]["x_mean"].size() == 10);
  CHECK(json["log_marginal_likelihood"].is_number());
  // Friedman1's noise has unit variance, about 1/24 of the target's: the
  // learned noise variance (standardised) must be of that order.
  const gpstream::HyperparameterFile file = gpstream::read_hyperparameter_file(hyper);
  CHECK(file.prior.kernel.noise_variance > 0.01);
  CHECK(file.prior.kernel.noise_variance < 0.2);
  REQUIRE(file.standardisation.has_value());

  const std::string model = directory.file("model.h5");
  const auto trained =
      run_gpstream("train " + quote(data) + " -o " + quote(model) + " --hyper " + quote(hyper) + " -q");
  CAPTURE(trained.err);
  REQUIRE(trained.exit_code == 0);
  const gpstream::DenseModel dense = gpstream::read_dense_model(model);
  CHECK(dense.prior.kernel.noise_variance == file.prior.kernel.noise_variance);
  CHECK(dense.prior.kernel.lengthscales == file.prior.kernel.lengthscales);

  // The same subset, seed and options inside train give the same values.
  const std::string saved = directory.file("saved.json"), model2 = directory.file("model2.h5");
  const auto both = run_gpstream("train " + quote(data) + " -o " + quote(model2) +
                                 " --learn-hyper --subset 250 --restarts 1 --seed 4 --save-hyper " + quote(saved));
  CAPTURE(both.err);
  REQUIRE(both.exit_code == 0);
  CHECK(both.err.find("train: learned in") != std::string::npos);
  const gpstream::HyperparameterFile again = gpstream::read_hyperparameter_file(saved);
  CHECK(again.prior.kernel.lengthscales == file.prior.kernel.lengthscales);
  CHECK(again.prior.kernel.noise_variance == file.prior.kernel.noise_variance);
  CHECK(gpstream::read_dense_model(model2).prior.kernel.signal_variance == file.prior.kernel.signal_variance);

  // And without --seed: both take the schema's default seed (hyper's used to be 0, train's 1).
  const std::string by_default = directory.file("default.json"), saved_by_default = directory.file("default2.json");
  REQUIRE(
      run_gpstream("hyper " + quote(data) + " -o " + quote(by_default) + " --subset 250 --restarts 1 -q").exit_code ==
      0);
  REQUIRE(run_gpstream("train " + quote(data) + " -o " + quote(directory.file("model3.h5")) +
                       " --learn-hyper --subset 250 --restarts 1 -q --save-hyper " + quote(saved_by_default))
              .exit_code == 0);
  CHECK(gpstream::read_hyperparameter_file(by_default).prior.kernel.lengthscales ==
        gpstream::read_hyperparameter_file(saved_by_default).prior.kernel.lengthscales);
}

TEST_CASE("hyperparameter learning rejects bad inputs with one clear line and no output file") {
  ScratchDirectory directory;
  const std::string data = directory.file("train.h5"), hyper = directory.file("hyper.json");
  REQUIRE(run_gpstream("generate friedman1 --rows 100 --seed 3 -q -o " + quote(data)).exit_code == 0);

  const auto too_many = run_gpstream("hyper " + quote(data) + " -o " + quote(hyper) + " --subset 101");
  CHECK(too_many.exit_code == 2);
  CHECK(too_many.err.find("--subset 101 is larger than the 100 rows") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(hyper));

  const auto learn_too_many =
      run_gpstream("train " + quote(data) + " -o " + quote(directory.file("m.h5")) + " --learn-hyper --subset 500");
  CHECK(learn_too_many.exit_code == 2);
  CHECK(learn_too_many.err.find("--subset 500 is larger") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));

  // A file learned for 3 inputs, used on a 10-input dataset.
  const std::string other = directory.file("other.json");
  gpstream::testing::write_file(other, R"({"signal_variance": 1, "noise_variance": 0.1, "length_scales": [1, 2, 3]})");
  const auto wrong_d =
      run_gpstream("train " + quote(data) + " -o " + quote(directory.file("m.h5")) + " --hyper " + quote(other));
  CHECK(wrong_d.exit_code == 1);
  CHECK(wrong_d.err.find("has 3 lengthscales, but") != std::string::npos);
  CHECK(wrong_d.err.find("has 10 inputs") != std::string::npos);
  CHECK(gpstream::testing::count_lines(wrong_d.err) == 1);
  CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));

  CHECK(run_gpstream("hyper " + quote(data) + " -o " + quote(hyper) + " --subset 50 --min-noise 0").exit_code == 2);
  CHECK(run_gpstream("hyper " + quote(data) + " -o " + quote(hyper) + " --subset 50 --kernel matern92").exit_code != 0);
  CHECK(run_gpstream("hyper " + quote(data) + " -o " + quote(hyper) + " --subset 50 --max-evaluations 0").exit_code ==
        2);
  CHECK(run_gpstream("hyper " + quote(data) + " -o " + quote(hyper) + " --subset 50 --noise-var 0").exit_code == 2);
  CHECK(run_gpstream("hyper " + quote(data) + " -o " + quote(hyper) + " --subset 50 --lengthscales 1,nan").exit_code ==
        2);
  const auto wrong_init =
      run_gpstream("hyper " + quote(data) + " -o " + quote(hyper) + " --subset 50 --init " + quote(other));
  CHECK(wrong_init.exit_code == 2);
  CHECK(wrong_init.err.find("--init: '" + other + "' has 3 lengthscales, but") != std::string::npos);
  // --hyper fixes the kernel, --init starts the search: each with its own mode of train.
  const auto both = run_gpstream("train " + quote(data) + " -o " + quote(directory.file("m.h5")) +
                                 " --learn-hyper --hyper " + quote(other));
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("give --init FILE") != std::string::npos);
  CHECK(run_gpstream("train " + quote(data) + " -o " + quote(directory.file("m.h5")) + " --init " + quote(other) +
                     " --noise-var 0.1 --lengthscales 1")
            .exit_code == 2);
  // An option of learning without --learn-hyper is refused, not ignored (--mean used to be).
  const auto mean_alone = run_gpstream("train " + quote(data) + " -o " + quote(directory.file("m.h5")) +
                                       " --noise-var 0.1 --lengthscales 1 --mean linear");
  CHECK(mean_alone.exit_code == 2);
  CHECK(mean_alone.err.find("--mean is an option of learning: it needs --learn-hyper") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(hyper));
  CHECK_FALSE(std::filesystem::exists(directory.file("m.h5")));
}

TEST_CASE(
    "hyper and train --learn-hyper start from --init and the kernel options, and say when the answer is the "
    "start") {
  ScratchDirectory directory;
  const std::string data = directory.file("train.h5"), first = directory.file("first.json");
  REQUIRE(run_gpstream("generate friedman1 --rows 300 --seed 5 -q -o " + quote(data)).exit_code == 0);
  REQUIRE(run_gpstream("hyper " + quote(data) + " -o " + quote(first) + " --subset 200 --restarts 0 -q").exit_code ==
          0);
  const gpstream::HyperparameterFile learned = gpstream::read_hyperparameter_file(first);

  // One evaluation: the answer is the start, which is the file's values with --signal-var over them.
  const std::string again = directory.file("again.json");
  // The subset's search only, with no mean to fit: what --init starts.
  const auto stopped =
      run_gpstream("hyper " + quote(data) + " -o " + quote(again) + " --subset 200 --restarts 0 " +
                   "--max-evaluations 1 -q --learn-on subset --mean none --init " + quote(first) + " --signal-var 2.5");
  CAPTURE(stopped.out);
  CAPTURE(stopped.err);
  REQUIRE(stopped.exit_code == 0);
  CHECK(stopped.out.find("(--init " + first + " and the kernel options)") != std::string::npos);
  CHECK(stopped.out.find("note: the answer equals the start") != std::string::npos);
  const gpstream::HyperparameterFile start = gpstream::read_hyperparameter_file(again);
  CHECK(start.prior.kernel.signal_variance == doctest::Approx(2.5).epsilon(1e-12));
  REQUIRE(start.prior.kernel.lengthscales.size() == learned.prior.kernel.lengthscales.size());
  for (std::size_t l = 0; l < learned.prior.kernel.lengthscales.size(); ++l) {
    CHECK(start.prior.kernel.lengthscales[l] == doctest::Approx(learned.prior.kernel.lengthscales[l]).epsilon(1e-12));
  }
  CHECK(start.prior.kernel.noise_variance == doctest::Approx(learned.prior.kernel.noise_variance).epsilon(1e-12));

  // train --learn-hyper takes the same start (values not given informed by the data) and says so.
  const std::string model = directory.file("model.h5"), saved = directory.file("saved.json");
  const auto trained = run_gpstream("train " + quote(data) + " -o " + quote(model) +
                                    " --learn-hyper --subset 200 --restarts 0 --max-evaluations 1 --noise-var 0.3 " +
                                    "--lengthscales 4 --kernel rbf --learn-on subset --mean none --save-hyper " +
                                    quote(saved) + " --max-iter 5");
  CAPTURE(trained.err);
  REQUIRE(trained.exit_code == 0);
  CHECK(trained.err.find("start the kernel options, the rest informed by the data") != std::string::npos);
  CHECK(trained.err.find("train: note: the answer equals the start") != std::string::npos);
  const gpstream::HyperparameterFile trained_start = gpstream::read_hyperparameter_file(saved);
  CHECK(trained_start.prior.kernel.noise_variance == doctest::Approx(0.3).epsilon(1e-12));
  // The search works in log-space: exp(log 4) is 4 to rounding, not necessarily bit for bit.
  REQUIRE(trained_start.prior.kernel.lengthscales.size() == 10);
  for (const double lengthscale : trained_start.prior.kernel.lengthscales)
    CHECK(lengthscale == doctest::Approx(4.0).epsilon(1e-12));
}

namespace {

// Starts `gpstream ARGS`, waits until `file` exists (its first checkpoint), interrupts it as Ctrl-C does, and
// returns its exit code and what it said.
std::pair<int, std::string> interrupt_once_checkpointed(const std::vector<std::string>& arguments,
                                                        const std::string& file, const std::string& err) {
  const pid_t pid = gpstream::testing::spawn_gpstream(arguments, err);
  for (int wait = 0; wait < 20000 && !std::filesystem::exists(file); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(pid, SIGINT);
  const int code = gpstream::testing::wait_for(pid);
  return {code, read_file(err)};
}

}  // namespace

TEST_CASE("hyper --all-rows-steps refines the ladder's optimum on all rows and says so, in the table and the file") {
  ScratchDirectory directory;
  const std::string data = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 1500 --seed 8 -q -o " + quote(data)).exit_code == 0);
  const std::string ladder = directory.file("ladder.json"), refined = directory.file("refined.json");
  const std::string options = " --kernel rbf --subset 300 --restarts 0 --vecchia-neighbours 10 --exact-rows 600 -q";
  REQUIRE(run_gpstream("hyper " + quote(data) + " -o " + quote(ladder) + options).exit_code == 0);
  const auto run =
      run_gpstream("hyper " + quote(data) + " -o " + quote(refined) + options + " --all-rows-steps 3 --probes 8");
  CAPTURE(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("refined rbf on all 1,500 rows by the exact likelihood's stochastic gradient (8 probes)") !=
        std::string::npos);
  const gpstream::HyperparameterFile before = gpstream::read_hyperparameter_file(ladder);
  const gpstream::HyperparameterFile after = gpstream::read_hyperparameter_file(refined);
  const std::string file = read_file(refined);
  CHECK(file.find("refined on all 1500 rows by the exact likelihood's stochastic gradient") != std::string::npos);
  CHECK(file.find("\"rows\": 1500") != std::string::npos);
  CHECK(gpstream::log_parameters(after.prior.kernel) != gpstream::log_parameters(before.prior.kernel));
  // Probes split into 8 groups: another count is refused in one line naming the option.
  const auto refused = run_gpstream("hyper " + quote(data) + " -o " + quote(directory.file("x.json")) + options +
                                    " --all-rows-steps 2 --probes 12");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("--probes must be a multiple of 8") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("x.json")));
}

TEST_CASE("an interrupted hyperparameter search resumes from its checkpoint to the uninterrupted answer") {
  ScratchDirectory directory;
  const std::string data = directory.file("train.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 1500 --seed 8 -q -o " + quote(data)).exit_code == 0);
  const std::string whole = directory.file("whole.json"), part = directory.file("part.json");
  const std::string checkpoint = directory.file("search.h5");
  // Friedman1's 10 inputs decline the Vecchia likelihood: learning goes on to one exact rung of 600 rows.
  const std::string options = " --subset 300 --restarts 1 --vecchia-neighbours 10 --exact-rows 600 -q";
  REQUIRE(run_gpstream("hyper " + quote(data) + " -o " + quote(whole) + options).exit_code == 0);

  SUBCASE("hyper: run the same command again") {
    // clang-format off
    const std::vector<std::string> command = {
        "hyper", data, "-o", part, "--subset", "300", "--restarts", "1", "--vecchia-neighbours", "10",
        "--exact-rows", "600", "-q", "--checkpoint", checkpoint, "--checkpoint-every", "0.001"};
    // clang-format on
    const auto [code, said] = interrupt_once_checkpointed(command, checkpoint, directory.file("err"));
    CAPTURE(said);
    if (code == 0) {
      MESSAGE("the search ended before the interrupt reached it");
    } else {
      CHECK(code == 130);
      CHECK(said.find("evaluations saved in '" + checkpoint + "': run the same command again") != std::string::npos);
      CHECK_FALSE(std::filesystem::exists(part));
      const auto resumed = run_gpstream("hyper " + quote(data) + " -o " + quote(part) + options + " --checkpoint " +
                                        quote(checkpoint) + " --checkpoint-every 0.001");
      CAPTURE(resumed.err);
      REQUIRE(resumed.exit_code == 0);
      CHECK(resumed.err.find("continuing the search saved in") != std::string::npos);
    }
    const gpstream::HyperparameterFile a = gpstream::read_hyperparameter_file(whole);
    const gpstream::HyperparameterFile b = gpstream::read_hyperparameter_file(part);
    CHECK(gpstream::kernel_name(a.prior.kernel) == gpstream::kernel_name(b.prior.kernel));
    CHECK(gpstream::log_parameters(a.prior.kernel) == gpstream::log_parameters(b.prior.kernel));
    CHECK(a.prior.mean.coefficients == b.prior.mean.coefficients);
    // Another search may not use this one's checkpoint.
    const auto other = run_gpstream("hyper " + quote(data) + " -o " + quote(directory.file("x.json")) +
                                    " --subset 200 -q --checkpoint " + quote(checkpoint));
    CHECK(other.exit_code == 1);
    CHECK(other.err.find("holds another search") != std::string::npos);
  }
  SUBCASE("train --learn-hyper: the resume command printed at launch") {
    const std::string model = directory.file("model.h5"), reference = directory.file("reference.h5");
    const std::vector<std::string> launch = {"train",
                                             data,
                                             "-o",
                                             model,
                                             "--learn-hyper",
                                             "--subset",
                                             "300",
                                             "--restarts",
                                             "1",
                                             "--vecchia-neighbours",
                                             "10",
                                             "--exact-rows",
                                             "600",
                                             "--max-iter",
                                             "5",
                                             "--checkpoint",
                                             checkpoint,
                                             "--checkpoint-every",
                                             "0.001",
                                             "-q"};
    REQUIRE(
        run_gpstream("train " + quote(data) + " -o " + quote(reference) + " --learn-hyper" + options + " --max-iter 5")
            .exit_code == 0);
    std::filesystem::remove(checkpoint);
    const auto [code, said] = interrupt_once_checkpointed(launch, checkpoint, directory.file("err"));
    CAPTURE(said);
    if (code == 0) {
      MESSAGE("the job ended before the interrupt reached it");
    } else {
      CHECK(code == 130);
      CHECK(said.find("Resume with:\n  gpstream train --resume " + checkpoint) != std::string::npos);
      const auto resumed = run_gpstream("train --resume " + quote(checkpoint));
      CAPTURE(resumed.err);
      REQUIRE(resumed.exit_code == 0);
    }
    const auto a = gpstream::read_dense_model(reference), b = gpstream::read_dense_model(model);
    CHECK(gpstream::log_parameters(a.prior.kernel) == gpstream::log_parameters(b.prior.kernel));
    CHECK(a.alpha == b.alpha);
  }
}

TEST_CASE(
    "the default trend leaves out constant and collinear inputs and says which, an explicit --mean naming one is "
    "refused") {
  ScratchDirectory directory;
  // Two constant inputs and one the sum of two others, as in the naval propulsion set (two constant columns).
  std::string text = "a,b,still,c,flat,y\n";
  for (int i = 0; i < 400; ++i) {
    const double a = std::fmod(i * 0.6180339887, 1.0), b = std::fmod(i * 0.4142135623, 1.0);
    text += fmt::format("{},{},3,{},-1,{}\n", a, b, a + b, std::sin(3 * a) + b * b + 0.01 * std::cos(7.0 * i));
  }
  gpstream::testing::write_file(directory.file("d.csv"), text);
  const std::string data = directory.file("d.h5"), hyper = directory.file("h.json");
  REQUIRE(run_gpstream("convert " + quote(directory.file("d.csv")) + " -q -o " + quote(data)).exit_code == 0);
  const auto learned = run_gpstream("hyper " + quote(data) + " --kernel matern52 --restarts 0 -o " + quote(hyper));
  CAPTURE(learned.err);
  REQUIRE(learned.exit_code == 0);
  CHECK(learned.out.find("mean: still, c, flat left out of the linear trend (constant, or a combination of the other "
                         "inputs)") != std::string::npos);
  CHECK(learned.out.find("mean (linear in a, b): ") != std::string::npos);
  const nlohmann::json json = nlohmann::json::parse(read_file(hyper));
  CHECK(json["mean"]["inputs"] == nlohmann::json::array({0, 1}));
  // The model it learned trains and predicts its rows.
  const auto trained =
      run_gpstream("train " + quote(data) + " --hyper " + quote(hyper) + " -q -o " + quote(directory.file("m.h5")));
  CHECK(trained.exit_code == 0);
  const auto predicted = run_gpstream("predict " + quote(directory.file("m.h5")) + " " + quote(data) + " -o " +
                                      quote(directory.file("p.csv")));
  CHECK(predicted.exit_code == 0);
  CHECK(predicted.err.find("RMSE ") != std::string::npos);
  // train --learn-hyper, the newcomer's path, as well.
  CHECK(run_gpstream("train " + quote(data) + " --learn-hyper --kernel matern52 --restarts 0 -q -o " +
                     quote(directory.file("m2.h5")))
            .exit_code == 0);
  // Named by the user, such an input is refused, naming it.
  const auto refused = run_gpstream("hyper " + quote(data) + " --kernel matern52 --mean linear:a,still -o " +
                                    quote(directory.file("h2.json")));
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("the mean's input \"still\" is constant, or a combination of the others") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("h2.json")));
}

TEST_CASE("hyper shows every term of a sum: in its trace, its table and its file") {
  ScratchDirectory directory;
  const std::string data = directory.file("train.h5"), hyper = directory.file("hyper.json");
  REQUIRE(run_gpstream("generate friedman1 --rows 200 --seed 3 -q -o " + quote(data)).exit_code == 0);
  const auto learned = run_gpstream("hyper " + quote(data) + " --kernel matern32+matern32 --subset 200 --restarts 0 " +
                                    "--max-evaluations 5 -o " + quote(hyper));
  CAPTURE(learned.out);
  CAPTURE(learned.err);
  REQUIRE(learned.exit_code == 0);
  // The trace: start, evaluation, -log p, |grad|, the terms' signal variances joined by '+', the noise variance.
  std::istringstream lines(learned.out);
  std::string line;
  std::size_t traced = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> words{std::istream_iterator<std::string>(fields), std::istream_iterator<std::string>()};
    if (words.size() != 6 || words[0].find_first_not_of("0123456789") != std::string::npos) continue;
    ++traced;
    const std::size_t plus = words[4].find('+', 1);
    REQUIRE(plus != std::string::npos);
    CHECK(std::stod(words[4].substr(0, plus)) > 0);
    CHECK(std::stod(words[4].substr(plus + 1)) > 0);
    CHECK(std::stod(words[5]) > 0);
    CHECK(std::stod(words[5]) < 1);  // the noise variance, standardised
  }
  CHECK(traced >= 2);
  // The table: the second term's lengthscales and signal variance after the first's.
  const nlohmann::json json = nlohmann::json::parse(read_file(hyper));
  REQUIRE(json["added_terms"].size() == 1);
  CHECK(learned.out.find(fmt::format("; {:.3g}", json["added_terms"][0]["signal_variance"].get<double>())) !=
        std::string::npos);
  CHECK(learned.out.find(" + [") != std::string::npos);
}

TEST_CASE("train --learn-hyper learns the sum --kernel names, as hyper does") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5"), model = directory.file("m.h5"), file = directory.file("h.json");
  REQUIRE(run_gpstream("generate friedman1 --rows 200 --seed 5 -q -o " + quote(data)).exit_code == 0);
  const std::string options = " --kernel matern32+rbf --learn-on subset --subset 200 --restarts 0 --seed 3 -q";
  const auto learned = run_gpstream("hyper " + quote(data) + " -o " + quote(file) + options);
  CAPTURE(learned.err);
  REQUIRE(learned.exit_code == 0);
  const auto trained = run_gpstream("train " + quote(data) + " -o " + quote(model) + " --learn-hyper" + options);
  CAPTURE(trained.err);
  REQUIRE(trained.exit_code == 0);
  const gpstream::KernelHyperparameters kernel = gpstream::read_dense_model(model).prior.kernel;
  CHECK(gpstream::kernel_name(kernel) == "matern32+rbf");
  CHECK(kernel.noise_variance == gpstream::read_hyperparameter_file(file).prior.kernel.noise_variance);
}

// Sparse models through the gpstream binary: every model trains, saves and
// predicts means and variances equal to the engine's closed forms on the
// saved model; srm-trans with every training row as its basis is the exact
// GP; a greedy selection resumed from its checkpoint equals the
// uninterrupted one; bad options give one clear line and no model.
#include "engine/kernels/kernel.h"
#include "engine/sparse/sparse_prediction.h"
#include "storage/csv/csv_table.h"
#include "storage/model/sparse_model_file.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

using gpstream::testing::quote;
using gpstream::testing::read_file;
using gpstream::testing::read_numbers;
using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;

namespace {

const std::string kHyper = " --lengthscales 0.5,0.5,0.8,1.5,2,40,40,40,40,40 --noise-var 0.05 --signal-var 1 ";

struct Data {
  ScratchDirectory directory;
  std::string train = directory.file("train.h5"), test = directory.file("test.csv");
  Data() {
    REQUIRE(run_gpstream("generate friedman1 --rows 400 --seed 3 -q -o " + quote(train)).exit_code == 0);
    REQUIRE(run_gpstream("generate friedman1 --rows 40 --seed 4 --noise-free -q -o " + quote(test)).exit_code == 0);
  }
};

}  // namespace

TEST_CASE("every sparse model trains, saves and predicts the engine's closed form in the target's units") {
  Data data;
  const gpstream::CsvInputs inputs =
      gpstream::read_csv_inputs(data.test, {"x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10"}, "y");
  for (const char* name : {"sd", "sr", "sgma", "mpgp", "sggp", "nystrom", "cholqr", "online"}) {
    CAPTURE(name);
    const std::string model = data.directory.file(std::string(name) + ".h5");
    const std::string output = data.directory.file(std::string(name) + ".csv");
    const std::string extra = std::string(name) == "cholqr" ? " --max-iter 2 --info-pivots 8" : "";
    const auto trained = run_gpstream("train " + quote(data.train) + " -o " + quote(model) + " --model " + name +
                                      " --basis 60" + extra + kHyper);
    CAPTURE(trained.err);
    REQUIRE(trained.exit_code == 0);
    const auto predicted =
        run_gpstream("predict " + quote(model) + " " + quote(data.test) + " -o " + quote(output) + " --variance");
    CAPTURE(predicted.err);
    REQUIRE(predicted.exit_code == 0);
    CHECK(predicted.err.find("RMSE") != std::string::npos);

    const gpstream::SparseModel saved = gpstream::read_sparse_model(model);
    CHECK(saved.method == name);
    CHECK(saved.basis_size() <= 60);
    CHECK(saved.basis_size() >= 30);
    if (saved.variance_form == gpstream::SparseVarianceForm::reduced_rank) continue;  // needs the training rows
    std::vector<double> x = inputs.x;
    saved.standardisation.apply_to_rows(x.data(), inputs.rows, saved.columns);
    const auto kernel = gpstream::make_kernel(saved.prior.kernel, saved.columns);
    const gpstream::SparsePrediction expected = gpstream::predict_sparse(saved, *kernel, x.data(), inputs.rows, true);
    const auto rows = read_numbers(output);
    REQUIRE(rows.size() == inputs.rows);
    const double scale = saved.standardisation.y_std * saved.standardisation.y_std;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double trend = saved.prior.mean.value(&x[i * saved.columns]);
      CHECK(rows[i][0] ==
            doctest::Approx(saved.standardisation.restore_target(expected.mean[i] + trend)).epsilon(1e-9));
      CHECK(rows[i][1] ==
            doctest::Approx(scale * (expected.latent[i] + saved.prior.kernel.noise_variance)).epsilon(1e-9));
      CHECK(rows[i][1] > 0.0);
    }
  }
}

TEST_CASE("srm-trans with the training rows as test rows and basis equals the exact GP (train --solver cholesky)") {
  Data data;
  const std::string hyper = data.directory.file("hyper.json"), exact = data.directory.file("exact.h5");
  const std::string by_cholesky = data.directory.file("cholesky.csv"), by_trans = data.directory.file("trans.csv");
  REQUIRE(
      run_gpstream("train " + quote(data.train) + " -o " + quote(exact) + " -q --solver cholesky" + kHyper).exit_code ==
      0);
  // The same kernel as a hyperparameter file, for srm-trans.
  gpstream::testing::write_file(
      hyper, R"({"kernel_name": "se-ard",)"
             R"( "length_scales": [0.5,0.5,0.8,1.5,2,40,40,40,40,40], "signal_variance": 1, "noise_variance": 0.05})");
  REQUIRE(
      run_gpstream("predict " + quote(exact) + " " + quote(data.train) + " -q -o " + quote(by_cholesky)).exit_code ==
      0);
  const auto trans = run_gpstream("predict --model srm-trans " + quote(data.train) + " " + quote(data.train) +
                                  " --hyper " + quote(hyper) + " --basis 400 -o " + quote(by_trans) + " --variance");
  CAPTURE(trans.err);
  REQUIRE(trans.exit_code == 0);
  const auto a = read_numbers(by_cholesky), b = read_numbers(by_trans);
  REQUIRE(a.size() == 400);
  REQUIRE(b.size() == 400);
  double largest = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::abs(a[i][0] - b[i][0]));
  CHECK(largest < 1e-4);  // targets are O(10); the SR fit carries a jitter of 1e-8 on K_B
  // The committee machine with one module is the exact GP too (up to a jitter of 1e-8 s² on K_**).
  const std::string by_committee = data.directory.file("bcm.csv");
  const auto committee =
      run_gpstream("predict --model bcm " + quote(data.train) + " " + quote(data.train) + " --hyper " + quote(hyper) +
                   " --modules 1 --query-block 100 -o " + quote(by_committee));
  CAPTURE(committee.err);
  REQUIRE(committee.exit_code == 0);
  CHECK(committee.err.find("bcm with 1 k-means modules") != std::string::npos);
  const auto c = read_numbers(by_committee);
  REQUIRE(c.size() == 400);
  largest = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::abs(a[i][0] - c[i][0]));
  CHECK(largest < 1e-5);
  const auto modules =
      run_gpstream("predict --model bcm " + quote(data.train) + " " + quote(data.test) + " --hyper " + quote(hyper) +
                   " --module-size 100 --variance -o " + quote(data.directory.file("m.csv")));
  CAPTURE(modules.err);
  CHECK(modules.exit_code == 0);
  CHECK(modules.err.find("bcm with 4 k-means modules") != std::string::npos);
  // In blocks of 15 test rows it is a coarser model, but a model all the same.
  const auto blocks =
      run_gpstream("predict --model srm-trans " + quote(data.train) + " " + quote(data.test) + " --hyper " +
                   quote(hyper) + " --basis 15 -o " + quote(data.directory.file("blocks.csv")));
  CAPTURE(blocks.err);
  CHECK(blocks.exit_code == 0);
  CHECK(read_numbers(data.directory.file("blocks.csv")).size() == 40);
}

TEST_CASE("greedy bases keep their kernel columns in the cache and give the model bit for bit") {
  Data data;
  const std::string common = " --model sggp --basis 40 --seed 5 --gap 1e-9 --force" + kHyper;
  const std::string off = data.directory.file("off.h5");
  REQUIRE(run_gpstream("train " + quote(data.train) + " -o " + quote(off) + common + " -q --cache off").exit_code == 0);
  const gpstream::SparseModel reference = gpstream::read_sparse_model(off);
  for (const char* mode : {"auto", "ram", "disk"}) {
    CAPTURE(mode);
    const std::string model = data.directory.file(std::string(mode) + ".h5");
    const std::string log = data.directory.file(std::string(mode) + ".csv");
    const auto run = run_gpstream("train " + quote(data.train) + " -o " + quote(model) + common + " --cache " + mode +
                                  " --log " + quote(log));
    CAPTURE(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(run.err.find("kernel-column cache in RAM") != std::string::npos);
    CHECK(run.err.find("up to 40 of the basis's 40 columns") != std::string::npos);
    if (std::string(mode) == "auto") CHECK(run.err.find("auto: each basis column serves") != std::string::npos);
    if (std::string(mode) == "disk") CHECK(run.err.find("no disk tier") != std::string::npos);
    const gpstream::SparseModel cached = gpstream::read_sparse_model(model);
    CHECK(cached.basis_indices == reference.basis_indices);
    CHECK(cached.weights == reference.weights);
    CHECK(cached.variance_factor == reference.variance_factor);
    // The log's last row counts the selection's hits: each column j of the 40 hits in steps j + 3, …, 40.
    const std::string text = gpstream::testing::read_file(log);
    const std::string last = text.substr(text.rfind('\n', text.size() - 2) + 1);
    std::vector<std::string> fields;
    std::stringstream row(last);
    for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
    REQUIRE(fields.size() == 11);
    CHECK(std::stoull(fields[7]) == 38 * 37 / 2);  // hits (the final fit's pass is not a logged step)
  }
  // A model that takes each kernel column once says so.
  const auto sr = run_gpstream("train " + quote(data.train) + " -o " + quote(data.directory.file("sr.h5")) +
                               " --model sr --basis 40 --force" + kHyper);
  CHECK(sr.err.find("kernel-column cache off (sr does not reuse kernel columns)") != std::string::npos);
}

TEST_CASE("a greedy basis selection or CholQR resumed from its checkpoint gives the uninterrupted model") {
  Data data;
  for (const char* name : {"sggp", "mpgp", "online"}) {
    CAPTURE(name);
    const std::string whole = data.directory.file("whole.h5"), part = data.directory.file("part.h5");
    const std::string resumed = data.directory.file("resumed.h5"), checkpoint = data.directory.file("ck.h5");
    const bool online = std::string(name) == "online";  // one iteration per pass over these 400 rows
    const std::string common = " --model " + std::string(name) + " --basis 50 --seed 5 --force -q" +
                               (online                        ? " --passes 3"
                                : std::string(name) == "sggp" ? " --gap 1e-9"
                                                              : "") +
                               kHyper;
    REQUIRE(run_gpstream("train " + quote(data.train) + " -o " + quote(whole) + common).exit_code == 0);
    const auto first =
        run_gpstream("train " + quote(data.train) + " -o " + quote(part) + common +
                     (online ? " --max-iter 1" : " --max-iter 20") + " --checkpoint " + quote(checkpoint));
    CAPTURE(first.err);
    REQUIRE(first.exit_code == 0);
    const auto second =
        run_gpstream("train --resume " + quote(checkpoint) + " -o " + quote(resumed) + " --max-iter 0 --force -q");
    CAPTURE(second.err);
    REQUIRE(second.exit_code == 0);
    const gpstream::SparseModel a = gpstream::read_sparse_model(whole), b = gpstream::read_sparse_model(resumed),
                                c = gpstream::read_sparse_model(part);
    if (!online) CHECK(c.basis_size() == 20);
    if (online) CHECK(c.diagnostics != a.diagnostics);
    CHECK(a.basis_indices == b.basis_indices);
    CHECK(a.weights == b.weights);
    CHECK(a.diagnostics == b.diagnostics);
  }
  // CholQR checkpoints at epoch boundaries: its inducing set, kernel and weights come back exactly.
  const std::string whole = data.directory.file("cholqr.h5"), part = data.directory.file("cholqr-part.h5");
  const std::string resumed = data.directory.file("cholqr-resumed.h5"),
                    checkpoint = data.directory.file("cholqr-ck.h5");
  const std::string common = " --model cholqr --basis 30 --info-pivots 8 --seed 5 --force -q" + kHyper;
  REQUIRE(run_gpstream("train " + quote(data.train) + " -o " + quote(whole) + common + " --max-iter 3").exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(data.train) + " -o " + quote(part) + common + " --max-iter 1 --checkpoint " +
                       quote(checkpoint))
              .exit_code == 0);
  const auto second =
      run_gpstream("train --resume " + quote(checkpoint) + " -o " + quote(resumed) + " --max-iter 3 --force -q");
  CAPTURE(second.err);
  REQUIRE(second.exit_code == 0);
  const gpstream::SparseModel a = gpstream::read_sparse_model(whole), b = gpstream::read_sparse_model(resumed);
  CHECK(a.basis_indices == b.basis_indices);
  CHECK(a.weights == b.weights);
  CHECK(a.prior.kernel.lengthscales == b.prior.kernel.lengthscales);
  CHECK(a.prior.kernel.noise_variance == b.prior.kernel.noise_variance);
  CHECK(a.basis_indices != gpstream::read_sparse_model(part).basis_indices);
}

TEST_CASE("bad sparse-model options give one clear line and no model") {
  Data data;
  const std::string model = data.directory.file("m.h5");
  auto fails = [&](const std::string& options, const std::string& message) {
    CAPTURE(options);
    const auto result = run_gpstream("train " + quote(data.train) + " -o " + quote(model) + options + kHyper);
    CHECK(result.exit_code != 0);
    CHECK(result.err.find(message) != std::string::npos);
    CHECK(gpstream::testing::count_lines(result.err) == 1);
    CHECK_FALSE(std::filesystem::exists(model));
  };
  // A basis larger than the rows is all of them, said (the API's rule: Python warns the same).
  const auto all_rows =
      run_gpstream("train " + quote(data.train) + " -o " + quote(model) + " --model sd --basis 1000" + kHyper);
  CHECK(all_rows.exit_code == 0);
  CHECK(all_rows.err.find("train: note: --basis 1000 is more than the 400 training rows: using 400") !=
        std::string::npos);
  CHECK(gpstream::read_sparse_model(model).basis_indices.size() == 400);
  std::filesystem::remove(model);
  fails(" --model sr --basis 0", "--basis=0: give a whole number, at least 1");
  fails(" --model bogus", "--model=\"bogus\": choose dense, sd, sr");
  fails(" --model sggp --gap 0", "--gap=0: give a positive, finite number");
  fails(" --model sr --solver cg", "--solver is for --model dense");
  fails(" --model sd --basis 10 --checkpoint " + quote(data.directory.file("ck.h5")), "has nothing to checkpoint");
  fails(" --model cholqr --objective elbo", "--objective=\"elbo\": choose var or mle");
  fails(" --model cholqr --info-pivots 0", "--info-pivots=0: give a whole number, at least 1");
  fails(" --model sr --info-pivots 4", "--info-pivots is for --model cholqr");
  fails(" --model online --passes 0", "--passes=0: give a whole number, at least 1");
  fails(" --model sggp --novelty 0.1", "--novelty is for --model online");
  fails(" --model cholqr --basis 300" + gpstream::testing::memory_above_process(1u << 20),
        "CholQR's training rows and O(n m) factors (n = 400, m = 300, 16 information pivots) needs");
  const auto trans = run_gpstream("predict --model srm-trans " + quote(data.train) + " " + quote(data.test) + " -o " +
                                  quote(data.directory.file("t.csv")));
  CHECK(trans.exit_code != 0);
  CHECK(trans.err.find("needs the kernel's --hyper file") != std::string::npos);
  const std::string predictions = quote(data.directory.file("b.csv")), hyper = data.directory.file("hyper.json");
  gpstream::testing::write_file(
      hyper, R"({"kernel_name": "se", "length_scales": [1], "signal_variance": 1, "noise_variance": 0.05})");
  for (const auto& [options, message] : std::vector<std::pair<std::string, std::string>>{
           {" --modules 0", "--modules=0: give a whole number, at least 1"},
           {" --modules 2 --module-size 10", "give --modules or --module-size, not both"},
           {" --modules 500", "--modules 500 is more than the 400 training rows"},
           {" --query-block 0", "--query-block=0: give a whole number, at least 1"},
           {" --basis 10", "--basis is for --model srm-trans"}}) {
    CAPTURE(options);
    const auto bcm = run_gpstream("predict --model bcm " + quote(data.train) + " " + quote(data.test) + " --hyper " +
                                  quote(hyper) + options + " -o " + predictions);
    CHECK(bcm.exit_code != 0);
    CHECK(bcm.err.find(message) != std::string::npos);
    CHECK(gpstream::testing::count_lines(bcm.err) == 1);
  }
  const auto misplaced =
      run_gpstream("predict " + quote(model) + " " + quote(data.test) + " --modules 3 -o " + predictions);
  CHECK(misplaced.err.find("--modules is for --model bcm") != std::string::npos);
}

TEST_CASE("info reports every method's convergence by the rule its run stopped by, and train the summary its entry adds") {
  Data data;
  struct Case {
    const char* options;
    const char* measured;     // "converged", "not converged", or "" (a method that runs to its basis or passes)
    const char* summary = "";  // a line of train's summary the method's registry entry adds
  };
  const Case cases[] = {
      {"--solver gbcd", "converged"},
      {"--solver gbcd --active-set 20 --max-iter 2", "not converged"},
      {"--solver bcd-cyclic", "converged"},
      {"--solver bcd-gradient", "converged"},
      {"--solver cg", "converged"},
      {"--solver cg --max-iter 1", "not converged"},
      {"--solver smo", "converged"},
      {"--solver cholesky", "converged"},
      {"--model cholqr --basis 60 --info-pivots 8", "converged", "train: cholqr kernel: lengthscales ["},
      {"--model cholqr --basis 60 --info-pivots 8 --max-iter 1 --tol 1e-12", "not converged"},
      {"--model sggp --basis 60", "not converged"},  // the basis is used up before the gap closes
      {"--model sggp --basis 400 --gap 0.05", "converged"},
      {"--model sd --basis 60", ""},
      {"--model sr --basis 60", ""},
      {"--model nystrom --basis 60", "", "train: nystrom weights: max |w|"},
      {"--model sgma --basis 60", "", "of the kernel's trace is left unexplained by the basis"},
      {"--model mpgp --basis 60", "", "of the kernel's trace is left unexplained by the basis"},
      {"--model online --basis 60", ""},
      {"--model online --basis 300 --novelty 0.5", "", "basis vectors used: no other row's novelty exceeded --novelty 0.5"},
  };
  for (const Case& run : cases) {
    const std::string options = run.options;
    CAPTURE(options);
    const std::string model = data.directory.file("model.h5");
    const auto trained =
        run_gpstream("train " + quote(data.train) + " -o " + quote(model) + " --force " + run.options + kHyper);
    CAPTURE(trained.err);
    REQUIRE(trained.exit_code == 0);
    CHECK(trained.err.find(run.summary) != std::string::npos);
    const auto described = run_gpstream("info " + quote(model));
    CAPTURE(described.out);
    REQUIRE(described.exit_code == 0);
    const std::string measured = run.measured;
    CHECK((described.out.find("convergence") != std::string::npos) == !measured.empty());
    CHECK((described.out.find("not converged") != std::string::npos) == (measured == "not converged"));
    CHECK(described.out.find("(tolerance 0)") == std::string::npos);
  }
}

// predict --variance through the gpstream binary: the written variances
// against the Cholesky closed form in the target's units, --latent against
// the noisy variance, and the printed metrics against the written columns.
#include "engine/kernels/kernel.h"
#include "engine/linalg/cholesky.h"
#include "storage/dataset/hdf5_row_source.h"
#include "storage/model/dense_model_file.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <memory>
#include <sstream>

using gpstream::testing::quote;
using gpstream::testing::read_file;
using gpstream::testing::read_numbers;
using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;

namespace {

// The number printed after `label` in `text`.
double printed(const std::string& text, const std::string& label) {
  const std::size_t at = text.find(label);
  REQUIRE(at != std::string::npos);
  return std::stod(text.substr(at + label.size()));
}

// A Friedman1 model on `rows` rows by the cholesky solver, in `directory`: train.h5, test.csv (60 rows), m.h5.
void make_friedman1_model(const ScratchDirectory& directory, std::size_t rows) {
  REQUIRE(run_gpstream(fmt::format("generate friedman1 --rows {} --seed 8 -q -o ", rows) +
                       quote(directory.file("train.h5")))
              .exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 60 --seed 9 -q -o " + quote(directory.file("test.csv"))).exit_code ==
          0);
  REQUIRE(
      run_gpstream("train " + quote(directory.file("train.h5")) + " -o " + quote(directory.file("m.h5")) +
                   " -q --solver cholesky --lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039")
          .exit_code == 0);
}

}  // namespace

TEST_CASE(
    "predict --variance writes the closed-form variance of y* in the target's units, and the metrics of its columns") {
  ScratchDirectory directory;
  make_friedman1_model(directory, 500);
  const std::string train = directory.file("train.h5"), test = directory.file("test.csv"),
                    model = directory.file("m.h5");
  const std::string noisy = directory.file("noisy.csv"), latent = directory.file("latent.csv");
  // y* by the gbcd route, f* by the route auto picks here (cholesky: 500 rows).
  const auto predicted = run_gpstream("predict " + quote(model) + " " + quote(test) + " -o " + quote(noisy) +
                                      " --variance --variance-method gbcd --variance-tol 1e-8 --batch-rows 25");
  CAPTURE(predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK(read_file(noisy).starts_with("mean,variance,std\n"));
  CHECK(predicted.err.find("variances of y* (noise included)") != std::string::npos);
  CHECK(predicted.err.find("variances by gbcd: as asked") != std::string::npos);
  const auto latent_run = run_gpstream("predict " + quote(model) + " " + quote(test) + " -o " + quote(latent) +
                                       " --variance --latent --batch-rows 25");
  REQUIRE(latent_run.exit_code == 0);
  CHECK(latent_run.err.find("variances by cholesky: K̄'s factor") != std::string::npos);

  // The closed form, in standardised units, from the model's own standardisation and kernel.
  const gpstream::DenseModel dense = gpstream::read_dense_model(model);
  gpstream::Hdf5RowSource rows(train);
  const std::size_t n = rows.rows(), d = rows.columns();
  std::vector<double> x(n * d);
  rows.read_rows(0, n, x.data(), nullptr);
  dense.standardisation.apply_to_rows(x.data(), n, d);
  const std::vector<std::vector<double>> test_rows = read_numbers(test);
  std::vector<double> z;
  for (const auto& row : test_rows) z.insert(z.end(), row.begin(), row.begin() + static_cast<std::ptrdiff_t>(d));
  const std::size_t t = test_rows.size();
  dense.standardisation.apply_to_rows(z.data(), t, d);
  const auto kernel = gpstream::make_kernel(dense.prior.kernel, d);
  gpstream::PreparedRows px, pz;
  kernel->prepare(x.data(), n, px);
  kernel->prepare(z.data(), t, pz);
  std::vector<double> factor(n * n), cross(t * n);
  kernel->evaluate(px, px, factor.data());
  for (std::size_t i = 0; i < n; ++i) factor[i * n + i] += dense.prior.kernel.noise_variance;
  gpstream::cholesky_factor(factor.data(), n, "K̄");
  kernel->evaluate(pz, px, cross.data());

  const double scale = dense.standardisation.y_std * dense.standardisation.y_std;
  const std::vector<std::vector<double>> noisy_rows = read_numbers(noisy), latent_rows = read_numbers(latent);
  REQUIRE(noisy_rows.size() == t);
  double squared = 0.0, absolute = 0.0, truth_mean = 0.0, covered = 0.0;
  for (std::size_t j = 0; j < t; ++j) {
    CAPTURE(j);
    std::vector<double> v(cross.begin() + static_cast<std::ptrdiff_t>(j * n),
                          cross.begin() + static_cast<std::ptrdiff_t>((j + 1) * n));
    double quadratic = 0.0;
    for (std::size_t i = 0; i < n; ++i) {  // ‖L⁻¹k*‖²
      double sum = v[i];
      for (std::size_t k = 0; k < i; ++k) sum -= factor[i * n + k] * v[k];
      v[i] = sum / factor[i * n + i];
      quadratic += v[i] * v[i];
    }
    const double latent_variance = scale * (kernel->self_covariance(&z[j * d]) - quadratic);
    const double noisy_variance = latent_variance + scale * dense.prior.kernel.noise_variance;
    CHECK(noisy_rows[j][1] == doctest::Approx(noisy_variance).epsilon(1e-6));
    CHECK(latent_rows[j][1] == doctest::Approx(latent_variance).epsilon(1e-6));
    CHECK(noisy_rows[j][2] == doctest::Approx(std::sqrt(noisy_rows[j][1])).epsilon(1e-12));
    CHECK(latent_rows[j][0] == noisy_rows[j][0]);

    const double error = test_rows[j][d] - noisy_rows[j][0];
    squared += error * error;
    absolute += std::abs(error);
    truth_mean += test_rows[j][d];
    if (std::abs(error) <= 2.0 * noisy_rows[j][2]) covered += 1.0;
  }
  truth_mean /= static_cast<double>(t);
  double truth_variance = 0.0;
  for (const auto& row : test_rows) truth_variance += (row[d] - truth_mean) * (row[d] - truth_mean);
  truth_variance /= static_cast<double>(t);
  const double count = static_cast<double>(t);
  // Metrics are printed to 4 significant digits (relative rounding <= 5e-4), with the RMSE's normaliser.
  CHECK(printed(predicted.err, "predict: RMSE ") == doctest::Approx(std::sqrt(squared / count / scale)).epsilon(5e-4));
  CHECK(printed(predicted.err, "targets the model was standardised with, ") ==
        doctest::Approx(std::sqrt(scale)).epsilon(5e-4));
  CHECK(printed(predicted.err, "SMSE ") == doctest::Approx(squared / count / truth_variance).epsilon(5e-4));
  CHECK(printed(predicted.err, "MAE ") == doctest::Approx(absolute / count).epsilon(5e-4));
  CHECK(printed(predicted.err, "coverage of mean +- 2 std ") == doctest::Approx(covered / count).epsilon(1e-3));
  // Friedman1's noise is what the model assumes: SNLP well below the trivial model's 0.
  CHECK(printed(predicted.err, "below 0 beats predicting the training mean) ") < -0.5);
}

TEST_CASE("with a budget K̄'s factor does not fit, the cholesky route keeps it on disk: the same variances") {
  ScratchDirectory directory;
  make_friedman1_model(directory, 1500);
  const std::string test = directory.file("test.csv"), model = directory.file("m.h5"),
                    in_memory = directory.file("in_memory.csv"), on_disk = directory.file("on_disk.csv");
  const std::string common = "predict " + quote(model) + " " + quote(test) + " --variance --variance-method cholesky";
  REQUIRE(run_gpstream(common + " -o " + quote(in_memory)).exit_code == 0);
  // The factor is 17 MiB; panels of it and a batch, 2 MiB.
  const auto disk_run = run_gpstream(common + " -o " + quote(on_disk) + " --batch-rows 25 " +
                                     gpstream::testing::memory_above_process(6u << 20));
  CAPTURE(disk_run.err);
  REQUIRE(disk_run.exit_code == 0);
  CHECK(disk_run.err.find("does not fit the free memory budget") != std::string::npos);
  CHECK(disk_run.err.find(": on disk") != std::string::npos);
  CHECK(disk_run.err.find("3 batches of up to 25 rows") != std::string::npos);
  // The scratch file went into the output's directory, unlinked: nothing is left behind.
  CHECK(directory.entries() ==
        std::vector<std::string>{"in_memory.csv", "m.h5", "on_disk.csv", "test.csv", "train.h5"});
  const std::vector<std::vector<double>> disk_rows = read_numbers(on_disk), memory_rows = read_numbers(in_memory);
  REQUIRE(disk_rows.size() == memory_rows.size());
  for (std::size_t j = 0; j < disk_rows.size(); ++j) {
    CHECK(disk_rows[j][0] == memory_rows[j][0]);
    CHECK(disk_rows[j][1] == doctest::Approx(memory_rows[j][1]).epsilon(1e-12));
  }
}

TEST_CASE("predict --variance options are checked") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5"), model = directory.file("m.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 50 --seed 8 -q -o " + quote(train)).exit_code == 0);
  REQUIRE(
      run_gpstream("train " + quote(train) + " -o " + quote(model) + " -q --kernel se --lengthscales 2 --noise-var 0.1")
          .exit_code == 0);
  const std::string out = quote(directory.file("p.csv"));
  const auto latent_alone = run_gpstream("predict " + quote(model) + " " + quote(train) + " -o " + out + " --latent");
  CHECK(latent_alone.exit_code == 2);
  CHECK(latent_alone.err.find("--latent needs --variance") != std::string::npos);
  CHECK(run_gpstream("predict " + quote(model) + " " + quote(train) + " -o " + out + " --variance --variance-tol 0")
            .exit_code == 2);
  CHECK(run_gpstream("predict " + quote(model) + " " + quote(train) + " -o " + out +
                     " --variance --variance-active-set 0")
            .exit_code == 2);
  // The schema's parameters, as train takes them: their ranges and words are the schema's.
  for (const auto& [option, message] : std::vector<std::pair<std::string, std::string>>{
           {" --checkpoint-every 0", "--checkpoint-every=0: give a positive, finite number"},
           {" --time-limit -1", "--time-limit=-1: give a finite number, at least 0"}}) {
    const auto refused =
        run_gpstream("predict " + quote(model) + " " + quote(train) + " -o " + out + " --variance" + option);
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find(message) != std::string::npos);
  }
  // One name, one parameter: training's --active-set is not the variance solves'; its old spelling names the new.
  const auto renamed =
      run_gpstream("predict " + quote(model) + " " + quote(train) + " -o " + out + " --variance --active-set 500");
  CHECK(renamed.exit_code == 2);
  CHECK(renamed.err.find("--active-set: predict takes it as --variance-active-set") != std::string::npos);
  CHECK(run_gpstream("predict " + quote(model) + " " + quote(train) + " -o " + out +
                     " --variance --cache ram --cache-dir .")
            .exit_code == 2);
  CHECK_FALSE(std::filesystem::exists(directory.file("p.csv")));
}

TEST_CASE("predict's gbcd variances are the same file with the kernel-column cache in RAM, on disk, or off") {
  ScratchDirectory directory;
  const std::string train = directory.file("train.h5"), test = directory.file("test.h5"),
                    model = directory.file("m.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 600 --seed 8 -q -o " + quote(train)).exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 90 --seed 9 -q -o " + quote(test)).exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(model) +
                       " -q --solver cholesky --kernel se --lengthscales 2 --noise-var 0.1")
              .exit_code == 0);
  std::vector<std::string> files;
  for (const std::string cache : {"off", "ram", "disk"}) {
    const std::string output = directory.file("p_" + cache + ".csv");
    const auto run = run_gpstream("predict " + quote(model) + " " + quote(test) + " -o " + quote(output) +
                                  " --variance --variance-method gbcd --batch-rows 30 --cache " + cache);
    CAPTURE(run.err);
    REQUIRE(run.exit_code == 0);
    if (cache == "off") {
      CHECK(run.err.find("kernel-column cache off") != std::string::npos);
    } else {
      // Three batches re-select the same training variables: hits, printed.
      CHECK(run.err.find("kernel-column cache in RAM") != std::string::npos);
      const std::size_t at = run.err.find("% hits");
      REQUIRE(at != std::string::npos);
      CHECK(run.err.substr(run.err.rfind(' ', at - 1) + 1, at - run.err.rfind(' ', at - 1) - 1) != "0");
    }
    files.push_back(read_file(output));
  }
  CHECK(files[0] == files[1]);
  CHECK(files[0] == files[2]);
  // The disk tier's file (in the output's directory) is gone.
  CHECK(directory.entries() ==
        std::vector<std::string>{"m.h5", "p_disk.csv", "p_off.csv", "p_ram.csv", "test.h5", "train.h5"});
}

namespace {

struct VarianceRun {
  gpstream::testing::ScratchDirectory directory;
  std::string model, test;
  std::string predict(const std::string& output) const {
    return "predict " + quote(model) + " " + quote(test) + " -o " + quote(output) +
           " --variance --variance-method gbcd --variance-tol 1e-3 --batch-rows 20 --threads 1";
  }
};

void make_variance_run(VarianceRun& run) {
  const std::string train = run.directory.file("train.h5");
  run.model = run.directory.file("m.h5");
  run.test = run.directory.file("test.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 2000 --seed 18 -q -o " + quote(train)).exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 200 --seed 19 -q -o " + quote(run.test)).exit_code == 0);
  REQUIRE(run_gpstream("train " + quote(train) + " -o " + quote(run.model) + " -q --solver cholesky " +
                       "--lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039")
              .exit_code == 0);
}

// Rows of a predictions file with a variance, and checks that the rest have their mean only.
std::size_t rows_with_variance(const std::string& text, std::size_t rows) {
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  std::size_t with = 0, total = 0;
  while (std::getline(lines, line)) {
    ++total;
    if (!line.ends_with(",,")) {
      CHECK(with + 1 == total);  // variances come first, in order
      ++with;
    }
  }
  CHECK(total == rows);
  return with;
}

// The model, made once for every test case and subcase below (doctest runs a test case's body once per
// subcase; under the sanitizers each variance run takes a quarter of a minute).
const VarianceRun& shared_variance_run() {
  static const std::unique_ptr<VarianceRun> run = [] {
    auto made = std::make_unique<VarianceRun>();
    make_variance_run(*made);
    return made;
  }();
  return *run;
}

// The model's uninterrupted variances: what every resumed run must give bit for bit.
const std::string& uninterrupted_variances() {
  static const std::string whole = [] {
    const VarianceRun& run = shared_variance_run();
    const std::string file = run.directory.file("whole.csv");
    const auto uninterrupted = run_gpstream(run.predict(file));
    CAPTURE(uninterrupted.err);
    REQUIRE(uninterrupted.exit_code == 0);
    return file;
  }();
  return whole;
}

// A subcase's outputs in a directory of their own.
struct VarianceSubcase {
  gpstream::testing::ScratchDirectory directory;
  const VarianceRun& shared = shared_variance_run();
  std::string predict(const std::string& output) const { return shared.predict(output); }
};

}  // namespace

TEST_CASE("a variance run stopped by --time-limit or Ctrl-C publishes its finished rows and resumes to the same file") {
  const std::string& whole = uninterrupted_variances();
  CHECK(rows_with_variance(read_file(whole), 200) == 200);
  const VarianceSubcase run;

  SUBCASE("--time-limit") {
    const std::string part = run.directory.file("part.csv");
    const auto stopped = run_gpstream(run.predict(part) + " --time-limit 1.5");
    CAPTURE(stopped.err);
    REQUIRE(stopped.exit_code == 0);
    CHECK(stopped.err.find("stopped at --time-limit") != std::string::npos);
    const std::size_t done = rows_with_variance(read_file(part), 200);
    CHECK(done < 200);
    CHECK(done % 80 == 0);  // whole windows of 4 batches of 20
    const std::size_t resume_at = stopped.err.find("Resume with:\n  gpstream ");
    REQUIRE(resume_at != std::string::npos);
    CHECK(stopped.err.find("--resume", resume_at) != std::string::npos);
    CHECK(stopped.err.find("--time-limit", resume_at) == std::string::npos);
    const auto resumed = run_gpstream(run.predict(part) + " --resume");
    CAPTURE(resumed.err);
    REQUIRE(resumed.exit_code == 0);
    if (done > 0) CHECK(resumed.err.find(fmt::format("resuming: rows 1-{} of 200", done)) != std::string::npos);
    CHECK(read_file(part) == read_file(whole));
  }
  SUBCASE("Ctrl-C") {
    const std::string part = run.directory.file("part.csv"), err = run.directory.file("err.txt");
    const std::string command = std::string("'") + GPSTREAM_BINARY + "' " + run.predict(part) + " 2>" + quote(err) +
                                " & pid=$!; sleep 1.5; kill -INT $pid; wait $pid";
    const int status = std::system(command.c_str());
    const std::string message = read_file(err);
    CAPTURE(message);
    if (WEXITSTATUS(status) == 0) {
      MESSAGE("the run finished before the signal; nothing to check");  // a machine 10x faster than CI's
    } else {
      CHECK(WEXITSTATUS(status) == 130);
      CHECK(message.find("interrupted: ") != std::string::npos);
      const std::size_t done = rows_with_variance(read_file(part), 200);
      CHECK(done < 200);
      const auto resumed = run_gpstream(run.predict(part) + " --resume");
      REQUIRE(resumed.exit_code == 0);
      CHECK(read_file(part) == read_file(whole));
    }
  }
}

// Apart from the case above, so that each stays well inside ctest's timeout under the sanitizers.
TEST_CASE("a variance run killed publishes its finished rows (or its means at once), and resumes to the same file") {
  const std::string& whole = uninterrupted_variances();
  const VarianceSubcase run;

  SUBCASE("SIGKILL: the rows published before it are kept, and --resume continues them") {
    // Published after every batch (--checkpoint-every 0.01); killed without a chance to write anything more.
    const std::string part = run.directory.file("part.csv");
    const std::string command = std::string("'") + GPSTREAM_BINARY + "' " + run.predict(part) +
                                " --checkpoint-every 0.01 2>/dev/null & pid=$!; " +
                                // Killed once the first batch is published, however slow the machine (sanitizers).
                                "for i in $(seq 600); do grep -qE '^-?[0-9][^,]*,[^,]+,' " + quote(part) +
                                " 2>/dev/null && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done; "
                                "kill -KILL $pid; wait $pid";
    const int status = std::system(command.c_str());
    if (WEXITSTATUS(status) == 0) {
      MESSAGE("the run finished before the signal; nothing to check");  // a machine 10x faster than CI's
    } else {
      CHECK(WEXITSTATUS(status) == 128 + SIGKILL);
      REQUIRE(std::filesystem::exists(part));
      const std::size_t done = rows_with_variance(read_file(part), 200);
      CHECK(done > 0);
      CHECK(done < 200);
      const auto resumed = run_gpstream(run.predict(part) + " --resume");
      CAPTURE(resumed.err);
      REQUIRE(resumed.exit_code == 0);
      CHECK(resumed.err.find(fmt::format("resuming: rows 1-{} of 200", done)) != std::string::npos);
      CHECK(read_file(part) == read_file(whole));
    }
  }
  SUBCASE("SIGKILL before the first window of variances: the means published at once, --resume starts afresh") {
    const std::string part = run.directory.file("part.csv");
    const std::string command = std::string("'") + GPSTREAM_BINARY + "' " + run.predict(part) +
                                " 2>/dev/null & pid=$!; " +
                                "for i in $(seq 600); do [ -e " + quote(part) +
                                " ] && break; kill -0 $pid 2>/dev/null || break; sleep 0.01; done; "
                                "kill -KILL $pid; wait $pid";
    const int status = std::system(command.c_str());
    if (WEXITSTATUS(status) == 0) {
      MESSAGE("the run finished before the signal; nothing to check");
    } else {
      REQUIRE(std::filesystem::exists(part));
      CHECK(gpstream::testing::count_lines(read_file(part)) == 201);  // every row's mean
      const auto resumed = run_gpstream(run.predict(part) + " --resume");
      CAPTURE(resumed.err);
      REQUIRE(resumed.exit_code == 0);
      CHECK(read_file(part) == read_file(whole));
    }
    // Nothing published at all (killed before the means): --resume says so and starts afresh.
    std::filesystem::remove(part);
    const auto afresh = run_gpstream(run.predict(part) + " --resume");
    CAPTURE(afresh.err);
    REQUIRE(afresh.exit_code == 0);
    CHECK(afresh.err.find("predict: note: '" + part +
                          "' does not exist: the run to resume stopped before it published any rows; starting "
                          "afresh") != std::string::npos);
    CHECK(read_file(part) == read_file(whole));
  }
}

TEST_CASE("predict --variance --resume refuses a file from other inputs or of the other kind, and leaves it as it was") {
  const VarianceSubcase run;
  const VarianceRun& shared = run.shared;
  const std::string other_inputs = run.directory.file("other.h5"), other = run.directory.file("other.csv");
  REQUIRE(run_gpstream("generate friedman1 --rows 200 --seed 20 -q -o " + quote(other_inputs)).exit_code == 0);
  REQUIRE(run_gpstream("predict " + quote(shared.model) + " " + quote(other_inputs) + " -o " + quote(other) + " -q")
              .exit_code == 0);
  const std::string before = read_file(other);
  const auto wrong = run_gpstream(run.predict(other) + " --resume");
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("has no variance column to continue") != std::string::npos);
  CHECK(read_file(other) == before);
  REQUIRE(run_gpstream("predict " + quote(shared.model) + " " + quote(other_inputs) + " -o " + quote(other) +
                       " --variance --force --time-limit 1e-9 -q")
              .exit_code == 0);
  const std::string partial = read_file(other);
  const auto mismatched = run_gpstream(run.predict(other) + " --resume");
  CAPTURE(mismatched.err);
  CHECK(mismatched.exit_code == 1);
  CHECK(mismatched.err.find("is not from this model and these inputs") != std::string::npos);
  CHECK(read_file(other) == partial);

  // Variances of f* are not continued as those of y*: the header says which.
  const std::string latent = run.directory.file("latent.csv");
  REQUIRE(run_gpstream(run.predict(latent) + " --latent --time-limit 1e-9 -q").exit_code == 0);
  const std::string latent_part = read_file(latent);
  CHECK(latent_part.starts_with("mean,latent_variance,latent_std\n"));
  const auto wrong_kind = run_gpstream(run.predict(latent) + " --resume");
  CAPTURE(wrong_kind.err);
  CHECK(wrong_kind.exit_code == 1);
  CHECK(wrong_kind.err.find("holds variances of f* (--latent) but this run asks for those of y*") !=
        std::string::npos);
  CHECK(read_file(latent) == latent_part);
}

TEST_CASE("predict --variance-method nearest writes upper bounds of the exact variances, exact with all rows") {
  ScratchDirectory directory;
  make_friedman1_model(directory, 500);
  const std::string model = directory.file("m.h5"), test = directory.file("test.csv");
  const std::string common = "predict " + quote(model) + " " + quote(test) + " --variance --latent --batch-rows 25";
  REQUIRE(run_gpstream(common + " --variance-method cholesky -q -o " + quote(directory.file("exact.csv"))).exit_code ==
          0);
  const auto bound =
      run_gpstream(common + " --variance-method nearest --neighbours 50 -o " + quote(directory.file("bound.csv")));
  CAPTURE(bound.err);
  REQUIRE(bound.exit_code == 0);
  CHECK(
      bound.err.find("variances by nearest: as asked: an upper bound, each row conditioned on its 50 training rows") !=
      std::string::npos);
  REQUIRE(run_gpstream(common + " --variance-method nearest --neighbours 500 -q -o " + quote(directory.file("all.csv")))
              .exit_code == 0);
  const auto exact = read_numbers(directory.file("exact.csv")), bounds = read_numbers(directory.file("bound.csv")),
             all = read_numbers(directory.file("all.csv"));
  REQUIRE(exact.size() == 60);
  REQUIRE(bounds.size() == 60);
  REQUIRE(all.size() == 60);
  std::size_t tighter = 0;  // rows where 50 of the 500 rows leave the variance visibly above the exact one
  for (std::size_t j = 0; j < exact.size(); ++j) {
    CAPTURE(j);
    CHECK(bounds[j][0] == exact[j][0]);  // the same means
    CHECK(bounds[j][1] >= exact[j][1] * (1.0 - 1e-9));
    CHECK(all[j][1] == doctest::Approx(exact[j][1]).epsilon(1e-8));
    if (bounds[j][1] > exact[j][1] * 1.01) ++tighter;
  }
  CHECK(tighter > 0);  // the bound is not the exact value in disguise

  const auto refused = run_gpstream(common + " --neighbours 50 -o " + quote(directory.file("refused.csv")));
  CHECK(refused.exit_code != 0);
  CHECK(refused.err.find("--neighbours is for --variance-method nearest") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(directory.file("refused.csv")));
}

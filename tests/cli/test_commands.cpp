// End-to-end runs of convert, generate and info as a user would type them.
#include "storage/dataset/dataset_format.h"
#include "storage/dataset/hdf5_row_source.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

using gpstream::testing::read_file;
using gpstream::testing::run_gpstream;
using gpstream::testing::ScratchDirectory;
using gpstream::testing::write_file;

namespace {

std::vector<double> all_rows(const std::string& path, std::vector<double>* y = nullptr) {
  gpstream::Hdf5RowSource source(path);
  std::vector<double> x(source.rows() * source.columns());
  if (y != nullptr) y->resize(source.rows());
  source.read_rows(0, source.rows(), x.data(), y != nullptr ? y->data() : nullptr);
  return x;
}

}  // namespace

TEST_CASE("generate friedman1 as HDF5 and as CSV - converting the CSV gives the same dataset bit for bit") {
  ScratchDirectory directory;
  const std::string h5 = directory.file("f.h5"), csv = directory.file("f.csv"), back = directory.file("back.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 3000 --seed 9 -o '" + h5 + "'").exit_code == 0);
  REQUIRE(run_gpstream("generate friedman1 --rows 3000 --seed 9 -o '" + csv + "'").exit_code == 0);
  const auto converted = run_gpstream("convert '" + csv + "' -o '" + back + "'");
  REQUIRE(converted.exit_code == 0);
  CHECK(converted.err.find("3,000 rows x 10 inputs") != std::string::npos);

  const gpstream::DatasetDescription generated = gpstream::read_dataset_description(h5);
  const gpstream::DatasetDescription round_trip = gpstream::read_dataset_description(back);
  CHECK(generated.rows == 3000);
  CHECK(generated.columns == 10);
  CHECK(generated.fingerprint == round_trip.fingerprint);
  std::vector<double> y1, y2;
  CHECK(all_rows(h5, &y1) == all_rows(back, &y2));
  CHECK(y1 == y2);
  CHECK(generated.x_mean[0] == doctest::Approx(0.5).epsilon(0.05));
  CHECK(generated.x_std[0] == doctest::Approx(std::sqrt(1.0 / 12)).epsilon(0.05));

  // --noise-free keeps the inputs of the same seed.
  const std::string clean = directory.file("clean.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 3000 --seed 9 --noise-free -o '" + clean + "'").exit_code == 0);
  std::vector<double> y_clean;
  CHECK(all_rows(clean, &y_clean) == all_rows(h5));
  CHECK(y_clean != y1);
}

TEST_CASE("convert reads standard input, tabs, no header, and honours --chunk-rows and --compress") {
  ScratchDirectory directory;
  write_file(directory.file("in.tsv"), "1\t2\t3\n4\t5\t6\n7\t8\t9\n");
  const auto result = run_gpstream(
      "convert - --delimiter tab --no-header --chunk-rows 2 --compress 4 -o '" + directory.file("out.h5") + "'",
      directory.file("in.tsv"));
  CAPTURE(result.err);
  REQUIRE(result.exit_code == 0);
  const gpstream::DatasetDescription description = gpstream::read_dataset_description(directory.file("out.h5"));
  CHECK(description.chunk_rows == 2);
  CHECK(description.compression_level == 4);
  CHECK(description.target_name == "col3");
  std::vector<double> y;
  CHECK(all_rows(directory.file("out.h5"), &y) == std::vector<double>{1, 2, 4, 5, 7, 8});
  CHECK(y == std::vector<double>{3, 6, 9});
}

TEST_CASE("info describes every gpstream file: dataset, dense and sparse model, checkpoint, hyperparameters") {
  ScratchDirectory directory;
  const std::string data = directory.file("d.h5");
  REQUIRE(run_gpstream("generate friedman1 --rows 500 -o '" + data + "'").exit_code == 0);
  const auto expect = [&](const std::string& file, std::vector<std::string> pieces) {
    const auto info = run_gpstream("info '" + file + "'");
    CAPTURE(file);
    CAPTURE(info.out);
    CAPTURE(info.err);
    CHECK(info.exit_code == 0);
    for (const std::string& piece : pieces) CHECK(info.out.find(piece) != std::string::npos);
  };
  expect(data, {"gpstream-dataset (version 1)", "rows (n)     500", "inputs (d)   10", "fingerprint", "chunks",
                "uncompressed", "x10", "(target)", "created by   gpstream", "Z\n"});
  const std::string kernel = " --lengthscales 1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4 --noise-var 0.039";
  const std::string fingerprint = gpstream::read_dataset_description(data).fingerprint;
  REQUIRE(
      run_gpstream("train '" + data + "' -q --tol 1e-6 -o '" + directory.file("dense.h5") + "'" + kernel).exit_code ==
      0);
  expect(directory.file("dense.h5"),
         {"gpstream-model, dense", "trained on   " + data + " (500 rows x 10 inputs, fingerprint " + fingerprint + ")",
          "kernel       rbf", "lengthscales 1.9, 1.92, 2.76", "noise var    0.039", "trained by   gbcd: converged",
          "(tolerance 1e-06)", "created by   gpstream"});
  REQUIRE(
      run_gpstream("train '" + data + "' -q --model sggp --basis 40 -o '" + directory.file("sparse.h5") + "'" + kernel)
          .exit_code == 0);
  expect(directory.file("sparse.h5"),
         {"gpstream-model, sparse (sggp, basis of 40 rows)", "trained by   sggp", "fingerprint " + fingerprint});
  const auto partial = run_gpstream("train '" + data + "' --max-iter 3 --tol 1e-12 --time-limit 600 --checkpoint '" +
                                    directory.file("c.h5") + "' -o '" + directory.file("part.h5") + "'" + kernel);
  REQUIRE(partial.exit_code == 0);
  // The checkpoint records the stopping rule's measure where the run stopped, as train printed it.
  const std::size_t measure_at = partial.err.find("|g|/|y| ", partial.err.find("after 3 iterations"));
  REQUIRE(measure_at != std::string::npos);
  const std::string measure = partial.err.substr(measure_at, partial.err.find(';', measure_at) - measure_at);
  expect(directory.file("c.h5"), {"gpstream-checkpoint of a gbcd run", "reached      iteration 3 after",
                                  measure + " (the stopping rule's measure), |g|inf",
                                  "stops at     tol 1e-12, at most 3 iterations in all, at most 600 s",
                                  "output       " + directory.file("part.h5"), "resume with  gpstream train --resume"});
  write_file(directory.file("h.json"),
             "{\"length_scales\": [2.5], \"signal_variance\": 1.5, \"noise_variance\": 0.2, \"kernel_name\": \"se\"}");
  expect(directory.file("h.json"), {"gpstream hyperparameters (JSON)", "kernel       se\n", "lengthscales 2.5",
                                    "signal var   1.5", "noise var    0.2", "train uses the dataset's"});

  // A sum: every term, its family, lengthscales and signal variance; the noise once.
  write_file(directory.file("sum.json"),
             "{\"kernel_name\": \"matern32+matern32+matern32\", \"length_scales\": [0.5], \"signal_variance\": 0.1,"
             " \"noise_variance\": 0.002, \"added_terms\": [{\"length_scales\": [2.5], \"signal_variance\": 0.2},"
             " {\"length_scales\": [9], \"signal_variance\": 0.3}]}");
  expect(directory.file("sum.json"),
         {"kernel       matern32+matern32+matern32\n"
          "term 1       matern32: lengthscales 0.5; signal var 0.1\n"
          "term 2       matern32: lengthscales 2.5; signal var 0.2\n"
          "term 3       matern32: lengthscales 9; signal var 0.3\n"
          "noise var    0.002"});
  const auto summed = run_gpstream("train '" + data + "' --hyper '" + directory.file("sum.json") + "' --max-iter 2 -o '" +
                                   directory.file("sum.h5") + "'");
  CAPTURE(summed.err);
  REQUIRE(summed.exit_code == 0);
  CHECK(summed.err.find("kernel matern32+matern32+matern32, noise variance 0.002") != std::string::npos);
  expect(directory.file("sum.h5"), {"kernel       matern32+matern32+matern32\nterm 1",
                                    "term 3       matern32: lengthscales 9; signal var 0.3\nnoise var    0.002"});

  write_file(directory.file("notes.txt"), "hello");
  const auto not_hdf5 = run_gpstream("info '" + directory.file("notes.txt") + "'");
  CHECK(not_hdf5.exit_code == 1);
  CHECK(not_hdf5.err.find("is not an HDF5 file") != std::string::npos);
  CHECK(gpstream::testing::count_lines(not_hdf5.err) == 1);
}

TEST_CASE("h5dump and h5py read what convert writes") {
  ScratchDirectory directory;
  write_file(directory.file("in.csv"), "u,v,w\n0.5,1.25,3\n-2,4e-3,5\n");
  REQUIRE(run_gpstream("convert '" + directory.file("in.csv") + "' -o '" + directory.file("d.h5") + "'").exit_code ==
          0);

  const std::string dump = directory.file("dump.txt");
  REQUIRE(std::system(("h5dump '" + directory.file("d.h5") + "' > '" + dump + "' 2>&1").c_str()) == 0);
  const std::string text = gpstream::testing::read_file(dump);
  CHECK(text.find("DATASET \"X\"") != std::string::npos);
  CHECK(text.find("\"gpstream-dataset\"") != std::string::npos);

  const std::string script =
      "import h5py, sys\n"
      "f = h5py.File(sys.argv[1], 'r')\n"
      "assert f['X'].shape == (2, 2), f['X'].shape\n"
      "assert f['X'][1, 1] == 4e-3 and f['y'][0] == 3.0\n"
      "assert list(f.attrs['feature_names']) == ['u', 'v'], f.attrs['feature_names']\n"
      "assert f.attrs['target_name'] == 'w' and f.attrs['format'] == 'gpstream-dataset'\n";
  write_file(directory.file("check.py"), script);
  CHECK(std::system(
            ("/usr/bin/python3 '" + directory.file("check.py") + "' '" + directory.file("d.h5") + "'").c_str()) == 0);
}

TEST_CASE("docs/commands.md's parameter table is the schema's, and train's help takes its defaults from it") {
  const auto generated = run_gpstream("info --parameters");
  REQUIRE(generated.exit_code == 0);
  const std::string docs = read_file(std::string(GPSTREAM_SOURCE_DIR) + "/docs/commands.md");
  const std::string begin = "<!-- parameters: generated by gpstream info --parameters -->\n";
  const std::size_t from = docs.find(begin), to = docs.find("<!-- parameters: end -->");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  // After a change to the schema: gpstream info --parameters, pasted between the markers.
  CHECK(docs.substr(from + begin.size(), to - from - begin.size()) == generated.out);
  const auto help = run_gpstream("train --help");
  for (const char* defaulted : {"--basis arg (=1000)", "--candidates arg (=60)", "--active-set arg (=500)",
                                "--gap arg (=0.025)", "--checkpoint-every arg (=60)"}) {
    CAPTURE(defaulted);
    CHECK(help.out.find(defaulted) != std::string::npos);
    CHECK(generated.out.find(std::string(defaulted).substr(0, std::string(defaulted).find(' '))) !=
          std::string::npos);
  }
}

TEST_CASE("a dataset of 100 000 inputs converts to about twice its values, a row to a chunk, and info reads it") {
  // Before: 64-row chunks made these 3 rows a 51 MB chunk, and every read compared the names pairwise.
  ScratchDirectory directory;
  constexpr std::size_t kInputs = 100000, kRows = 3;
  std::string text;
  for (std::size_t l = 0; l < kInputs; ++l) text += fmt::format("x{},", l + 1);
  text += "y\n";
  for (std::size_t i = 0; i < kRows; ++i) {
    for (std::size_t l = 0; l <= kInputs; ++l) {
      const double value = std::sin(0.3 * static_cast<double>(i) + 0.001 * static_cast<double>(l));
      text += fmt::format("{:.4f}{}", value, l < kInputs ? "," : "\n");
    }
  }
  write_file(directory.file("wide.csv"), text);
  const std::string data = directory.file("wide.h5");
  REQUIRE(run_gpstream("convert -q '" + directory.file("wide.csv") + "' -o '" + data + "'").exit_code == 0);
  const double values = static_cast<double>(kRows * (kInputs + 1) * sizeof(double));
  CHECK(static_cast<double>(std::filesystem::file_size(data)) <= 2.2 * values);
  const auto info = run_gpstream("info '" + data + "'");
  CHECK(info.exit_code == 0);
  CHECK(info.out.find("inputs (d)   100000") != std::string::npos);
  CHECK(info.out.find("chunks       1 rows x 100000 columns") != std::string::npos);
  CHECK(info.out.find("x100000") != std::string::npos);
}

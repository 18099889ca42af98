#include "engine/core/error.h"
#include "storage/csv/csv_import.h"
#include "storage/dataset/hdf5_row_source.h"
#include "test_support.h"

#include <doctest/doctest.h>

using namespace gpstream;
using gpstream::testing::ScratchDirectory;
using gpstream::testing::write_file;

namespace {

struct Imported {
  CsvImportResult result;
  std::vector<double> x;
  std::vector<double> y;
};

Imported import_text(const std::string& text, const CsvImportOptions& options = {}) {
  ScratchDirectory directory;
  write_file(directory.file("in.csv"), text);
  Imported imported;
  imported.result = import_csv(directory.file("in.csv"), directory.file("out.h5"), options, {});
  Hdf5RowSource source(directory.file("out.h5"));
  imported.x.resize(source.rows() * source.columns());
  imported.y.resize(source.rows());
  source.read_rows(0, source.rows(), imported.x.data(), imported.y.data());
  return imported;
}

}  // namespace

TEST_CASE("header detection and its override") {
  const Imported with_header = import_text("a,b,t\n1,2,3\n4,5,6\n");
  CHECK(with_header.result.had_header);
  CHECK(with_header.result.dataset.feature_names == std::vector<std::string>{"a", "b"});
  CHECK(with_header.result.dataset.target_name == "t");
  CHECK(with_header.y == std::vector<double>{3, 6});

  const Imported numbers_only = import_text("1,2,3\n4,5,6\n");
  CHECK_FALSE(numbers_only.result.had_header);
  CHECK(numbers_only.result.dataset.rows == 2);
  CHECK(numbers_only.result.dataset.feature_names == std::vector<std::string>{"col1", "col2"});
  CHECK(numbers_only.result.dataset.target_name == "col3");

  CsvImportOptions forced;
  forced.header = HeaderMode::present;
  const Imported numeric_header = import_text("1,2,3\n4,5,6\n", forced);
  CHECK(numeric_header.result.dataset.rows == 1);
  CHECK(numeric_header.result.dataset.feature_names == std::vector<std::string>{"1", "2"});
}

TEST_CASE("target and inputs chosen by name or number, in the order given - other columns may hold text") {
  CsvImportOptions options;
  options.target = "price";
  options.inputs = {"3", "rooms"};
  const Imported imported = import_text("id,rooms,area,price,city\n7,3,80.5,1000,Paris\n8,4,95,1500,Lyon\n", options);
  CHECK(imported.result.dataset.feature_names == std::vector<std::string>{"area", "rooms"});
  CHECK(imported.x == std::vector<double>{80.5, 3, 95, 4});
  CHECK(imported.y == std::vector<double>{1000, 1500});
}

TEST_CASE("quoted numbers, a leading plus sign and exponents are numbers") {
  const Imported imported = import_text("x,y\n\"1.5\",+2e3\n-0.25,\"3E-2\"\n");
  CHECK(imported.x == std::vector<double>{1.5, -0.25});
  CHECK(imported.y == std::vector<double>{2000, 0.03});
}

TEST_CASE("--drop-invalid skips missing, NaN and infinite values and counts them") {
  CsvImportOptions options;
  options.drop_invalid = true;
  const Imported imported = import_text("x,y\n1,2\nnan,3\n4,inf\n5,\n6,-Infinity\n1e400,1\n7,8\n", options);
  CHECK(imported.result.rows_dropped == 5);
  CHECK(imported.x == std::vector<double>{1, 7});
  CHECK(imported.y == std::vector<double>{2, 8});
}

TEST_CASE("an interrupted import throws Cancelled and leaves no file") {
  ScratchDirectory directory;
  std::string text = "x,y\n";
  for (int i = 0; i < 100000; ++i) text += std::to_string(i) + "," + std::to_string(i) + "\n";
  write_file(directory.file("in.csv"), text);
  StopFlag stop;
  stop.request();
  CHECK_THROWS_AS(import_csv(directory.file("in.csv"), directory.file("out.h5"), {}, {}, {}, &stop), Cancelled);
  CHECK(directory.entries() == std::vector<std::string>{"in.csv"});
}

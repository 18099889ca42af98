#include "engine/core/error.h"
#include "engine/data/row_block_stream.h"
#include "storage/csv/csv_import.h"
#include "storage/dataset/dataset_writer.h"
#include "storage/dataset/hdf5_row_source.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

using namespace gpstream;
using gpstream::testing::ScratchDirectory;

namespace {

constexpr std::size_t kColumns = 5;

// Rows of awkward doubles: wide exponents, negative zero, the smallest
// normal and a subnormal, plus ordinary values.
struct Table {
  std::vector<double> x;
  std::vector<double> y;
  std::size_t rows() const { return y.size(); }
};

Table make_table(std::size_t rows, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-300, 300);
  Table table;
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < kColumns; ++j) {
      double value = mantissa(random) * std::pow(10.0, j == 0 ? exponent(random) : static_cast<int>(j));
      if (i == 3 && j == 1) value = -0.0;
      if (i == 4 && j == 2) value = std::numeric_limits<double>::min();
      if (i == 5 && j == 3) value = std::numeric_limits<double>::denorm_min() * 12345;
      table.x.push_back(value);
    }
    table.y.push_back(mantissa(random) * 1e5);
  }
  return table;
}

std::string to_csv(const Table& table) {
  std::string text = "a,b,c,d,e,target\n";
  for (std::size_t i = 0; i < table.rows(); ++i) {
    for (std::size_t j = 0; j < kColumns; ++j) text += fmt::format("{:.17g},", table.x[i * kColumns + j]);
    text += fmt::format("{:.17g}\n", table.y[i]);
  }
  return text;
}

bool bit_identical(const double* a, const double* b, std::size_t count) {
  return std::memcmp(a, b, count * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("CSV -> HDF5 -> rows is bit-identical - blocks and gathers agree with the CSV") {
  constexpr std::size_t kRows = 5000;
  const Table table = make_table(kRows, 11);
  ScratchDirectory directory;
  gpstream::testing::write_file(directory.file("t.csv"), to_csv(table));
  DatasetWriterOptions writer;
  writer.chunk_rows = 300;  // several chunks, not dividing n
  import_csv(directory.file("t.csv"), directory.file("t.h5"), {}, writer);

  Hdf5RowSource source(directory.file("t.h5"));
  REQUIRE(source.rows() == kRows);
  REQUIRE(source.columns() == kColumns);
  CHECK(source.preferred_block_alignment() == 300);
  std::vector<double> x(kRows * kColumns), y(kRows);
  source.read_rows(0, kRows, x.data(), y.data());
  CHECK(bit_identical(x.data(), table.x.data(), x.size()));
  CHECK(bit_identical(y.data(), table.y.data(), y.size()));
  CHECK(std::signbit(x[3 * kColumns + 1]));

  for (const std::size_t block_rows : {1u, 299u, 300u, 777u}) {
    CAPTURE(block_rows);
    RowBlockStream stream(source, {.block_rows = block_rows, .prefetch_depth = 2});
    std::size_t seen = 0;
    while (const RowBlock* block = stream.next()) {
      REQUIRE(bit_identical(block->x, &table.x[block->first * kColumns], block->count * kColumns));
      REQUIRE(bit_identical(block->y, &table.y[block->first], block->count));
      seen += block->count;
    }
    CHECK(seen == kRows);
  }

  std::mt19937_64 random(5);
  std::uniform_int_distribution<std::size_t> pick(0, kRows - 1);
  std::vector<std::size_t> indices = {kRows - 1, 0, 299, 300, 300, 301};
  for (int k = 0; k < 500; ++k) indices.push_back(pick(random));
  std::vector<double> gathered_x(indices.size() * kColumns), gathered_y(indices.size());
  source.gather_rows(indices, gathered_x.data(), gathered_y.data());
  for (std::size_t k = 0; k < indices.size(); ++k) {
    REQUIRE(bit_identical(&gathered_x[k * kColumns], &table.x[indices[k] * kColumns], kColumns));
    REQUIRE(gathered_y[k] == table.y[indices[k]]);
  }
}

TEST_CASE("stored statistics equal a two-pass computation over the rows") {
  const Table table = make_table(3000, 12);
  ScratchDirectory directory;
  DatasetWriter writer(directory.file("s.h5"), {"a", "b", "c", "d", "e"}, "t", {});
  writer.append_rows(table.rows(), table.x.data(), table.y.data());
  const DatasetDescription description = writer.finish();
  // Column 0 spans 1e-300..1e300: its squares overflow a plain variance formula; its statistics must still be
  // finite, and match a two-pass computation in units of 1e300.
  {
    double mean = 0, squares = 0;
    for (std::size_t i = 0; i < table.rows(); ++i) mean += table.x[i * kColumns] / 1e300;
    mean /= static_cast<double>(table.rows());
    for (std::size_t i = 0; i < table.rows(); ++i) squares += std::pow(table.x[i * kColumns] / 1e300 - mean, 2);
    CHECK(description.x_mean[0] / 1e300 == doctest::Approx(mean).epsilon(1e-12));
    CHECK(description.x_std[0] / 1e300 ==
          doctest::Approx(std::sqrt(squares / static_cast<double>(table.rows()))).epsilon(1e-10));
  }
  for (std::size_t j = 1; j < kColumns; ++j) {
    double mean = 0, squares = 0;
    for (std::size_t i = 0; i < table.rows(); ++i) mean += table.x[i * kColumns + j];
    mean /= static_cast<double>(table.rows());
    for (std::size_t i = 0; i < table.rows(); ++i) squares += std::pow(table.x[i * kColumns + j] - mean, 2);
    CHECK(description.x_mean[j] == doctest::Approx(mean).epsilon(1e-12));
    CHECK(description.x_std[j] ==
          doctest::Approx(std::sqrt(squares / static_cast<double>(table.rows()))).epsilon(1e-10));
  }
  double y_mean = 0;
  for (const double v : table.y) y_mean += v;
  CHECK(description.y_mean == doctest::Approx(y_mean / static_cast<double>(table.rows())).epsilon(1e-12));
}

TEST_CASE("compressed datasets read back identically - the fingerprint follows the contents only") {
  const Table table = make_table(2000, 13);
  ScratchDirectory directory;
  auto write = [&](const std::string& name, std::size_t chunk_rows, int level, double y0) {
    DatasetWriterOptions options;
    options.chunk_rows = chunk_rows;
    options.compression_level = level;
    DatasetWriter writer(directory.file(name), {"a", "b", "c", "d", "e"}, "t", options);
    std::vector<double> y = table.y;
    y[0] = y0;
    writer.append_rows(table.rows(), table.x.data(), y.data());
    return writer.finish();
  };
  const DatasetDescription plain = write("plain.h5", 0, 0, table.y[0]);
  const DatasetDescription packed = write("packed.h5", 128, 6, table.y[0]);
  const DatasetDescription changed = write("changed.h5", 0, 0, table.y[0] + 1);
  CHECK(packed.compression_level == 6);
  CHECK(packed.chunk_rows == 128);
  CHECK(plain.chunk_rows == default_chunk_rows(kColumns));
  CHECK(plain.fingerprint == packed.fingerprint);
  CHECK(plain.fingerprint != changed.fingerprint);

  Hdf5RowSource source(directory.file("packed.h5"));
  std::vector<double> x(table.x.size());
  source.read_rows(0, table.rows(), x.data(), nullptr);
  CHECK(bit_identical(x.data(), table.x.data(), x.size()));
}

TEST_CASE("files that are not gpstream datasets are refused with a clear message") {
  ScratchDirectory directory;
  gpstream::testing::write_file(directory.file("text.h5"), "just some text, long enough to be read\n");
  CHECK_THROWS_WITH_AS(read_dataset_description(directory.file("text.h5")), doctest::Contains("is not an HDF5 file"),
                       Error);
  CHECK_THROWS_WITH_AS(read_dataset_description(directory.file("absent.h5")), doctest::Contains("does not exist"),
                       Error);
  {
    hdf5::Handle file = hdf5::create_file(directory.file("other.h5"));
    hdf5::write_attribute(file.get(), "title", std::string("someone else's data"));
  }
  CHECK_THROWS_WITH_AS(read_dataset_description(directory.file("other.h5")), doctest::Contains("not a gpstream file"),
                       Error);
  {
    hdf5::Handle file = hdf5::create_file(directory.file("future.h5"));
    hdf5::write_attribute(file.get(), "format", std::string(kDatasetFormat));
    hdf5::write_attribute(file.get(), "version", std::int64_t{99});
  }
  CHECK_THROWS_WITH_AS(read_dataset_description(directory.file("future.h5")),
                       doctest::Contains("gpstream-dataset version 99; this gpstream reads versions 1 to 1"), Error);

  const Table table = make_table(20000, 14);
  {
    DatasetWriter writer(directory.file("whole.h5"), {"a", "b", "c", "d", "e"}, "t", {});
    writer.append_rows(table.rows(), table.x.data(), table.y.data());
    writer.finish();
  }
  const auto size = std::filesystem::file_size(directory.file("whole.h5"));
  std::filesystem::copy_file(directory.file("whole.h5"), directory.file("cut.h5"));
  std::filesystem::resize_file(directory.file("cut.h5"), size / 2);
  CHECK_THROWS_WITH_AS(read_dataset_description(directory.file("cut.h5")), doctest::Contains("damaged or truncated"),
                       Error);
}

#include "engine/core/error.h"
#include "storage/csv/csv_tokenizer.h"
#include "test_support.h"

#include <doctest/doctest.h>

using gpstream::CsvTokenizer;
using gpstream::testing::ScratchDirectory;

namespace {

std::vector<std::vector<std::string>> tokenize(const std::string& text, char delimiter = ',') {
  ScratchDirectory directory;
  gpstream::testing::write_file(directory.file("in.csv"), text);
  CsvTokenizer csv(directory.file("in.csv"), delimiter);
  std::vector<std::vector<std::string>> records;
  std::vector<std::string_view> fields;
  while (csv.next(fields)) records.emplace_back(fields.begin(), fields.end());
  return records;
}

using Records = std::vector<std::vector<std::string>>;

}  // namespace

TEST_CASE("CRLF line ends, a byte-order mark, blank lines and a missing final line break") {
  CHECK(tokenize("\xEF\xBB\xBF"
                 "a,b\r\n1,2\r\n\r\n3,4") == Records{{"a", "b"}, {"1", "2"}, {"3", "4"}});
}

TEST_CASE("spaces around fields are trimmed - empty fields are kept") {
  CHECK(tokenize(" a , b ,c\n1,,3\n") == Records{{"a", "b", "c"}, {"1", "", "3"}});
}

TEST_CASE("quoted fields: delimiters and doubled quotes inside, numbers in quotes") {
  CHECK(tokenize("\"x, first\",\"say \"\"hi\"\"\",z\n\"1.5\", \"2\" ,3\n") ==
        Records{{"x, first", "say \"hi\"", "z"}, {"1.5", "2", "3"}});
}

TEST_CASE("other delimiters") {
  CHECK(tokenize("a\tb\n1\t2\n", '\t') == Records{{"a", "b"}, {"1", "2"}});
  CHECK(tokenize("a;b\n1;2\n", ';') == Records{{"a", "b"}, {"1", "2"}});
}

TEST_CASE("lines longer than the read buffer") {
  std::string wide;
  for (int k = 0; k < 200000; ++k) wide += (k ? "," : "") + std::to_string(k);
  const Records records = tokenize("h\n" + wide + "\n" + wide + "\n");
  REQUIRE(records.size() == 3);
  CHECK(records[1].size() == 200000);
  CHECK(records[2].back() == "199999");
}

TEST_CASE("line numbers count blank lines - an unterminated quote is reported with its place") {
  ScratchDirectory directory;
  gpstream::testing::write_file(directory.file("q.csv"), "a,b\n\n1,\"2\n");
  CsvTokenizer csv(directory.file("q.csv"), ',');
  std::vector<std::string_view> fields;
  REQUIRE(csv.next(fields));
  CHECK(csv.line_number() == 1);
  CHECK_THROWS_WITH_AS(csv.next(fields), doctest::Contains("q.csv:3:2: quoted field is not closed"), gpstream::Error);
}

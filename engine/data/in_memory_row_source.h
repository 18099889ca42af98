// RowSources over rows in memory: vectors it owns (tests, and data small
// enough that reading X once and keeping it is the fastest option), or the
// caller's arrays.
#pragma once

#include "engine/data/row_source.h"

#include <vector>

namespace gpstream {

class InMemoryRowSource final : public RowSource {
 public:
  // x is rows×columns row-major; y is empty (no targets) or has one value per row.
  InMemoryRowSource(std::vector<double> x, std::vector<double> y, std::size_t columns);

  std::size_t rows() const override { return rows_; }
  std::size_t columns() const override { return columns_; }
  bool has_targets() const override { return !y_.empty() || rows_ == 0; }

  const double* resident_rows() const override { return x_.data(); }
  const double* resident_targets() const override { return y_.empty() ? nullptr : y_.data(); }

  const std::vector<double>& x() const { return x_; }
  const std::vector<double>& y() const { return y_; }

 private:
  void do_read_rows(std::size_t first, std::size_t count, double* x, double* y) override;
  void do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) override;

  std::vector<double> x_;
  std::vector<double> y_;
  std::size_t columns_;
  std::size_t rows_;
};

// A RowSource over the caller's arrays, read in place (not copied, not
// owned: they must outlive it) — training from arrays in memory, as
// Python's estimator does with a C-contiguous float64 NumPy array.
class BorrowedRowSource final : public RowSource {
 public:
  // x is rows×columns row-major; y is null (no targets) or has one value per row.
  BorrowedRowSource(const double* x, const double* y, std::size_t rows, std::size_t columns);

  std::size_t rows() const override { return rows_; }
  std::size_t columns() const override { return columns_; }
  bool has_targets() const override { return y_ != nullptr || rows_ == 0; }

  const double* resident_rows() const override { return x_; }
  const double* resident_targets() const override { return y_; }

 private:
  void do_read_rows(std::size_t first, std::size_t count, double* x, double* y) override;
  void do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) override;

  const double* x_;
  const double* y_;
  std::size_t rows_;
  std::size_t columns_;
};

}  // namespace gpstream

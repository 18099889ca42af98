// RowSource: how the engine reads training rows.
//
// The engine never sees a file format. Everything that streams the n×d input
// matrix X and the targets y — the kernel blocks of every dense solver, the
// sparse models, prediction — reads through this interface. storage/
// implements it over HDF5; tests and small problems use InMemoryRowSource.
//
// Implementations must allow calls from several threads at once (a prefetch
// thread reads the next block while compute threads gather rows).
#pragma once

#include <cstddef>
#include <span>

namespace gpstream {

class RowSource {
 public:
  virtual ~RowSource() = default;

  virtual std::size_t rows() const = 0;     // n
  virtual std::size_t columns() const = 0;  // d, the number of inputs
  virtual bool has_targets() const = 0;     // whether y exists

  // Block reads are fastest when they start and end on multiples of this
  // many rows (an HDF5 chunk); 1 when any block is as good as another.
  virtual std::size_t preferred_block_alignment() const { return 1; }

  // The whole n×d matrix X when it is already in memory (row-major), else
  // null; compute loops then read it in place instead of streaming copies.
  virtual const double* resident_rows() const { return nullptr; }
  virtual const double* resident_targets() const { return nullptr; }

  // Copies rows [first, first + count) into x (count×d, row-major) and, when
  // y is not null, their targets into y.
  void read_rows(std::size_t first, std::size_t count, double* x, double* y);

  // Copies row indices[k] into row k of x (and y[k] when y is not null), in
  // the order given; indices may repeat and need not be sorted.
  void gather_rows(std::span<const std::size_t> indices, double* x, double* y);

 private:
  // Called with arguments already validated against rows() and has_targets().
  virtual void do_read_rows(std::size_t first, std::size_t count, double* x, double* y) = 0;
  virtual void do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) = 0;
};

// The rows of another source, changed as they are read (standardised, a
// trend taken off the targets): its shape is the other's.
class TransformedRowSource : public RowSource {
 public:
  explicit TransformedRowSource(RowSource& inner) : inner_(inner) {}
  std::size_t rows() const override { return inner_.rows(); }
  std::size_t columns() const override { return inner_.columns(); }
  bool has_targets() const override { return inner_.has_targets(); }
  std::size_t preferred_block_alignment() const override { return inner_.preferred_block_alignment(); }

 protected:
  RowSource& inner() const { return inner_; }

 private:
  // Changes `count` rows just read into x (count×d) and y (null when the targets are not wanted).
  virtual void transform(double* x, double* y, std::size_t count) const = 0;
  void do_read_rows(std::size_t first, std::size_t count, double* x, double* y) override {
    inner_.read_rows(first, count, x, y);
    transform(x, y, count);
  }
  void do_gather_rows(std::span<const std::size_t> indices, double* x, double* y) override {
    inner_.gather_rows(indices, x, y);
    transform(x, y, indices.size());
  }
  RowSource& inner_;
};

}  // namespace gpstream

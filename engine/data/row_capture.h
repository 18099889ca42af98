// RowCapture: rows a method will want by index, copied as a sequential pass
// over the rows goes by.
//
// A streamed iteration reads all of X once anyway (the product with K̄[:, B]).
// Rows needed next by index — GBCD's κ·m random candidates of the next
// iteration, drawn ahead from the same random stream — would otherwise be
// gathered by random access: on a file larger than the page cache that is a
// second read of X per iteration. A capture registered with the KernelMatrix
// before the pass is filled from the pass's blocks instead.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace gpstream {

class RowCapture {
 public:
  // Forgets any earlier request and asks for rows `indices` (any order,
  // repeats allowed) of `columns` values each.
  void request(std::span<const std::size_t> indices, std::size_t columns);

  // Offers the rows [first, first + count) of a pass (x: count×columns,
  // row-major). Blocks must come in increasing row order; the rows requested
  // among them are copied.
  void offer(std::size_t first, std::size_t count, const double* x);

  // Whether a request is still waiting for some of its rows.
  bool waiting() const { return cursor_ < order_.size(); }

  // When the request was for exactly `indices` and every row has been
  // captured: moves the rows, in the order of `indices`, into `out`
  // (|indices|×columns) and returns true. Otherwise returns false and leaves
  // `out` alone. Either way the request is forgotten.
  bool take(std::span<const std::size_t> indices, std::vector<double>& out);

 private:
  std::vector<std::size_t> indices_;  // as requested
  std::vector<std::size_t> order_;    // positions in indices_, by increasing row
  std::size_t cursor_ = 0;            // next position of order_ to fill
  std::size_t columns_ = 0;
  std::vector<double> rows_;  // |indices_|×columns, in the requested order
};

}  // namespace gpstream

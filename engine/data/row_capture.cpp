#include "engine/data/row_capture.h"

#include "engine/core/size_arithmetic.h"

#include <algorithm>
#include <numeric>

namespace gpstream {

void RowCapture::request(std::span<const std::size_t> indices, std::size_t columns) {
  indices_.assign(indices.begin(), indices.end());
  columns_ = columns;
  order_.resize(indices_.size());
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return indices_[a] < indices_[b]; });
  cursor_ = 0;
  rows_.resize(checked_multiply(indices_.size(), columns));
}

void RowCapture::offer(std::size_t first, std::size_t count, const double* x) {
  const std::size_t end = first + count;
  while (cursor_ < order_.size()) {
    const std::size_t position = order_[cursor_];
    const std::size_t row = indices_[position];
    if (row < first) {  // the pass started past this row: the request cannot be met
      order_.clear();
      cursor_ = 0;
      return;
    }
    if (row >= end) return;
    std::copy_n(x + (row - first) * columns_, columns_,
                rows_.begin() + static_cast<std::ptrdiff_t>(position * columns_));
    ++cursor_;
  }
}

bool RowCapture::take(std::span<const std::size_t> indices, std::vector<double>& out) {
  const bool complete = !indices_.empty() && cursor_ == order_.size() && order_.size() == indices_.size() &&
                        std::equal(indices.begin(), indices.end(), indices_.begin(), indices_.end());
  if (complete) out.swap(rows_);
  indices_.clear();
  order_.clear();
  cursor_ = 0;
  return complete;
}

}  // namespace gpstream

// The nearest route of the dense model's variances (dense_variance.h): each
// test row conditioned on its M training rows of highest covariance, as a
// nearest-neighbour GP predicts [Datta16 §2.1, Vecchia88]. Conditioning on
// fewer rows never lowers a Gaussian's variance, so the value is an upper
// bound of the exact variance; the M rows of highest covariance are nested
// in M, so it falls as M grows and is exact at M = n.
#include "engine/core/size_arithmetic.h"
#include "engine/dense/variance_routes.h"
#include "engine/linalg/cholesky.h"

#include <cblas.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>

namespace gpstream::variance_routes {
namespace {

// A training row as a neighbour of one test row: the higher covariance is
// nearer, and of equal ones the smaller row number, so that the choice does
// not depend on the order rows are seen in.
struct Candidate {
  double covariance;
  std::size_t row;
};
bool nearer(const Candidate& a, const Candidate& b) {
  return a.covariance > b.covariance || (a.covariance == b.covariance && a.row < b.row);
}

// Test rows whose neighbours one task selects: their covariances are
// adjacent in each row of K(X, Z), so a task reads whole cache lines.
constexpr std::size_t kTestRowsPerTask = 8;

// One batch of test rows per iteration: K(X, Z) in one pass over the
// training rows, each test row's M nearest chosen from it, their rows
// gathered once for the batch, then per test row K̄_NN = LLᵀ (M³/3 flops)
// and k*ᵀK̄_NN⁻¹k* = ‖L⁻¹k_N‖².
class NearestVariances final : public VarianceRoute {
 public:
  NearestVariances(KernelMatrix& training, const double* test_rows, BatchCursor cursor, std::size_t neighbours,
                   VariancePrediction& result, const VarianceBatchSink& sink)
      : VarianceRoute(training, test_rows, cursor, result, sink),
        neighbours_(std::min(neighbours, training.size())),
        start_row_(cursor.first),
        systems_memory_(training.context().memory().reserve(
            "the nearest variance route's systems (one per thread)",
            checked_multiply(training.context().threads(),
                             checked_add(checked_multiply(neighbours_, neighbours_),
                                         checked_multiply(neighbours_, training.rows().columns() + 1)),
                             sizeof(double)),
            "ask for fewer neighbours")) {}

  void iterate() override {
    const std::size_t n = training_.size(), d = training_.rows().columns(), r = cursor_.rows(), m = neighbours_;
    const double* z = test_rows_ + cursor_.first * d;
    cross_.resize(checked_multiply(n, r));
    training_.cross_covariance(z, r, cross_.data());
    select_neighbours(n, r);
    // The rows of every test row's neighbours, gathered once for the batch.
    gathered_ = chosen_;
    std::sort(gathered_.begin(), gathered_.end());
    gathered_.erase(std::unique(gathered_.begin(), gathered_.end()), gathered_.end());
    training_.exchange().collect_rows(gathered_, gathered_rows_, nullptr);
    const double noise = training_.kernel().noise_variance();
    tbb::parallel_for(std::size_t{0}, r, [&](std::size_t j) {
      System& system = systems_.local();
      system.rows.resize(m * d);
      system.matrix.resize(m * m);
      system.covariance.resize(m);
      for (std::size_t q = 0; q < m; ++q) {
        const auto at = std::lower_bound(gathered_.begin(), gathered_.end(), chosen_[j * m + q]) - gathered_.begin();
        std::copy_n(gathered_rows_.data() + static_cast<std::size_t>(at) * d, d, system.rows.data() + q * d);
      }
      training_.block(system.rows.data(), m, system.rows.data(), m, system.matrix.data());
      for (std::size_t q = 0; q < m; ++q) system.matrix[q * m + q] += noise;
      // k_N from the rows, not read from K(X, Z): a row's value then does not depend on the tiles of the pass.
      training_.block(system.rows.data(), m, z + j * d, 1, system.covariance.data());
      cholesky_factor(system.matrix.data(), m, "K̄ over a test row's nearest training rows");
      const int order = static_cast<int>(m);
      cblas_dtrsv(CblasRowMajor, CblasLower, CblasNoTrans, CblasNonUnit, order, system.matrix.data(), order,
                  system.covariance.data(), 1);
      const double explained = cblas_ddot(order, system.covariance.data(), 1, system.covariance.data(), 1);
      result_.latent[cursor_.first + j] = std::max(0.0, training_.kernel().self_covariance(z + j * d) - explained);
    });
    ++result_.iterations;
    publish_batch(r);
  }

  bool complete() const override { return cursor_.done(); }
  std::pair<std::uint64_t, std::uint64_t> work_done() const override {
    return {cursor_.first - start_row_, cursor_.count - start_row_};
  }

 private:
  // chosen_ (r×M): each test row's M nearest training rows, in increasing
  // order, from the n×r K(X, Z) in cross_: one pass over it per task, keeping
  // the M nearest of each of its test rows in a heap whose top is the
  // farthest kept.
  void select_neighbours(std::size_t n, std::size_t r) {
    const std::size_t m = neighbours_;
    chosen_.resize(checked_multiply(r, m));
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, r, kTestRowsPerTask),
                      [&](const tbb::blocked_range<std::size_t>& columns) {
                        std::vector<std::vector<Candidate>> heaps(columns.size());
                        for (auto& heap : heaps) heap.reserve(m);
                        for (std::size_t i = 0; i < n; ++i) {
                          const double* row = cross_.data() + i * r;
                          for (std::size_t j = columns.begin(); j != columns.end(); ++j) {
                            std::vector<Candidate>& heap = heaps[j - columns.begin()];
                            const Candidate candidate{row[j], i};
                            if (heap.size() < m) {
                              heap.push_back(candidate);
                              std::push_heap(heap.begin(), heap.end(), nearer);
                            } else if (nearer(candidate, heap.front())) {
                              std::pop_heap(heap.begin(), heap.end(), nearer);
                              heap.back() = candidate;
                              std::push_heap(heap.begin(), heap.end(), nearer);
                            }
                          }
                        }
                        for (std::size_t j = columns.begin(); j != columns.end(); ++j) {
                          const std::vector<Candidate>& heap = heaps[j - columns.begin()];
                          std::size_t* out = chosen_.data() + j * m;
                          for (std::size_t q = 0; q < m; ++q) out[q] = heap[q].row;
                          std::sort(out, out + m);
                        }
                      });
  }

  struct System {
    std::vector<double> rows, matrix, covariance;  // x_N (M×d), K̄_NN then L (M×M), k_N then L⁻¹k_N
  };

  std::size_t neighbours_, start_row_;
  MemoryReservation systems_memory_;
  std::vector<double> cross_, gathered_rows_;
  std::vector<std::size_t> chosen_, gathered_;
  tbb::enumerable_thread_specific<System> systems_;
};

}  // namespace

std::unique_ptr<IterativeMethod> make_nearest_variances(KernelMatrix& training, const double* test_rows,
                                                        BatchCursor cursor, std::size_t neighbours,
                                                        VariancePrediction& result, const VarianceBatchSink& sink) {
  GPSTREAM_CHECK_ARGUMENT(neighbours > 0, "the nearest variance route needs at least one neighbour");
  return std::make_unique<NearestVariances>(training, test_rows, cursor, neighbours, result, sink);
}

}  // namespace gpstream::variance_routes

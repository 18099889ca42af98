#include "engine/data/k_means.h"

#include "engine/data/partitioned_rows.h"

#include "engine/core/work_progress.h"

#include "engine/core/error.h"
#include "engine/core/size_arithmetic.h"
#include "engine/data/row_source_utilities.h"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <random>

namespace gpstream {
namespace {

constexpr std::size_t kBlockRows = 4096;

// For `count` rows x, the nearest of k centres (with squared norms) and the squared distance to it.
void assign(const double* x, std::size_t count, std::size_t d, const std::vector<double>& centres,
            const std::vector<double>& centre_norms, std::vector<double>& products, std::uint32_t* labels,
            double* distances) {
  const std::size_t k = centre_norms.size();
  products.resize(count * k);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(count), static_cast<int>(k),
              static_cast<int>(d), -2.0, x, static_cast<int>(d), centres.data(), static_cast<int>(d), 0.0,
              products.data(), static_cast<int>(k));
  for (std::size_t i = 0; i < count; ++i) {
    double norm = 0.0;
    for (std::size_t l = 0; l < d; ++l) norm += x[i * d + l] * x[i * d + l];
    std::size_t best = 0;
    double nearest = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < k; ++c) {
      const double distance = products[i * k + c] + centre_norms[c];
      if (distance < nearest) nearest = distance, best = c;
    }
    labels[i] = static_cast<std::uint32_t>(best);
    distances[i] = std::max(0.0, nearest + norm);
  }
}

std::vector<double> squared_norms(const std::vector<double>& centres, std::size_t k, std::size_t d) {
  std::vector<double> norms(k, 0.0);
  for (std::size_t c = 0; c < k; ++c)
    for (std::size_t l = 0; l < d; ++l) norms[c] += centres[c * d + l] * centres[c * d + l];
  return norms;
}

// k-means++: each next centre drawn with probability ∝ its squared distance to the nearest chosen one.
std::vector<double> seed_centres(const std::vector<double>& sample, std::size_t count, std::size_t d, std::size_t k,
                                 std::mt19937_64& random) {
  std::vector<double> centres;
  centres.reserve(k * d);
  const std::size_t first = std::uniform_int_distribution<std::size_t>(0, count - 1)(random);
  centres.insert(centres.end(), &sample[first * d], &sample[(first + 1) * d]);
  std::vector<double> nearest(count, std::numeric_limits<double>::infinity());
  for (std::size_t c = 1; c < k; ++c) {
    const double* last = &centres[(c - 1) * d];
    double total = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
      double distance = 0.0;
      for (std::size_t l = 0; l < d; ++l) distance += (sample[i * d + l] - last[l]) * (sample[i * d + l] - last[l]);
      nearest[i] = std::min(nearest[i], distance);
      total += nearest[i];
    }
    std::size_t chosen = std::uniform_int_distribution<std::size_t>(0, count - 1)(random);
    if (total > 0.0) {
      double target = std::uniform_real_distribution<double>(0.0, total)(random);
      for (std::size_t i = 0; i < count; ++i) {
        target -= nearest[i];
        if (target <= 0.0) {
          chosen = i;
          break;
        }
      }
    }
    centres.insert(centres.end(), &sample[chosen * d], &sample[(chosen + 1) * d]);
  }
  return centres;
}

}  // namespace

KMeansResult k_means(Context& context, RowSource& rows, const KMeansOptions& options) {
  return k_means(context, rows, RowPartition::whole(rows.rows()), options);
}

KMeansResult k_means(Context& context, RowSource& rows, const RowPartition& partition, const KMeansOptions& options) {
  Communicator& ranks = context.communicator();
  const std::size_t n = partition.global_rows, own = rows.rows(), d = rows.columns(), k = options.clusters;
  GPSTREAM_CHECK(k > 0 && k <= n, "k-means needs 1 to {} clusters (the rows), not {}", n, k);
  GPSTREAM_CHECK(k <= std::numeric_limits<std::uint32_t>::max(), "k-means supports at most 2^32 clusters");
  std::mt19937_64 random(options.seed);
  const std::size_t sample_size = std::min(n, std::max<std::size_t>(10000, checked_multiply(k, 20)));
  const std::vector<std::size_t> sample_rows = random_row_subset(n, sample_size, options.seed);
  std::vector<double> sample;
  collect_partitioned_rows(ranks, rows, partition, sample_rows, sample);  // from their owners

  KMeansResult result;
  result.centres = seed_centres(sample, sample_size, d, k, random);
  result.labels.assign(own, std::numeric_limits<std::uint32_t>::max());
  std::vector<double> block(checked_multiply(std::min(kBlockRows, own), d)), products, distances(kBlockRows);
  std::vector<std::uint32_t> labels(kBlockRows);
  WorkProgress progress(context, std::max<std::size_t>(options.max_passes, 1));
  for (std::size_t pass = 0; pass < std::max<std::size_t>(options.max_passes, 1); ++pass) {
    progress.throw_if_stopped("k-means");
    const std::vector<double> norms = squared_norms(result.centres, k, d);
    std::vector<double> sums(k * d, 0.0);
    std::vector<std::uint64_t> counts(k + 1, 0);  // and the rows that changed cluster
    std::uint64_t& changed = counts[k];
    result.inertia = 0.0;
    for (std::size_t first = 0; first < own; first += kBlockRows) {
      const std::size_t count = std::min(kBlockRows, own - first);
      rows.read_rows(first, count, block.data(), nullptr);
      assign(block.data(), count, d, result.centres, norms, products, labels.data(), distances.data());
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t label = labels[i];
        if (result.labels[first + i] != label) ++changed;
        result.labels[first + i] = label;
        result.inertia += distances[i];
        ++counts[label];
        for (std::size_t l = 0; l < d; ++l) sums[label * d + l] += block[i * d + l];
      }
    }
    // Distributed: the sums over every rank's rows.
    ranks.sum(sums);
    ranks.sum(counts);
    ranks.sum(std::span(&result.inertia, 1));
    result.passes = pass + 1;
    IterationReport report;
    report.objective = result.inertia;
    report.convergence_measure = static_cast<double>(changed);  // rows that changed cluster
    report.done = result.passes;
    progress.step(report);
    if (changed == 0) break;
    for (std::size_t c = 0; c < k; ++c) {  // an empty cluster keeps its centre
      if (counts[c] == 0) continue;
      for (std::size_t l = 0; l < d; ++l) result.centres[c * d + l] = sums[c * d + l] / static_cast<double>(counts[c]);
    }
  }
  return result;
}

std::vector<std::vector<std::size_t>> clusters_as_modules(const std::vector<std::uint32_t>& labels,
                                                          std::size_t clusters, std::size_t target_size) {
  GPSTREAM_CHECK_ARGUMENT(target_size > 0, "the module size must be at least 1");
  std::vector<std::vector<std::size_t>> members(clusters);
  for (std::size_t i = 0; i < labels.size(); ++i) members.at(labels[i]).push_back(i);
  std::vector<std::vector<std::size_t>> modules;
  for (std::vector<std::size_t>& cluster : members) {
    if (cluster.empty()) continue;
    if (cluster.size() <= 2 * target_size) {
      modules.push_back(std::move(cluster));
      continue;
    }
    const std::size_t parts = (cluster.size() + target_size - 1) / target_size;
    for (std::size_t part = 0; part < parts; ++part) {
      const std::size_t begin = part * cluster.size() / parts, end = (part + 1) * cluster.size() / parts;
      modules.emplace_back(cluster.begin() + static_cast<std::ptrdiff_t>(begin),
                           cluster.begin() + static_cast<std::ptrdiff_t>(end));
    }
  }
  return modules;
}

}  // namespace gpstream

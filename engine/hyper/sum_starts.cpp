// Where step 3's sums start (sum_starts.h).
#include "engine/hyper/sum_starts.h"

#include "engine/data/nearest_neighbours.h"
#include "engine/hyper/hyperparameter_search.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace gpstream {

SumStart sum_start_of(const KernelHyperparameters& h) { return {h.terms()}; }

SumStart with_term(SumStart scales, double ratio, const std::vector<double>& extent) {
  KernelTerm added = ratio > 1 ? scales.terms.back() : scales.terms.front();
  std::vector<double>& lengthscales = added.lengthscales;
  for (std::size_t l = 0; l < lengthscales.size(); ++l) {
    lengthscales[l] *= ratio;
    if (lengthscales.size() == extent.size()) lengthscales[l] = std::min(lengthscales[l], 2 * extent[l]);
  }
  added.signal_variance = 0.0;
  for (KernelTerm& term : scales.terms) {
    term.signal_variance *= 2.0 / 3.0;
    added.signal_variance += term.signal_variance / 2.0;
  }
  if (ratio > 1) {
    scales.terms.push_back(std::move(added));
  } else {
    scales.terms.insert(scales.terms.begin(), std::move(added));
  }
  return scales;
}

double median_neighbour_distance(const std::vector<double>& x, std::size_t d, const std::vector<double>& lengthscales) {
  const std::size_t n = x.size() / d;
  if (n < 2) return std::numeric_limits<double>::infinity();
  std::vector<double> scale(d);
  for (std::size_t l = 0; l < d; ++l) scale[l] = 1.0 / lengthscales[lengthscales.size() == 1 ? 0 : l];
  const NeighbourIndex index(x.data(), n, d, scale);
  const std::size_t samples = std::min<std::size_t>(n, 1000);
  std::vector<double> distances;
  std::vector<std::uint32_t> found;
  for (std::size_t k = 0; k < samples; ++k) {
    const std::size_t i = k * n / samples;
    index.nearest_before(i, 2, n, found);
    for (const std::uint32_t j : found) {
      if (j == i) continue;
      double squared = 0.0;
      for (std::size_t l = 0; l < d; ++l) {
        const double difference = (x[i * d + l] - x[j * d + l]) * scale[l];
        squared += difference * difference;
      }
      distances.push_back(std::sqrt(squared));
      break;
    }
  }
  if (distances.empty()) return std::numeric_limits<double>::infinity();
  std::nth_element(distances.begin(), distances.begin() + static_cast<std::ptrdiff_t>(distances.size() / 2),
                   distances.end());
  return distances[distances.size() / 2];
}

std::vector<double> shortest_lengthscales(const KernelHyperparameters& h) {
  std::vector<double> shortest = h.lengthscales;
  for (std::size_t t = 1; t < h.term_count(); ++t) {
    const std::vector<double>& lengthscales = h.term(t).lengthscales;
    if (lengthscales.size() != shortest.size()) continue;
    for (std::size_t l = 0; l < shortest.size(); ++l) shortest[l] = std::min(shortest[l], lengthscales[l]);
  }
  return shortest;
}

std::optional<SumStart> split_by_inputs(const KernelHyperparameters& h) {
  const std::vector<double>& lengthscales = h.lengthscales;
  const std::size_t d = lengthscales.size();
  if (d < 3) return std::nullopt;
  std::vector<double> sorted = lengthscales;
  std::sort(sorted.begin(), sorted.end());
  std::size_t cut = 0;  // the group boundary: after sorted[cut]
  for (std::size_t k = 1; k + 1 < d; ++k) {
    if (sorted[k + 1] / sorted[k] > sorted[cut + 1] / sorted[cut]) cut = k;
  }
  if (sorted[cut + 1] / sorted[cut] < 10 || sorted[d - 1] >= kLongestLengthscale) return std::nullopt;
  std::vector<double> short_term(d, kLongestLengthscale), long_term(d, kLongestLengthscale);
  for (std::size_t l = 0; l < d; ++l) (lengthscales[l] <= sorted[cut] ? short_term : long_term)[l] = lengthscales[l];
  KernelTerm short_range = h, long_range = h;
  short_range.lengthscales = short_term;
  short_range.signal_variance = h.signal_variance * 2.0 / 3.0;
  long_range.lengthscales = long_term;
  long_range.signal_variance = h.signal_variance / 3.0;
  return SumStart{{short_range, long_range}};
}

}  // namespace gpstream

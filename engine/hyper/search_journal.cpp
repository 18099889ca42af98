#include "engine/hyper/search_journal.h"

#include "engine/core/error.h"

#include <algorithm>
#include <cstring>

namespace gpstream {

MarginalLikelihood SearchJournal::evaluate(std::span<const double> point,
                                           const std::function<MarginalLikelihood()>& compute) {
  Entry entry = evaluate_entry(point, [&] {
    MarginalLikelihood result = compute();
    return Entry{{}, result.value, std::move(result.gradient), {}};
  });
  return {entry.value, std::move(entry.gradient)};
}

SearchJournal::Entry SearchJournal::evaluate_entry(std::span<const double> point,
                                                   const std::function<Entry()>& compute) {
  if (position_ < entries_.size()) {
    const Entry& entry = entries_[position_];
    GPSTREAM_CHECK(entry.point.size() == point.size() &&
                       std::memcmp(entry.point.data(), point.data(), point.size() * sizeof(double)) == 0,
                   "the saved search does not retrace at evaluation {}: the checkpoint is not this search's, or was "
                   "written by another build of gpstream; start the learning again",
                   position_ + 1);
    ++position_;
    return entry;
  }
  Entry entry = compute();
  entry.point.assign(point.begin(), point.end());
  entries_.push_back(entry);
  position_ = entries_.size();
  if (on_entry) on_entry(*this);
  return entry;
}

namespace {

std::vector<double> journal_point(const KernelHyperparameters& kernel, std::span<const double> beta, bool information) {
  std::vector<double> point = {static_cast<double>(static_cast<int>(kernel.type)) + (information ? 0.5 : 0.0)};
  for (const double value : log_parameters(kernel)) point.push_back(value);
  point.insert(point.end(), beta.begin(), beta.end());
  return point;
}

}  // namespace

MarginalLikelihood JournaledLikelihood::evaluate(const KernelHyperparameters& kernel, std::span<const double> beta) {
  return journal_.evaluate(journal_point(kernel, beta, false), [&] { return inner_.evaluate(kernel, beta); });
}

MarginalLikelihood JournaledLikelihood::evaluate_with_information(const KernelHyperparameters& kernel,
                                                                  std::span<const double> beta) {
  SearchJournal::Entry entry = journal_.evaluate_entry(journal_point(kernel, beta, true), [&] {
    MarginalLikelihood result = inner_.evaluate_with_information(kernel, beta);
    return SearchJournal::Entry{{}, result.value, std::move(result.gradient), std::move(result.information)};
  });
  return {entry.value, std::move(entry.gradient), std::move(entry.covariance)};
}

}  // namespace gpstream

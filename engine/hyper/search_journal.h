// SearchJournal: every likelihood evaluation of a learning run, in order —
// what a checkpoint keeps of a hyperparameter search in progress, and what a
// resumed search replays. NLopt's L-BFGS, the subset draw, the random order
// and the neighbour search are all deterministic, so a search that is handed
// the same values at the same points retraces the same path: the resumed
// search ends where the uninterrupted one does, bit for bit, having redone
// none of the evaluations it had made.
#pragma once

#include "engine/hyper/marginal_likelihood.h"

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace gpstream {

class SearchJournal {
 public:
  struct Entry {
    // [kernel type (+ ½ for an evaluation with its Fisher information), log ℓ…, log s², log σ², β…]
    std::vector<double> point;
    double value = 0.0;  // NaN for a gradient estimated alone (stochastic_gradient.h)
    std::vector<double> gradient;
    // p×p: an estimated gradient's error covariance, or an evaluation's Fisher information; else empty.
    std::vector<double> covariance;
  };

  SearchJournal() = default;
  // A journal to replay (a checkpoint's: its entries and warm start), then to extend.
  explicit SearchJournal(std::vector<Entry> recorded, std::vector<double> recorded_warm_start = {})
      : warm_start(std::move(recorded_warm_start)), entries_(std::move(recorded)) {}

  // The recorded evaluation at the next position, when there is one (its
  // point must equal `point`: else the checkpoint is not this search's, and
  // an Error says so), else `compute()`, recorded.
  MarginalLikelihood evaluate(std::span<const double> point, const std::function<MarginalLikelihood()>& compute);
  // The same for a whole entry (an estimated gradient with its covariance).
  Entry evaluate_entry(std::span<const double> point, const std::function<Entry()>& compute);

  // What the last recorded evaluation leaves for the next one (the all-rows
  // solves' solutions, their warm start; empty: nothing). Set before the
  // entry is recorded, so that the checkpoint written on that entry holds
  // both; a resumed search takes it up where replaying ends.
  std::vector<double> warm_start;

  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t position() const { return position_; }
  // Whether evaluations are still being replayed.
  bool replaying() const { return position_ < entries_.size(); }
  // Called after each new entry: where a checkpoint cadence hooks in.
  std::function<void(const SearchJournal&)> on_entry;

 private:
  std::vector<Entry> entries_;
  std::size_t position_ = 0;
};

// A Likelihood whose evaluations go through a journal.
class JournaledLikelihood final : public Likelihood {
 public:
  JournaledLikelihood(Likelihood& inner, SearchJournal& journal) : inner_(inner), journal_(journal) {}
  MarginalLikelihood evaluate(const KernelHyperparameters& kernel, std::span<const double> beta) override;
  const MeanFunction& mean() const override { return inner_.mean(); }
  bool has_information() const override { return inner_.has_information(); }
  MarginalLikelihood evaluate_with_information(const KernelHyperparameters& kernel,
                                               std::span<const double> beta) override;

 private:
  Likelihood& inner_;
  SearchJournal& journal_;
};

}  // namespace gpstream

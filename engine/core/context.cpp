#include "engine/core/context.h"

#include "engine/core/human_readable.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace gpstream {

MemoryReservation& MemoryReservation::operator=(MemoryReservation&& other) noexcept {
  if (this != &other) {
    release();
    budget_ = std::exchange(other.budget_, nullptr);
    id_ = other.id_;
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MemoryReservation::release() {
  if (budget_ != nullptr) budget_->release(id_);
  budget_ = nullptr;
  bytes_ = 0;
}

std::size_t MemoryBudget::available() const {
  const std::lock_guard lock(mutex_);
  return total_ - reserved_;
}

MemoryReservation MemoryBudget::reserve(const std::string& purpose, std::size_t bytes, const std::string& advice) {
  const std::lock_guard lock(mutex_);
  if (bytes > total_ - reserved_) {
    std::vector<std::string> held;
    for (const Part& part : parts_)
      held.push_back(fmt::format("{} for {}", format_bytes(double(part.bytes)), part.purpose));
    throw MemoryBudgetExceeded(
        fmt::format("{} needs {}, but the memory budget is {}{}{}", purpose, format_bytes(static_cast<double>(bytes)),
                    format_bytes(static_cast<double>(total_)),
                    held.empty() ? "" : fmt::format(" and holds {} already", fmt::join(held, ", ")),
                    advice.empty() ? "" : "; " + advice),
        __FILE__, __LINE__);
  }
  reserved_ += bytes;
  parts_.push_back({next_id_, purpose, bytes});
  return MemoryReservation(this, next_id_++, bytes);
}

MemoryReservation MemoryBudget::reserve_up_to(const std::string& purpose, std::size_t wanted, std::size_t divisor,
                                              std::size_t minimum) {
  const std::size_t share = available() / std::max<std::size_t>(divisor, 1);
  return reserve(purpose, std::max(minimum, std::min(wanted, share)));
}

std::string MemoryBudget::describe() const {
  const std::lock_guard lock(mutex_);
  std::string text = fmt::format("memory budget {}", format_bytes(static_cast<double>(total_)));
  const char* separator = ": ";
  for (const Part& part : parts_) {
    text += fmt::format("{}{} for {}", separator, format_bytes(static_cast<double>(part.bytes)), part.purpose);
    separator = ", ";
  }
  return text + fmt::format("{}{} free", separator, format_bytes(static_cast<double>(total_ - reserved_)));
}

void MemoryBudget::release(std::uint64_t id) {
  const std::lock_guard lock(mutex_);
  const auto part = std::find_if(parts_.begin(), parts_.end(), [id](const Part& p) { return p.id == id; });
  if (part == parts_.end()) return;
  reserved_ -= part->bytes;
  parts_.erase(part);
}

namespace {

// The process's resident memory now (Linux: /proc/self/statm), 0 when unknown.
std::size_t resident_memory_bytes() {
  std::FILE* file = std::fopen("/proc/self/statm", "r");
  if (file == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int read = std::fscanf(file, "%lu %lu", &size, &resident);
  std::fclose(file);
  const long page = ::sysconf(_SC_PAGESIZE);
  return read == 2 && page > 0 ? resident * static_cast<std::size_t>(page) : 0;
}

}  // namespace

Context::Context(const Settings& settings)
    : threads_(settings.threads > 0 ? settings.threads
                                    : static_cast<unsigned>(std::max(1, tbb::this_task_arena::max_concurrency()))),
      seed_(settings.seed),
      single_process_(settings.communicator == nullptr ? std::make_unique<SingleProcess>() : nullptr),
      communicator_(settings.communicator != nullptr ? settings.communicator : single_process_.get()),
      memory_(settings.memory_budget_bytes),
      arena_(std::make_unique<tbb::task_arena>(static_cast<int>(threads_))),
      phase_times_(settings.phase_times) {
  // BLAS runs single-threaded inside the arena's tasks, and uses the run's
  // threads only inside parallel_blas(): without this, the first run of a
  // process ran its BLAS calls on every core and rounded differently from
  // the next (a Cholesky factor differed in its last bits between two runs).
  configure_blas();
  if (settings.include_process_memory) {
    process_memory_ = memory_.reserve("the process itself before this run", resident_memory_bytes(),
                                      "the budget covers the whole process: give a larger one");
  }
}

Context::~Context() = default;

void Context::warn(const std::string& message) const {
  if (observers_.empty()) fmt::print(stderr, "gpstream: warning: {}\n", message);
  for (RunObserver* observer : observers_) observer->on_warning(message);
}

Context::ObserverScope::ObserverScope(Context& context, std::vector<RunObserver*> observers)
    : context_(context), previous_(std::exchange(context.observers_, std::move(observers))) {}

Context::ObserverScope::~ObserverScope() { context_.observers_ = std::move(previous_); }

}  // namespace gpstream

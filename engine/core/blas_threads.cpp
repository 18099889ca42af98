#include "engine/core/blas_threads.h"

#include <thread>

extern "C" void openblas_set_num_threads(int threads);

namespace gpstream {

void configure_blas() { openblas_set_num_threads(1); }

ScopedBlasThreads::ScopedBlasThreads(int threads) {
  openblas_set_num_threads(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

ScopedBlasThreads::~ScopedBlasThreads() { openblas_set_num_threads(1); }

}  // namespace gpstream

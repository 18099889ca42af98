// OpenBLAS thread control. gpstream's parallelism comes from oneTBB tasks,
// inside which BLAS must run single-threaded or the two oversubscribe the
// cores; only a lone large factorisation (the Cholesky reference) lets BLAS
// use every core, for its own duration.
#pragma once

namespace gpstream {

// Makes BLAS single-threaded; call once at start-up.
void configure_blas();

// While alive, BLAS may use `threads` threads (0: all cores).
class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int threads = 0);
  ~ScopedBlasThreads();
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;
};

}  // namespace gpstream

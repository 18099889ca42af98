// OpenBLAS thread control. gpstream's parallelism comes from oneTBB tasks,
// inside which BLAS must run single-threaded or the two oversubscribe the
// cores; only lone factorisations with nothing else running (the Cholesky
// reference, the hyperparameter search, CholQR, the online GP, the BCM) let
// BLAS use the run's threads, for their own duration (Context::parallel_blas).
#pragma once

namespace gpstream {

// Makes BLAS single-threaded; every Context does it when it is made.
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

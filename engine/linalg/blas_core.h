// OpenBLAS core selection at start-up.
//
// Debian's OpenBLAS (0.3.21) picks its kernels by CPU model at load time and
// falls back to the generic "Prescott" (SSE3) kernels on CPUs newer than it
// knows — on these machines (Xeon with AVX-512) that makes every dgemm about
// 2.7x slower (measured: 12 against 33 GFLOP/s on a kernel tile). The choice
// can only be forced through OPENBLAS_CORETYPE before the library loads, so
// when it is unset and the fallback was taken on a CPU with AVX-512 (or
// AVX2 + FMA), the process sets it and re-executes itself, once.
#pragma once

namespace gpstream {

// Call first thing in main(); returns only if no re-execution was needed.
void select_blas_core(char** argv);

// The kernels OpenBLAS uses (e.g. "SkylakeX").
const char* blas_core_name();

}  // namespace gpstream

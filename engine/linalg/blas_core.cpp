#include "engine/linalg/blas_core.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

extern "C" char* openblas_get_corename();

namespace gpstream {

const char* blas_core_name() { return openblas_get_corename(); }

void select_blas_core(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's choice, or our re-execution
  if (strcasecmp(openblas_get_corename(), "prescott") != 0) return;
  const char* core = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
    core = "SkylakeX";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    core = "Haswell";
  }
  if (core == nullptr) return;
  // The real path keeps the process's name (ps, top) that of the program.
  std::error_code error;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", error).string();
  if (error || self.empty()) return;
  setenv("OPENBLAS_CORETYPE", core, 1);
  execv(self.c_str(), argv);  // only returns on failure: carry on with the slow kernels
}

}  // namespace gpstream

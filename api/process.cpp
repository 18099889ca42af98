#include "api/process.h"

#include "engine/linalg/blas_core.h"
#include "storage/hdf5/hdf5_handle.h"

namespace gpstream {

void initialise_process(char** argv) {
  if (argv != nullptr) select_blas_core(argv);
  hdf5::initialise_library();
}

const char* blas_kernels() { return blas_core_name(); }

}  // namespace gpstream

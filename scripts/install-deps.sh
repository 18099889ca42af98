#!/usr/bin/env bash
# Installs the Debian packages gpstream builds, tests and benchmarks with.
# Idempotent: installs only what is missing, so it is cheap to run every time.
set -euo pipefail

packages=(
  build-essential cmake pkg-config          # compiler and build system
  libhdf5-dev hdf5-tools                    # dataset/model/checkpoint files; h5dump
  libtbb-dev                                # parallel loops and pipelines (oneTBB)
  libopenblas-dev liblapacke-dev            # BLAS (dgemm) and LAPACK (Cholesky) through LAPACKE
  libboost-program-options-dev              # the command line
  libfmt-dev                                # message and progress formatting
  libxxhash-dev                             # dataset fingerprints
  libnlopt-dev                              # L-BFGS for hyperparameter learning (NLopt)
  libnanoflann-dev                          # k-d tree nearest neighbours (Vecchia conditioning sets)
  libopenmpi-dev openmpi-bin                # distributed runs (mpirun -np P gpstream ...): Open MPI
  nlohmann-json3-dev                        # hyperparameter files (JSON)
  doctest-dev                               # unit tests
  python3-h5py                              # tests check that h5py reads our files
  pybind11-dev python3-dev                  # the Python module (python/): C++ bindings, Python's headers
  python3-numpy python3-sklearn             # the Python package's arrays and estimator conventions
  python3-pytest python3-pandas             # its tests (pandas: feature names from data frames)
  python3-matplotlib                        # its example (mean +- 2 std, the training curve)
  python3-pip python3-setuptools python3-wheel  # pip install ./python
  time                                      # peak memory of benchmark runs (GNU time)
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"

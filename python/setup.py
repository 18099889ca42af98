"""Builds the _gpstream extension with the project's CMake tree (python/ is
one of its folders) and puts it in the package. GPSTREAM_BUILD_DIR=DIR takes
the module from an existing build instead (scripts/build.sh builds it)."""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        build_dir = os.environ.get("GPSTREAM_BUILD_DIR")
        if not build_dir:
            build_dir = os.path.join(os.path.abspath(self.build_lib), "..", "gpstream-cmake")
            subprocess.check_call(
                ["cmake", "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release", "-DGPSTREAM_BUILD_TESTS=OFF",
                 "-DGPSTREAM_BUILD_BENCH=OFF", "-DGPSTREAM_MPI=OFF", "-DGPSTREAM_PYTHON=ON",
                 f"-DPython3_EXECUTABLE={sys.executable}"])
            subprocess.check_call(["cmake", "--build", build_dir, "--target", "_gpstream", "-j", str(os.cpu_count())])
        modules = glob.glob(os.path.join(build_dir, "python", "gpstream", "_gpstream*.so"))
        if not modules:
            sys.exit(f"no _gpstream module in {build_dir}/python/gpstream: build it first (scripts/build.sh)")
        target = os.path.join(self.build_lib, "gpstream")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(modules[0], target)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # a platform wheel: the package carries a compiled module
        return True


setup(cmdclass={"build_py": BuildWithCMake}, distclass=BinaryDistribution)

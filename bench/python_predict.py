"""Python's fit and predict against the command line's (issue 29): a
100,000-row Friedman1 model trained from arrays and from its dataset file,
then 1,000,000 test rows x 10 inputs predicted from it.

    bench/python_predict.py [--rows 100000] [--test-rows 1000000] [--memory 4G] [OUT_DIR]

with PYTHONPATH at the gpstream package (build/python) and GPSTREAM_BINARY
at the gpstream program (default build/tools/gpstream). Prints the wall
times of `gpstream predict MODEL TEST.h5 -o P.csv` and of
GaussianProcessRegressor.load(MODEL).predict(X) (both: open the model,
stream its training rows, the same means to rounding), the process's peak
resident memory against the arrays plus the budget, and appends a row to
OUT_DIR/python_predict.csv (default out/bench/). Before that, the wall
times of `gpstream train TRAIN.h5` and of GaussianProcessRegressor.fit(X, y)
on the same rows (the arrays read in place: the same weights, bit for bit).
"""
import argparse
import csv
import os
import resource
import subprocess
import sys
import time

import numpy as np

import gpstream
from gpstream import _gpstream

parser = argparse.ArgumentParser()
parser.add_argument("--rows", type=int, default=100_000)
parser.add_argument("--test-rows", type=int, default=1_000_000)
parser.add_argument("--memory", default="4G")
parser.add_argument("out", nargs="?", default=os.path.join("out", "bench"))
options = parser.parse_args()
binary = os.environ.get("GPSTREAM_BINARY", os.path.join("build", "tools", "gpstream"))
work = os.path.join(options.out, "python_predict")
os.makedirs(work, exist_ok=True)


def gpstream_command(*args):
    subprocess.run([binary, *map(str, args)], check=True)


train, model = os.path.join(work, "train.h5"), os.path.join(work, "model.h5")
# Friedman1 (Friedman 1991): 10 uniform inputs, 5 of them used, unit noise.
rng = np.random.default_rng(1)
X_train = rng.uniform(size=(options.rows, 10))
y_train = (10 * np.sin(np.pi * X_train[:, 0] * X_train[:, 1]) + 20 * (X_train[:, 2] - 0.5) ** 2 + 10 * X_train[:, 3]
           + 5 * X_train[:, 4] + rng.normal(size=options.rows))
_gpstream.write_dataset(train, X_train, y_train, [f"x{k + 1}" for k in range(10)], overwrite=True)
# The means cost the same whatever the solver reached: a few GBCD iterations give the model.
scales = [1.9, 1.92, 2.76, 5.3, 7.5, 4e4, 8e4, 4e4, 6e4, 4e4]
start = time.perf_counter()
gpstream_command("train", train, "--lengthscales", ",".join(map(str, scales)), "--noise-var", "0.039",
                 "--max-iter", 20, "-q", "-o", model, "--force", "--memory", options.memory)
cli_fit_seconds = time.perf_counter() - start
start = time.perf_counter()
fitted = gpstream.GaussianProcessRegressor(length_scale=scales, noise_variance=0.039, max_iter=20,
                                           memory=options.memory).fit(X_train, y_train)
python_fit_seconds = time.perf_counter() - start
same_weights = bool(np.array_equal(fitted.alpha_, gpstream.GaussianProcessRegressor.load(model).alpha_))
del fitted, X_train, y_train

rng = np.random.default_rng(2)
X = rng.uniform(size=(options.test_rows, 10))
test = os.path.join(work, "test.h5")
_gpstream.write_dataset(test, X, np.zeros(options.test_rows), [f"x{k + 1}" for k in range(10)], overwrite=True)
arrays_bytes = X.nbytes
resident_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

predictions = os.path.join(work, "predictions.csv")
start = time.perf_counter()
gpstream_command("predict", model, test, "-o", predictions, "--force", "--memory", options.memory, "-q")
cli_seconds = time.perf_counter() - start

start = time.perf_counter()
estimator = gpstream.GaussianProcessRegressor.load(model, memory=options.memory)
mean = estimator.predict(X)
python_seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

cli_mean = np.loadtxt(predictions, delimiter=",", skiprows=1, usecols=0)  # the check only, after the timing
largest_difference = float(np.max(np.abs(mean - cli_mean)))
machine = f"{os.cpu_count()} cores, " + next(
    line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
print(f"machine: {machine}")
print(f"fit, {options.rows:,} rows x 10 inputs, 20 GBCD iterations, --memory {options.memory}:")
print(f"  gpstream train (HDF5 file):         {cli_fit_seconds:.1f} s")
print(f"  Python fit (arrays, read in place): {python_fit_seconds:.1f} s "
      f"({python_fit_seconds / cli_fit_seconds:.3f}x the CLI); the same weights bit for bit: {same_weights}")
print(f"{options.test_rows:,} test rows x 10 inputs from a {options.rows:,}-row model, --memory {options.memory}:")
print(f"  gpstream predict (CLI, HDF5 in, CSV out): {cli_seconds:.1f} s")
print(f"  Python predict (arrays in and out):       {python_seconds:.1f} s ({python_seconds / cli_seconds:.3f}x the CLI)")
print(f"  largest |Python mean - CLI mean|: {largest_difference:.3g}")
print(f"  Python peak resident memory {peak / 2**20:.0f} MiB (before predicting: {resident_before / 2**20:.0f} MiB; "
      f"X and the means {(arrays_bytes + mean.nbytes) / 2**20:.0f} MiB)")
path = os.path.join(options.out, "python_predict.csv")
new = not os.path.exists(path)
with open(path, "a", newline="") as file:
    writer = csv.writer(file)
    if new:
        writer.writerow(["machine", "training_rows", "test_rows", "memory", "cli_seconds", "python_seconds",
                         "ratio", "largest_mean_difference", "python_peak_mib", "before_predict_mib", "arrays_mib",
                         "cli_fit_seconds", "python_fit_seconds", "same_weights"])
    writer.writerow([machine, options.rows, options.test_rows, options.memory, f"{cli_seconds:.2f}",
                     f"{python_seconds:.2f}", f"{python_seconds / cli_seconds:.3f}", f"{largest_difference:.3g}",
                     f"{peak / 2**20:.0f}", f"{resident_before / 2**20:.0f}",
                     f"{(arrays_bytes + mean.nbytes) / 2**20:.0f}", f"{cli_fit_seconds:.2f}",
                     f"{python_fit_seconds:.2f}", same_weights])
sys.exit(0)

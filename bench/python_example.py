"""gpstream from Python, notebook-style: a 1-D problem, its predictive mean
± 2 standard deviations, and the training curve from the log.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_example.py [OUT_DIR]

writes OUT_DIR/python_example.png (default out/python-example/).
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files, no display
import matplotlib.pyplot as plt
import numpy as np

import gpstream

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("out", "python-example")
os.makedirs(out, exist_ok=True)

# %% A noisy sine on [0, 10], with a gap in the middle where the GP must be unsure.
rng = np.random.default_rng(0)
x = np.concatenate([rng.uniform(0, 4, 300), rng.uniform(6, 10, 300)])
y = np.sin(x) + 0.3 * np.sin(3 * x) + 0.1 * rng.normal(size=x.size)
X = x[:, None]

# %% Exact GP by greedy block coordinate descent, hyperparameters learned by marginal likelihood.
log = os.path.join(out, "training.csv")
gp = gpstream.GaussianProcessRegressor(solver="gbcd", optimizer="lbfgs", tol=1e-6, log=log, random_state=0)
gp.fit(X, y)
print(f"learned length scale {gp.length_scale_[0]:.3g}, signal variance {gp.signal_variance_:.3g}, "
      f"noise variance {gp.noise_variance_:.3g} (standardised units); {gp.n_iter_} GBCD iterations")

# %% Mean ± 2 std of a new observation.
grid = np.linspace(-1, 11, 400)[:, None]
mean, std = gp.predict(grid, return_std=True)
print(f"R^2 on the training rows: {gp.score(X, y):.4f}")

figure, (fit_axes, curve_axes) = plt.subplots(1, 2, figsize=(11, 4))
fit_axes.fill_between(grid[:, 0], mean - 2 * std, mean + 2 * std, alpha=0.3, label="mean ± 2 std")
fit_axes.plot(grid[:, 0], mean, label="mean")
fit_axes.scatter(x, y, s=3, color="black", label="training rows")
fit_axes.set(xlabel="x", ylabel="y", title="gpstream.GaussianProcessRegressor")
fit_axes.legend(loc="lower left")

# %% The training curve: the relative residual |K alpha - y| / |y| per iteration, from the log.
curve = np.genfromtxt(log, delimiter=",", names=True)
curve_axes.semilogy(curve["iteration"], curve["convergence_measure"])
curve_axes.axhline(1e-6, linestyle="--", color="grey", label="tol")
curve_axes.set(xlabel="GBCD iteration", ylabel="|g| / |y|", title="training curve (the log)")
curve_axes.legend()
figure.tight_layout()
path = os.path.join(out, "python_example.png")
figure.savefig(path, dpi=110)
print(f"wrote {path}")

"""gpstream: out-of-core Gaussian-process regression from Python.

The engine is the command line's (one implementation): models are the same
files, trained and predicted by the same code, bit for bit.

    >>> from gpstream import GaussianProcessRegressor
    >>> gp = GaussianProcessRegressor(length_scale=0.5, noise_variance=0.01).fit(X, y)
    >>> mean, std = gp.predict(X_new, return_std=True)
"""
from ._gpstream import version as __version__
from ._commands import convert, info
from ._estimator import GaussianProcessRegressor

__all__ = ["GaussianProcessRegressor", "convert", "info", "__version__"]

"""GaussianProcessRegressor: a scikit-learn estimator over gpstream's engine.

Arrays are written once to a gpstream dataset (HDF5) in a private work
directory, which the model refers to; an HDF5 file (`fit("train.h5")` or
`fit_file`) is used where it is, streamed in blocks when it does not fit
`memory`. Training is `gpstream train`, run in this process: the same model
files as the command line. Prediction is the engine's predictor on the
caller's arrays (no file between them), opened once per fitted model.
"""
import os
import shutil
import tempfile
import warnings
import weakref

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _gpstream
from ._commands import run, run_with_progress

# From the engine's method registry (engine/training/training_method.h).
_DENSE_SOLVERS = tuple(method["name"] for method in _gpstream.training_methods() if method["dense"])
_SPARSE_MODELS = tuple(method["name"] for method in _gpstream.training_methods() if not method["dense"])


# The command-line options the estimator's parameters become, longest first.
_PARAMETER_OF_OPTION = (("--lengthscales/--gamma", "length_scale"), ("--lengthscales", "length_scale"),
                        ("--noise-var", "noise_variance"), ("--signal-var", "signal_variance"),
                        ("--max-iter", "max_iter"), ("--checkpoint", "checkpoint"), ("--threads", "n_jobs"),
                        ("--memory", "memory"), ("--kernel", "kernel"), ("--solver", "solver"), ("--resume", "resume"),
                        ("--model", "model"), ("--basis", "basis_size"), ("--mean", "mean"), ("--seed", "random_state"),
                        ("--tol", "tol"), ("--log", "log"))


def _in_parameter_names(message):
    for option, parameter in _PARAMETER_OF_OPTION:
        message = message.replace(option, parameter)
    return message


class _WorkDirectory:
    """A directory for the estimator's files, removed with the estimator.

    Its name carries the process id (gpstream-PID-XXXX): a process killed
    with SIGKILL cannot remove its own, so each new one removes those of
    processes that no longer exist (its copy of the training data would
    otherwise stay in the temporary directory for good)."""

    def __init__(self, parent=None):
        parent = parent if parent is not None else tempfile.gettempdir()
        _remove_directories_of_dead_processes(parent)
        self.path = tempfile.mkdtemp(prefix=f"gpstream-{os.getpid()}-", dir=parent)
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.path, True)

    def file(self, name):
        return os.path.join(self.path, name)


def _remove_directories_of_dead_processes(parent):
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        parts = entry.name.split("-")
        if len(parts) != 3 or parts[0] != "gpstream" or not parts[1].isdigit():
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != os.getuid():
                continue
            os.kill(int(parts[1]), 0)  # raises ProcessLookupError when the process is gone
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue  # alive (another user's, PermissionError) or unreadable: not ours to remove


class GaussianProcessRegressor(RegressorMixin, BaseEstimator):
    """Gaussian-process regression, exact (dense solvers) or sparse.

    Parameters
    ----------
    solver : {'gbcd', 'bcd-cyclic', 'bcd-gradient', 'cg', 'smo', 'cholesky'}
        The solver of (K + noise_variance I) alpha = y for model='exact'.
    model : {'exact', 'sd', 'sr', 'sgma', 'mpgp', 'sggp', 'nystrom', 'cholqr', 'online'}
        The exact GP, or a sparse model on `basis_size` basis rows.
    kernel : {'rbf', 'se', 'matern12', 'matern32', 'matern52', 'hik', 'auto'}
        (aliases: 'se-ard' for rbf, 'exponential' for matern12); 'auto' (with
        optimizer='lbfgs') fits rbf and the Matern family and keeps the one of
        highest marginal likelihood, as `gpstream hyper --kernel auto`.
    length_scale : float or array of n_features floats
        One per input for ARD kernels (a float is used for every input).
    signal_variance, noise_variance : float
        s^2 and sigma^2, in the units of the standardised targets when
        `standardise` (the default), as `gpstream train` takes them.
    optimizer : {'lbfgs', None}
        'lbfgs' learns the hyperparameters by marginal likelihood on a random
        subset of 2,000 rows, then on all rows by the Vecchia likelihood (as
        `gpstream hyper` does), starting from the ones given.
    mean : {None, 'none', 'constant', 'linear'} or str
        With optimizer='lbfgs': the prior mean, a trend in the inputs fitted
        by least squares that the GP models the residual of ('linear:x1,x3'
        for some inputs). None: gpstream's default when learning (linear),
        no mean otherwise.
    basis_size : int
        Sparse models: the basis size m (at most the training rows: a larger
        one is reduced to them, with a warning).
    standardise : bool
        Standardise inputs and targets with the training data's statistics.
    tol : float
        Dense solvers: stop when max |K alpha - y| <= tol (standardised units).
    max_iter : int or None
        The most iterations (None: until `tol`).
    memory : str or None
        Memory budget, e.g. '512M', '8G' (None: 3/4 of the RAM). Data larger
        than it are streamed from their file.
    n_jobs : int or None
        Threads (None or -1: every core).
    random_state : int or None
        Seed of every random choice (None: gpstream's default, 1).
    verbose : bool or callable
        True: the progress line and a summary on stderr. A callable: called
        during the fit with each iteration's report, a dict (iteration,
        seconds, objective, convergence_measure, kernel_evaluations, …: the
        columns of the training log).
    checkpoint : path or None
        Write a checkpoint there (every 60 s, at the end, and on Ctrl-C).
    resume : path or None
        Continue the job of this checkpoint instead of starting one (its
        configuration, data and stopping rule are the checkpoint's).
    log : path or None
        The training log (CSV: iteration, seconds, objective, max |g|, ...),
        as `gpstream train --log` writes it: the training curve.
    work_dir : path or None
        Where the estimator keeps its files (default: a temporary directory,
        removed with the estimator).

    Attributes
    ----------
    model_path_ : str, the fitted model file (as `gpstream train` writes it)
    alpha_ : ndarray, the weights (dense: one per training row; sparse: one per basis row)
    kernel_ : str, the kernel used (the one chosen with kernel='auto')
    mean_ : str, the prior mean: "none", "constant" or "linear in x1, ..."
    length_scale_, signal_variance_, noise_variance_ : the hyperparameters used
    n_iter_ : int, iterations of the solver
    n_features_in_, feature_names_in_ : as scikit-learn's
    """

    def __init__(
        self,
        solver="gbcd",
        model="exact",
        kernel="rbf",
        length_scale=1.0,
        signal_variance=1.0,
        noise_variance=0.1,
        optimizer=None,
        mean=None,
        basis_size=1000,
        standardise=True,
        tol=1e-4,
        max_iter=None,
        memory=None,
        n_jobs=None,
        random_state=None,
        verbose=False,
        checkpoint=None,
        resume=None,
        log=None,
        work_dir=None,
    ):
        self.solver = solver
        self.model = model
        self.kernel = kernel
        self.length_scale = length_scale
        self.signal_variance = signal_variance
        self.noise_variance = noise_variance
        self.optimizer = optimizer
        self.mean = mean
        self.basis_size = basis_size
        self.standardise = standardise
        self.tol = tol
        self.max_iter = max_iter
        self.memory = memory
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.checkpoint = checkpoint
        self.resume = resume
        self.log = log
        self.work_dir = work_dir

    # ---- fitting

    def fit(self, X, y=None):
        """Fits to arrays X (n_samples, n_features) and y (n_samples,), or to
        a gpstream dataset file when X is a path (y is then not given)."""
        if isinstance(X, (str, os.PathLike)):
            if y is not None:
                raise ValueError("fit(path) reads y from the dataset: do not give y")
            return self.fit_file(X)
        X, y = self._validate_data(X, y, y_numeric=True, dtype=np.float64)
        if X.shape[0] < 2:
            raise ValueError(f"n_samples={X.shape[0]}: a Gaussian process needs at least 2 training rows")
        names = list(map(str, getattr(self, "feature_names_in_", [f"x{k + 1}" for k in range(X.shape[1])])))
        self._work = _WorkDirectory(self.work_dir)
        data = self._work.file("train.h5")
        _gpstream.write_dataset(data, X, y, names, "y", overwrite=True)
        return self._train(data, X.shape[0])

    def fit_file(self, path):
        """Fits to a gpstream dataset (from `gpstream convert` or
        `gpstream.convert`) where it is: rows are streamed in blocks when the
        file does not fit `memory`."""
        path = os.path.abspath(os.fspath(path))
        dataset = _gpstream.describe_dataset(path)
        self.n_features_in_ = dataset["columns"]
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._work = _WorkDirectory(self.work_dir)
        return self._train(path, dataset["rows"])

    def _train(self, data, rows):
        model_path = self._work.file("model.h5")
        args = ["train"]
        if self.resume is not None:
            args += ["--resume", self.resume]
        else:
            args += [data] + self._training_options(self.n_features_in_, rows)
        args += ["-o", model_path, "--force"] + self._compute_options()
        if self.checkpoint is not None:
            args += ["--checkpoint", self.checkpoint]
        try:
            if callable(self.verbose):
                # Progress to the callable: the log's rows as they are written.
                log = self.log if self.log is not None else self._work.file("training.csv")
                if os.path.exists(log) and self.resume is None:
                    os.remove(log)
                run_with_progress(self.verbose, log, *args, "--log", log)
            else:
                if self.log is not None:
                    args += ["--log", self.log]
                run(*args)
        except ValueError as error:  # the command's usage error, in the estimator's words
            raise ValueError(_in_parameter_names(str(error))) from None
        self._set_fitted(model_path, data)
        return self

    def _check_parameters(self, columns):
        """The estimator's numeric parameters, checked here so that an error names the parameter (not the
        command-line option it becomes); returns the length scales and how many the kernel takes."""

        def positive(name, value):
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise ValueError(f"{name}={value!r}: give a positive number") from None
            if not (np.isfinite(number) and number > 0):
                raise ValueError(f"{name}={value!r}: give a positive, finite number")

        positive("signal_variance", self.signal_variance)
        positive("noise_variance", self.noise_variance)
        positive("tol", self.tol)
        scales = np.atleast_1d(np.asarray(self.length_scale, dtype=np.float64))
        if scales.ndim != 1 or not np.all(np.isfinite(scales) & (scales > 0)):
            raise ValueError(f"length_scale={self.length_scale!r}: give positive, finite numbers")
        # As many as the kernel takes (the registry says: one per input, one, or none as for hik); a ValueError
        # naming the kernels there are for an unknown one.
        wanted = columns if self.kernel == "auto" else _gpstream.kernel_lengthscales(str(self.kernel), columns)
        if wanted > 0 and scales.size not in (1, wanted):
            takes = "one" if wanted == 1 else f"one, or one per input ({wanted})"
            raise ValueError(f"length_scale has {scales.size} values: give {takes}")
        for name in ("max_iter", "basis_size"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or int(value) != value or value < 1):
                raise ValueError(f"{name}={value!r}: give a whole number of at least 1")
        if self.random_state is not None and (int(self.random_state) != self.random_state or self.random_state < 0):
            raise ValueError(f"random_state={self.random_state!r}: give a whole number of at least 0, or None")
        if self.memory is not None:
            _gpstream.parse_byte_size(str(self.memory), "memory")
        return scales, wanted

    def _training_options(self, columns, rows):
        scales, wanted = self._check_parameters(columns)
        if self.model == "exact":
            if self.solver not in _DENSE_SOLVERS:
                raise ValueError(f"solver={self.solver!r}: choose one of {', '.join(_DENSE_SOLVERS)}")
            args = ["--solver", self.solver, "--tol", repr(float(self.tol))]
        elif self.model in _SPARSE_MODELS:
            basis = int(self.basis_size)
            if basis > rows:  # as scikit-learn's Nystroem does with n_components
                warnings.warn(f"basis_size={basis} is more than the {rows} training rows: using {rows}")
                basis = rows
            args = ["--model", self.model, "--basis", basis]
        else:
            raise ValueError(f"model={self.model!r}: choose 'exact' or one of {', '.join(_SPARSE_MODELS)}")
        learning = self.optimizer == "lbfgs"
        if self.optimizer is not None and not learning:
            raise ValueError(f"optimizer={self.optimizer!r}: choose 'lbfgs' or None")
        if not learning and (self.kernel == "auto" or self.mean is not None):
            raise ValueError("kernel='auto' and mean are learned: they need optimizer='lbfgs'")
        if scales.size == 1 and wanted > 1:
            scales = np.repeat(scales, wanted)
        if self.kernel != "auto":
            args += ["--kernel", self.kernel]
        if wanted > 0:
            args += ["--lengthscales", ",".join(repr(float(s)) for s in scales)]
        args += ["--signal-var", repr(float(self.signal_variance)), "--noise-var", repr(float(self.noise_variance))]
        if learning:  # as `gpstream hyper`: on a random subset of 2,000 rows (or all, when fewer), then all rows
            args += ["--learn-hyper", "--subset", min(2000, rows)]
            if self.mean is not None:
                args += ["--mean", str(self.mean)]
        if not self.standardise:
            args.append("--no-standardise")
        if self.max_iter is not None:
            args += ["--max-iter", int(self.max_iter)]
        if self.random_state is not None:
            args += ["--seed", int(self.random_state)]
        return args

    def _compute_options(self):
        args = [] if self.verbose is True else ["-q"]
        if self.memory is not None:
            args += ["--memory", self.memory]
        if self.n_jobs is not None and self.n_jobs != -1:
            if self.n_jobs < 1:
                raise ValueError(f"n_jobs={self.n_jobs}: give a positive number of threads, or -1 for all cores")
            args += ["--threads", int(self.n_jobs)]
        return args

    def _set_fitted(self, model_path, data):
        saved = _gpstream.read_model(model_path)
        self._opened = {}  # the model opened for prediction, on the first predict
        self.model_path_ = model_path
        self.training_data_ = data
        self.model_type_ = saved["type"]
        # Dense models and Nyström's predict from their training rows (a loaded model's too).
        self._predicts_from_training_rows = saved["type"] == "dense" or saved["solver"] == "nystrom"
        self.alpha_ = np.asarray(saved["alpha"] if saved["type"] == "dense" else saved["weights"])
        self.kernel_ = saved["kernel"]
        self.mean_ = saved["mean"]
        self.length_scale_ = np.asarray(saved["length_scale"])
        self.signal_variance_ = saved["signal_variance"]
        self.noise_variance_ = saved["noise_variance"]
        self.n_iter_ = saved["iterations"]
        self.n_features_in_ = saved["columns"]

    # ---- prediction

    def predict(self, X, return_std=False, return_cov=False):
        """The predictive mean; with return_std, also the standard deviation
        of a new observation y* (noise included), as scikit-learn's with a
        WhiteKernel; with return_cov, the joint covariance of y* at the rows
        of X instead (exact models: by the Cholesky factor of K + sigma^2 I,
        whose n^2 doubles must fit `memory`)."""
        if return_std and return_cov:
            raise RuntimeError("At most one of return_std or return_cov can be requested.")
        check_is_fitted(self, "model_path_")
        X = self._validate_data(X, reset=False, dtype=np.float64)
        if return_cov and self.model_type_ != "dense":
            raise NotImplementedError("return_cov is computed for exact models; a sparse model gives return_std")
        model = self._open_model()
        if return_cov:
            return model.predict(X)[0], model.covariance(X)
        mean, variance = model.predict(X, variance=return_std)
        if return_std:
            return mean, np.sqrt(variance)
        return mean

    def _open_model(self):
        """The fitted model opened for prediction (api/predictor.h), once: its
        training rows serve every predict call."""
        threads = 0 if self.n_jobs in (None, -1) else int(self.n_jobs)
        data = self.training_data_ if self._predicts_from_training_rows else ""
        key = (self.model_path_, data, self.memory or "", threads)
        if key not in self._opened:  # filled in place: predict leaves the estimator's attributes as they are
            self._opened.clear()
            self._opened[key] = _gpstream.OpenModel(*key)
        return self._opened[key]

    # ---- files

    def save(self, path):
        """Writes the model as `gpstream train` does (PATH), and the training
        data it predicts from, when they are the estimator's, beside it
        (PATH.data.h5): `gpstream predict PATH INPUTS --data PATH.data.h5`."""
        check_is_fitted(self, "model_path_")
        path = os.fspath(path)
        shutil.copyfile(self.model_path_, path)
        if self.training_data_.startswith(self._work.path):
            shutil.copyfile(self.training_data_, path + ".data.h5")

    @classmethod
    def load(cls, path, **params):
        """An estimator fitted to the model at PATH (written by save() or by
        `gpstream train`); its training data from PATH.data.h5 when there, else
        where the model says."""
        path = os.path.abspath(os.fspath(path))
        estimator = cls(**params)
        estimator._work = _WorkDirectory(estimator.work_dir)
        saved = _gpstream.read_model(path)
        data = path + ".data.h5" if os.path.exists(path + ".data.h5") else saved["dataset_path"]
        estimator._set_fitted(path, data)
        return estimator

    # ---- pickling (and copy.deepcopy): the files the estimator owns travel with it

    def __getstate__(self):
        state = dict(super().__getstate__())  # scikit-learn's (it records its version)
        state["_opened"] = {}  # opened again where it is unpickled
        work = state.pop("_work", None)
        if work is not None and "model_path_" in state:
            owned = {}
            for key in ("model_path_", "training_data_"):
                if state[key].startswith(work.path):
                    with open(state[key], "rb") as file:
                        owned[key] = file.read()
            state["_owned_files"] = owned
        return state

    def __setstate__(self, state):
        state = dict(state)
        owned = state.pop("_owned_files", None)
        super().__setstate__(state)
        if owned is not None:  # a fitted estimator: its own directory, with its files
            self._work = _WorkDirectory(self.work_dir)
            for key, contents in owned.items():
                path = self._work.file("model.h5" if key == "model_path_" else "train.h5")
                with open(path, "wb") as file:
                    file.write(contents)
                setattr(self, key, path)

    def _more_tags(self):
        return {"requires_y": True}

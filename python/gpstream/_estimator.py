"""GaussianProcessRegressor: a scikit-learn estimator over gpstream's API.

fit(X, y) trains on the arrays themselves (read in place when they are
C-contiguous float64, as scikit-learn's GaussianProcessRegressor with
copy_X_train=False keeps them); fit("train.h5") or fit_file streams a
gpstream dataset where it is, in blocks when it does not fit `memory`.
Training and prediction are the API's (api/training.h, api/predictor.h),
the same as the command line's: no file and no CSV between them.
"""
import os
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _gpstream

# The parameter schema shared with the command line (api/parameter_schema.h), by name.
_SCHEMA = {parameter["name"]: parameter for parameter in _gpstream.parameters()}
# The schema's name of the exact GP, its default model ("dense"; the estimator's model='exact').
_DENSE_MODEL = _SCHEMA["model"]["default"]


def _schema_default(name):
    """A parameter's default as the schema gives it, in its Python type: the estimator's signature writes none."""
    parameter = _SCHEMA[name]
    whole = parameter["expected"].startswith("a whole number")
    return int(parameter["default"]) if whole else parameter["default"]



def _progress_printer():
    """verbose=True: a line on stderr at most every second (a fit may run thousands of iterations)."""
    last = [-float("inf")]

    def show(row):
        now = time.monotonic()
        if now - last[0] < 1.0:
            return
        last[0] = now
        print(f"gpstream {row['stage']}: iteration {row['iteration']}, {row['seconds']:.1f} s, "
              f"objective {row['objective']:.6g}, measure {row['convergence_measure']:.3e}", file=sys.stderr,
              flush=True)

    return show


class GaussianProcessRegressor(RegressorMixin, BaseEstimator):
    """Gaussian-process regression, exact (dense solvers) or sparse.

    Parameters
    ----------
    solver : {'auto', 'gbcd', 'bcd-cyclic', 'bcd-gradient', 'cg', 'pcg', 'smo', 'cholesky'}
        The solver of (K + noise_variance I) alpha = y for model='exact'; 'auto' takes
        pcg for a sum of kernels on at most 3 inputs, gbcd otherwise (as `gpstream train`).
    precision : {'auto', 'double'}
        The kernel entries of the solver's products (gbcd, bcd-*, cg, pcg):
        'auto' computes them in single precision, twice as fast, and proves
        convergence by an exact residual in double (`gpstream train --precision`;
        docs/solvers.md); 'double' keeps them in double.
    model : {'exact', 'sd', 'sr', 'sgma', 'mpgp', 'sggp', 'nystrom', 'cholqr', 'online'}
        The exact GP ('dense' too, the command line's name), or a sparse model on
        `basis_size` basis rows.
    kernel : {'rbf', 'se', 'matern12', 'matern32', 'matern52', 'matern72', 'rq', 'hik', 'auto'} or None
        (aliases: 'se-ard' for rbf, 'exponential' for matern12,
        'rational-quadratic' for rq; every name of `gpstream._gpstream.kernels()`),
        or a sum ('matern32+rbf'); 'auto' (with optimizer='lbfgs') fits rbf and
        the Matern family, and sums across scales, and keeps the one of highest
        evidence, as `gpstream hyper --kernel auto`. None: as `gpstream train`,
        'auto' with optimizer='lbfgs', else 'rbf'.
    length_scale : float or array of n_features floats
        One per input for ARD kernels (a float is used for every input).
    signal_variance, noise_variance : float
        s^2 and sigma^2, in the units of the standardised targets when
        `standardise` (the default), as `gpstream train` takes them.
    kernel_parameters : dict or None
        The kernel's own parameters beyond lengthscales and variances, by the
        names its family declares ({'alpha': 2.0} for rq); each not given
        starts at its family's declared value. Learned with the others under
        optimizer='lbfgs'; the fitted values are in `kernel_terms_`.
    optimizer : {'lbfgs', None}
        'lbfgs' learns the hyperparameters by marginal likelihood on a random
        subset of 2,000 rows, then on all rows by the Vecchia likelihood where
        it is accurate, else by the exact likelihood on larger subsets up to
        8,000 rows (as `gpstream hyper` does), starting from the ones given.
    all_rows_steps : int
        With optimizer='lbfgs': at most this many Newton steps on all rows by
        the exact likelihood's stochastic gradient after the steps above
        (`gpstream hyper --all-rows-steps`; each minutes to hours at 10^5
        rows: docs/model.md). 0 (the default): none.
    learn_on : {'all', 'subset'}
        With optimizer='lbfgs': 'all' refines the subset's optimum on every
        row (the Vecchia likelihood where it is accurate, else the exact one
        on larger subsets); 'subset' stops at the subset's exact likelihood
        (`gpstream hyper --learn-on`).
    mean_fit : {'ols', 'gls'}
        With optimizer='lbfgs' and a mean: 'ols' fits the trend by least
        squares and learns the kernel on its residual; 'gls' fits both
        jointly by maximum likelihood (`gpstream hyper --mean-fit`).
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
    tol : float or None
        Dense solvers: stop when the relative residual |K alpha - y| / |y|
        is at most tol, which keeps the RMS error of the predicted means at
        the training inputs below tol x RMS(y) (None: 1e-3).
    max_iter : int or None
        The most iterations (None or 0: until `tol`).
    memory : str or None
        Memory budget, e.g. '512M', '8G' (None: 3/4 of the RAM). Data larger
        than it are streamed from their file.
    n_jobs : int or None
        Threads (None or -1: every core).
    random_state : int or None
        Seed of every random choice (None: gpstream's default, 1).
    verbose : bool or callable
        True: a progress line every second and a summary on stderr. A
        callable: called in the fitting thread with each iteration's
        report, a dict (stage:
        'learning' or 'training', iteration, seconds, objective,
        convergence_measure, kernel_evaluations); an exception it raises
        stops the fit (at the iteration, with a checkpoint when asked) and
        is raised by fit.
    checkpoint : path or None
        Write a checkpoint there (every 60 s, at the end, and on Ctrl-C):
        of the hyperparameter search while optimizer='lbfgs' learns, then of
        the training.
    resume : path or None
        Continue the job of this checkpoint instead of starting one: a
        training job with its configuration, data and stopping rule; a search
        stopped while learning with the parameters it was started with (give
        the same), to the answer of an uninterrupted fit.
    log : path or None
        The training log (CSV: iteration, seconds, objective, max |g|, ...),
        as `gpstream train --log` writes it: the training curve.
    variance_method : {'auto', 'cholesky', 'gbcd', 'nearest'}
        Exact models: how predict(return_std=True) computes the variances
        (docs/variance.md). auto: the exact route that costs less; nearest:
        upper bounds, each test row conditioned on its `neighbours` training
        rows of highest covariance, for models whose exact variances cost
        too much.
    neighbours : int
        variance_method='nearest': the training rows each test row is
        conditioned on (more: closer to the exact variance; exact at n).
    work_dir : path or None
        Where pickling and copying write their temporary model file
        (default: the system's temporary directory); nothing is kept there.

    Attributes
    ----------
    X_train_, y_train_ : the training arrays (fit on arrays; used in place, not copied)
    training_data_ : str or None, the dataset file (fit on a file, or load)
    alpha_ : ndarray, the weights (dense: one per training row; sparse: one per basis row)
    kernel_ : str, the kernel used (the one chosen with kernel='auto'; a sum as "matern32+matern32")
    kernel_terms_ : list of dict, each term of the kernel (one for a single kernel): its
        "kernel", "length_scale" and "signal_variance"
    mean_ : str, the prior mean: "none", "constant" or "linear in x1, ..."
    length_scale_, signal_variance_ : the first term's; noise_variance_ : the noise variance
    n_iter_ : int, iterations of the solver
    n_features_in_, feature_names_in_ : as scikit-learn's
    """

    def __init__(
        self,
        solver=_schema_default("solver"),
        precision=_schema_default("precision"),
        model="exact",
        kernel=None,
        length_scale=1.0,
        signal_variance=1.0,
        noise_variance=0.1,
        kernel_parameters=None,
        optimizer=None,
        all_rows_steps=_schema_default("all_rows_steps"),
        learn_on=_schema_default("learn_on"),
        mean_fit=_schema_default("mean_fit"),
        mean=None,
        basis_size=_schema_default("basis_size"),
        standardise=True,
        tol=None,
        max_iter=None,
        memory=None,
        n_jobs=None,
        random_state=None,
        verbose=False,
        checkpoint=None,
        resume=None,
        log=None,
        variance_method=_schema_default("variance_method"),
        neighbours=_schema_default("neighbours"),
        work_dir=None,
    ):
        self.solver = solver
        self.precision = precision
        self.model = model
        self.kernel = kernel
        self.length_scale = length_scale
        self.signal_variance = signal_variance
        self.noise_variance = noise_variance
        self.kernel_parameters = kernel_parameters
        self.optimizer = optimizer
        self.all_rows_steps = all_rows_steps
        self.learn_on = learn_on
        self.mean_fit = mean_fit
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
        self.variance_method = variance_method
        self.neighbours = neighbours
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
        X, y = np.ascontiguousarray(X), np.ascontiguousarray(y, dtype=np.float64)
        names = list(map(str, getattr(self, "feature_names_in_", [f"x{k + 1}" for k in range(X.shape[1])])))
        return self._train(X, y, None, names)

    def fit_file(self, path):
        """Fits to a gpstream dataset (from `gpstream convert` or
        `gpstream.convert`) where it is: rows are streamed in blocks when the
        file does not fit `memory`."""
        path = os.path.abspath(os.fspath(path))
        dataset = _gpstream.describe_dataset(path)
        self.n_features_in_ = dataset["columns"]
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self._train(None, None, path, dataset["feature_names"])

    def _train(self, X, y, path, names):
        # A resumed training job keeps the parameters its checkpoint saved; a resumed search (optimizer='lbfgs'
        # stopped while learning) must be given the ones it was started with, which the engine checks.
        parameters = self._job_parameters(self.n_features_in_)
        files = _gpstream.JobFiles()
        if self.resume is not None:
            files.resume = os.fspath(self.resume)
        if self.checkpoint is not None:
            files.checkpoint = os.fspath(self.checkpoint)
        if self.log is not None:
            files.log = os.fspath(self.log)
        memory, threads = self._compute()
        progress = self.verbose if callable(self.verbose) else (_progress_printer() if self.verbose else None)
        model, report = _gpstream.train(X, y, path or "", names, parameters, files, memory, threads, progress)
        for note in report["notes"]:  # what the job changed of its parameters to fit
            warnings.warn(note)
        if self.verbose is True and report["replayed_evaluations"] > 0:
            print(f"gpstream: the search saved in {self.resume} went on from its {report['replayed_evaluations']} "
                  "evaluations", file=sys.stderr, flush=True)
        if self.verbose is True:
            precision = f"\ngpstream: {report['precision']}" if report["precision"] else ""
            print(f"gpstream: {report['start']}; {report['column_cache']}{precision}\n"
                  f"gpstream: {report['stop_reason']} after {report['iterations']} iterations in "
                  f"{report['seconds']:.2f} s", file=sys.stderr, flush=True)
        self._set_fitted(model, X, y, path)
        return self

    def _check_parameters(self, columns):
        """The estimator's numeric parameters, checked against the parameter schema before any work, the
        error naming the parameter as the estimator spells it; returns the length scales and how many the
        kernel takes."""

        # The ranges are the parameter schema's (api/parameter_schema.h), the command line's too.
        for name in ("signal_variance", "noise_variance", "tol", "max_iter", "basis_size", "random_state",
                     "all_rows_steps"):
            value = getattr(self, name)
            if value is None and name in ("tol", "max_iter", "random_state"):
                continue  # the method's default tolerance, no limit, the default seed
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ValueError(f"{name}={value!r}: give {_SCHEMA[name]['expected']}")
            _gpstream.check_parameter(name, float(value))
        scales = np.atleast_1d(np.asarray(self.length_scale, dtype=np.float64))
        if scales.ndim != 1 or not np.all(np.isfinite(scales) & (scales > 0)):
            raise ValueError(f"length_scale={self.length_scale!r}: give {_SCHEMA['length_scale']['expected']}")
        # As many as the kernel takes (the registry says: one per input, one, or none as for hik); a ValueError
        # naming the kernels there are for an unknown one.
        kernel = self._kernel()
        wanted = columns if kernel == "auto" else _gpstream.kernel_lengthscales(kernel, columns)
        if wanted > 0 and scales.size not in (1, wanted):
            takes = "one" if wanted == 1 else f"one, or one per input ({wanted})"
            raise ValueError(f"length_scale has {scales.size} values: give {takes}")
        if self.memory is not None:
            _gpstream.parse_byte_size(str(self.memory), "memory")
        return scales, wanted

    def _kernel(self):
        """The kernel named, or the engine's default for this fit (auto when learning, else rbf)."""
        if self.kernel is not None:
            return str(self.kernel)
        return _gpstream.default_kernel(self.optimizer == "lbfgs")

    def _kernel_parameters_text(self):
        """`kernel_parameters` as the schema's name=value pairs ("alpha=2.0"); the engine checks the names."""
        given = self.kernel_parameters
        if given is None:
            return ""
        if not isinstance(given, dict):
            raise ValueError(f"kernel_parameters={given!r}: give a dict of name: value, e.g. {{'alpha': 2.0}}")
        words = []
        for name, value in given.items():
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ValueError(f"kernel_parameters[{name!r}]={value!r}: give a positive, finite number")
            words.append(f"{name}={float(value)!r}")
        return ",".join(words)

    def _job_parameters(self, columns):
        """The job as the parameter schema's (name, value) pairs (api/job_specification.h), the ones the user
        set or that differ from the schema's defaults: the engine checks them, applies the rules between them
        and builds the job, as it does for the command line's options."""
        scales, wanted = self._check_parameters(columns)
        # The engine refuses a solver or model it does not have, naming its choices.
        pairs = {"model": _DENSE_MODEL if self.model == "exact" else str(self.model)}
        if pairs["model"] == _DENSE_MODEL:
            pairs["solver"] = str(self.solver)
            pairs["precision"] = str(self.precision)
        else:
            # A basis larger than the rows is all of them (the API's rule, the command line's too: a warning).
            pairs["basis_size"] = str(int(self.basis_size))
        if self.tol is not None:
            pairs["tol"] = repr(float(self.tol))  # else the method's default (cholqr's too)
        if self.optimizer is not None and self.optimizer != "lbfgs":
            raise ValueError(f"optimizer={self.optimizer!r}: choose 'lbfgs' or None")
        if self.optimizer == "lbfgs":
            pairs["learn_hyper"] = "true"
        if self.mean is not None:
            pairs["mean"] = str(self.mean)
        if self.all_rows_steps:
            pairs["all_rows_steps"] = str(int(self.all_rows_steps))
        for name in ("learn_on", "mean_fit"):  # the learning's, where they differ from the schema's default
            if str(getattr(self, name)) != _schema_default(name):
                pairs[name] = str(getattr(self, name))
        if self.kernel is not None:
            pairs["kernel"] = str(self.kernel)
        if wanted > 0:
            if scales.size == 1 and wanted > 1:
                scales = np.repeat(scales, wanted)
            pairs["length_scale"] = ",".join(repr(float(s)) for s in scales)
        pairs["signal_variance"] = repr(float(self.signal_variance))
        pairs["noise_variance"] = repr(float(self.noise_variance))
        kernel_parameters = self._kernel_parameters_text()
        if kernel_parameters:
            pairs["kernel_parameters"] = kernel_parameters
        if not self.standardise:
            pairs["standardise"] = "false"
        if self.max_iter is not None:
            pairs["max_iter"] = str(int(self.max_iter))
        if self.random_state is not None:
            pairs["random_state"] = str(int(self.random_state))
        return list(pairs.items())

    def _compute(self):
        """The memory budget ("" for the default) and threads (0 for every core)."""
        if self.n_jobs is not None and self.n_jobs != -1 and self.n_jobs < 1:
            raise ValueError(f"n_jobs={self.n_jobs}: give a positive number of threads, or -1 for all cores")
        threads = 0 if self.n_jobs in (None, -1) else int(self.n_jobs)
        return ("" if self.memory is None else str(self.memory)), threads

    def _set_fitted(self, model, X, y, path):
        saved = model.describe()
        self._model = model
        self._opened = {}  # the model opened for prediction, on the first predict
        self.X_train_, self.y_train_, self.training_data_ = X, y, path
        self.model_type_ = saved["type"]
        self.alpha_ = np.asarray(saved["weights"])
        self.kernel_ = saved["kernel"]
        self.kernel_terms_ = [dict(term, length_scale=np.asarray(term["length_scale"])) for term in saved["terms"]]
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
        check_is_fitted(self, "alpha_")
        X = self._validate_data(X, reset=False, dtype=np.float64)
        if return_cov and self.model_type_ != "dense":
            raise NotImplementedError("return_cov is computed for exact models; a sparse model gives return_std")
        model = self._open_model()
        if return_cov:
            return model.predict(X)[0], model.covariance(X)
        mean, variance = model.predict(X, variance=return_std, variance_method=self.variance_method,
                                       neighbours=self.neighbours)
        if return_std:
            return mean, np.sqrt(variance)
        return mean

    def _open_model(self):
        """The fitted model opened for prediction (api/predictor.h), once: its
        training rows (the arrays, or the dataset file) serve every predict call."""
        memory, threads = self._compute()
        key = (memory, threads)
        if key not in self._opened:  # filled in place: predict leaves the estimator's attributes as they are
            self._opened.clear()
            self._opened[key] = _gpstream.OpenModel(self._model, self.X_train_, self.y_train_,
                                                    self.training_data_ or "", memory, threads)
        return self._opened[key]

    # ---- files

    def save(self, path, overwrite=False):
        """Writes the model as `gpstream train` does (PATH), and the training
        arrays it predicts from, when it was fitted on arrays, beside it as a
        dataset (PATH.data.h5): `gpstream predict PATH INPUTS` reads both.
        An existing PATH or PATH.data.h5 is replaced only with overwrite=True
        (FileExistsError otherwise), and never the dataset the model was
        fitted to (ValueError)."""
        check_is_fitted(self, "alpha_")
        path = os.path.abspath(os.fspath(path))
        data = self.training_data_ or ""
        writes = [path] + ([path + ".data.h5"] if self.X_train_ is not None else [])
        for written in writes:  # every output checked before any is written
            if os.path.lexists(written) and not overwrite:
                raise FileExistsError(f"save: {written!r} already exists; pass overwrite=True to replace it")
            _gpstream.check_output(written, overwrite=overwrite)
        if self.X_train_ is not None:
            data = path + ".data.h5"
            names = list(map(str, getattr(self, "feature_names_in_", [f"x{k + 1}" for k in range(self.n_features_in_)])))
            _gpstream.write_dataset(data, self.X_train_, self.y_train_, names, overwrite=overwrite)
        self._model.save(path, overwrite=overwrite, dataset_path=data)

    @classmethod
    def load(cls, path, **params):
        """An estimator fitted to the model at PATH (written by save() or by
        `gpstream train`); its training data from PATH.data.h5 when there, else
        where the model says."""
        path = os.path.abspath(os.fspath(path))
        estimator = cls(**params)
        model = _gpstream.Model.load(path)
        data = path + ".data.h5" if os.path.exists(path + ".data.h5") else model.describe()["dataset_path"]
        estimator._set_fitted(model, None, None, data)
        return estimator

    # ---- pickling (and copy.deepcopy): the model travels as its file's bytes

    def __getstate__(self):
        state = dict(super().__getstate__())  # scikit-learn's (it records its version)
        state["_opened"] = {}  # opened again where it is unpickled
        model = state.pop("_model", None)
        if model is not None:
            with tempfile.TemporaryDirectory(prefix="gpstream-", dir=self.work_dir) as directory:
                file = os.path.join(directory, "model.h5")
                model.save(file)
                with open(file, "rb") as saved:
                    state["_model_file"] = saved.read()
        return state

    def __setstate__(self, state):
        state = dict(state)
        contents = state.pop("_model_file", None)
        super().__setstate__(state)
        if contents is not None:
            with tempfile.TemporaryDirectory(prefix="gpstream-", dir=self.work_dir) as directory:
                file = os.path.join(directory, "model.h5")
                with open(file, "wb") as saved:
                    saved.write(contents)
                self._model = _gpstream.Model.load(file)

    def _more_tags(self):
        return {"requires_y": True}

"""gpstream.GaussianProcessRegressor against exact references: scikit-learn's
exact GP, the command line on the same model files, and itself with the
data larger than its memory budget."""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor as ScikitLearnGP
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, Matern, RationalQuadratic, WhiteKernel

import gpstream
from gpstream import _gpstream

FRIEDMAN1_SCALES = "1.9,1.92,2.76,5.3,7.5,4e4,8e4,4e4,6e4,4e4"


def problem(n, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, d))
    return X, np.sin(X[:, 0]) * np.cos(X[:, 1] / 2) + 0.1 * rng.normal(size=n)


def interrupted_python(script, ready):
    """Runs `script` in another Python, sends it SIGINT 1.5 s after it prints `ready`, and returns what it
    printed; the script exits with 7 when it caught the KeyboardInterrupt. Python's own SIGINT handler is
    installed first: a Python started with SIGINT ignored (a job started with & by a non-interactive shell, as
    some CI runners start the tests) leaves it ignored, and Ctrl-C would never reach the fit."""
    script = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n" + textwrap.dedent(script)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=dict(os.environ))
    assert process.stdout.readline().strip() == ready
    time.sleep(1.5)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 7, err
    return out


def learning_fit_script(checkpoint, train, settings):
    """A Python script that fits `train` with `settings`, checkpointing to `checkpoint`, prints "learning" when
    the hyperparameter search begins and exits with 7 when a KeyboardInterrupt stops it."""
    return textwrap.dedent(f"""
        import gpstream, sys
        said = []
        def progress(row):
            if row["stage"] == "learning" and not said:
                said.append(1)
                print("learning", flush=True)
        gp = gpstream.GaussianProcessRegressor(verbose=progress, checkpoint={str(checkpoint)!r}, **{settings!r})
        try:
            gp.fit({str(train)!r})
        except KeyboardInterrupt as stop:
            print("KeyboardInterrupt:", stop, flush=True)
            sys.exit(7)
    """)


@pytest.mark.parametrize("solver", ["cholesky", "gbcd", "cg"])
def test_mean_and_std_equal_scikit_learns_exact_gp(solver):
    X, y = problem(120)
    Z, _ = problem(30, seed=1)
    gp = gpstream.GaussianProcessRegressor(
        solver=solver, standardise=False, length_scale=[1.2, 0.8], signal_variance=1.5, noise_variance=0.05, tol=1e-10
    ).fit(X, y)
    mean, std = gp.predict(Z, return_std=True)
    # The same kernel, fixed: s² exp(−‖x − z‖²/(2ℓ²)) + σ²δ (std of y*: the white noise included).
    kernel = ConstantKernel(1.5, "fixed") * RBF([1.2, 0.8], "fixed") + WhiteKernel(0.05, "fixed")
    reference = ScikitLearnGP(kernel=kernel, optimizer=None, alpha=1e-15).fit(X, y)
    expected_mean, expected_std = reference.predict(Z, return_std=True)
    np.testing.assert_allclose(mean, expected_mean, rtol=0, atol=1e-8)
    np.testing.assert_allclose(std, expected_std, rtol=1e-6)  # gbcd variances: the 1e-3 bound is on the variance
    np.testing.assert_allclose(gp.predict(Z), mean, rtol=0, atol=0)
    # The joint covariance of y*, as scikit-learn's: its diagonal the variances above.
    cov_mean, cov = gp.predict(Z, return_cov=True)
    _, expected_cov = reference.predict(Z, return_cov=True)
    np.testing.assert_array_equal(cov_mean, mean)
    np.testing.assert_allclose(cov, expected_cov, rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), std, rtol=1e-6)
    assert gp.n_features_in_ == 2
    assert gp.alpha_.shape == (120,)


def test_a_fit_runs_gbcd_in_single_precision_certified_in_double_and_the_model_says_so():
    X, y = problem(3000)
    gp = gpstream.GaussianProcessRegressor(solver="gbcd", length_scale=[1.2, 0.8], noise_variance=0.05).fit(X, y)
    described = gp._model.describe()
    assert described["precision"] == "single"
    assert described["exact_residuals_in_single_precision"] == 1
    assert described["convergence_measure"] <= 1e-3  # the exact residual, computed in double
    in_double = gpstream.GaussianProcessRegressor(solver="gbcd", precision="double", length_scale=[1.2, 0.8],
                                                  noise_variance=0.05).fit(X, y)
    assert in_double._model.describe()["precision"] == "double"
    np.testing.assert_allclose(gp.predict(X[:50]), in_double.predict(X[:50]), rtol=0, atol=1e-2)
    with pytest.raises(ValueError, match='precision="float": choose auto or double'):
        gpstream.GaussianProcessRegressor(precision="float").fit(X, y)


# Every stationary family of the registry with a lengthscale per input and none of its own parameters (rbf and
# the Matérn class, whatever ν), against scikit-learn's Matern at the same ν (its RBF as ν → ∞); and an alias.
_ARD_FAMILIES = [(kernel["name"], kernel["smoothness"]) for kernel in _gpstream.kernels()
                 if kernel["stationary"] and kernel["lengthscales_on_two_inputs"] == 2 and not kernel["parameters"]]


@pytest.mark.parametrize("kernel, nu", _ARD_FAMILIES + [("exponential", 0.5)])
def test_the_stationary_kernels_equal_scikit_learns(kernel, nu):
    X, y = problem(150)
    Z, _ = problem(40, seed=2)
    gp = gpstream.GaussianProcessRegressor(
        solver="cholesky", kernel=kernel, standardise=False, length_scale=[1.3, 0.7], signal_variance=1.2,
        noise_variance=0.03,
    ).fit(X, y)
    mean, std = gp.predict(Z, return_std=True)
    family = RBF([1.3, 0.7], "fixed") if np.isinf(nu) else Matern([1.3, 0.7], "fixed", nu=nu)
    reference_kernel = ConstantKernel(1.2, "fixed") * family + WhiteKernel(0.03, "fixed")
    reference = ScikitLearnGP(kernel=reference_kernel, optimizer=None, alpha=1e-15).fit(X, y)
    expected_mean, expected_std = reference.predict(Z, return_std=True)
    np.testing.assert_allclose(mean, expected_mean, rtol=0, atol=1e-8)
    np.testing.assert_allclose(std, expected_std, rtol=1e-8)


def test_the_rational_quadratic_equals_scikit_learns_and_takes_its_alpha_by_name():
    # A family with a parameter of its own: alpha given by name, in the fitted terms, against scikit-learn's.
    X, y = problem(150)
    Z, _ = problem(40, seed=2)
    settings = dict(solver="cholesky", kernel="rq", standardise=False, length_scale=0.9, signal_variance=1.2,
                    noise_variance=0.03)
    gp = gpstream.GaussianProcessRegressor(kernel_parameters={"alpha": 0.6}, **settings).fit(X, y)
    mean, std = gp.predict(Z, return_std=True)
    family = RationalQuadratic(length_scale=0.9, alpha=0.6, length_scale_bounds="fixed", alpha_bounds="fixed")
    reference_kernel = ConstantKernel(1.2, "fixed") * family + WhiteKernel(0.03, "fixed")
    expected_mean, expected_std = ScikitLearnGP(kernel=reference_kernel, optimizer=None, alpha=1e-15).fit(
        X, y).predict(Z, return_std=True)
    np.testing.assert_allclose(mean, expected_mean, rtol=0, atol=1e-8)
    np.testing.assert_allclose(std, expected_std, rtol=1e-8)
    assert gp.kernel_terms_[0]["alpha"] == 0.6
    declared = {kernel["name"]: kernel["parameters"] for kernel in _gpstream.kernels()}
    assert declared["rq"]["alpha"]["start"] == 1.0 and declared["matern32"] == {}
    with pytest.raises(ValueError, match="kernel_parameters: the rq kernel has no parameter beta"):
        gpstream.GaussianProcessRegressor(kernel_parameters={"beta": 2.0}, **settings).fit(X, y)
    with pytest.raises(ValueError, match="kernel_parameters: alpha must be a positive, finite number"):
        gpstream.GaussianProcessRegressor(kernel_parameters={"alpha": -2.0}, **settings).fit(X, y)


def test_nearest_variances_bound_scikit_learns_from_above_and_equal_them_with_every_row():
    X, y = problem(200)
    Z, _ = problem(40, seed=3)
    settings = dict(solver="cholesky", kernel="matern32", standardise=False, length_scale=[0.6, 0.9],
                    signal_variance=1.1, noise_variance=0.02)
    kernel = ConstantKernel(1.1, "fixed") * Matern([0.6, 0.9], "fixed", nu=1.5) + WhiteKernel(0.02, "fixed")
    _, expected_std = ScikitLearnGP(kernel=kernel, optimizer=None, alpha=1e-15).fit(X, y).predict(Z, return_std=True)
    few = gpstream.GaussianProcessRegressor(variance_method="nearest", neighbours=15, **settings).fit(X, y)
    _, bound = few.predict(Z, return_std=True)
    assert np.all(bound >= expected_std * (1 - 1e-9))
    assert np.any(bound > expected_std * 1.01)  # 15 of 200 rows: visibly above somewhere
    every = gpstream.GaussianProcessRegressor(variance_method="nearest", neighbours=200, **settings).fit(X, y)
    np.testing.assert_allclose(every.predict(Z, return_std=True)[1], expected_std, rtol=1e-8)
    with pytest.raises(ValueError, match="unknown variance method"):
        gpstream.GaussianProcessRegressor(variance_method="closest", **settings).fit(X, y).predict(Z, return_std=True)
    with pytest.raises(ValueError, match="neighbours=0"):
        gpstream.GaussianProcessRegressor(variance_method="nearest", neighbours=0, **settings).fit(X, y).predict(
            Z, return_std=True)


def test_kernel_auto_learns_the_model_gpstream_hyper_learns(cli, tmp_path):
    # A rough GP (Matérn 1/2) on a linear trend: auto should pick matern12, and the mean the trend's inputs.
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 2, (500, 2))
    K = Matern([0.8, 1.1], nu=0.5)(X) + 0.01 * np.eye(500)
    y = np.linalg.cholesky(K) @ rng.normal(size=500) + 1.5 - 0.8 * X[:, 1]
    gp = gpstream.GaussianProcessRegressor(kernel="auto", optimizer="lbfgs", solver="cholesky", random_state=1)
    gp.fit(X, y)
    assert gp.kernel_ == "matern12"
    assert gp.mean_ == "linear in x1, x2"
    # The same learning as the command line's on the same rows, seed and start (the estimator's defaults).
    start = ["--lengthscales", "1,1", "--signal-var", 1, "--noise-var", 0.1]
    gpstream._gpstream.write_dataset(str(tmp_path / "train.h5"), X, y, ["x1", "x2"])
    cli("hyper", tmp_path / "train.h5", "-o", tmp_path / "hyper.json", "--subset", 500, "--seed", 1, *start, "-q")
    with open(tmp_path / "hyper.json") as file:
        learned = json.load(file)
    assert learned["kernel_name"] == "matern12"
    np.testing.assert_allclose(gp.length_scale_, learned["length_scales"], rtol=1e-6)
    np.testing.assert_allclose(gp.noise_variance_, learned["noise_variance"], rtol=1e-6)
    # No kernel named: auto when learning (as hyper and train --learn-hyper take it), else rbf.
    unnamed = gpstream.GaussianProcessRegressor(optimizer="lbfgs", solver="cholesky", random_state=1).fit(X, y)
    assert unnamed.kernel_ == "matern12"
    np.testing.assert_array_equal(unnamed.alpha_, gp.alpha_)
    assert gpstream.GaussianProcessRegressor(solver="cholesky").fit(X, y).kernel_ == "rbf"
    # Without a mean, the GP alone; and what is learned needs the optimiser.
    assert gpstream.GaussianProcessRegressor(kernel="rbf", optimizer="lbfgs", mean="none").fit(X, y).mean_ == "none"
    # The rules between parameters are the command line's, spelt as the estimator's keywords.
    with pytest.raises(ValueError, match="kernel auto compares kernels by their learned evidence: it needs "
                                         "optimizer='lbfgs'"):
        gpstream.GaussianProcessRegressor(kernel="auto").fit(X, y)
    with pytest.raises(ValueError, match="mean is an option of learning: it needs optimizer='lbfgs'"):
        gpstream.GaussianProcessRegressor(mean="linear").fit(X, y)
    with pytest.raises(ValueError, match="optimizer='lbfgs' learns on standardised data: drop standardise=False"):
        gpstream.GaussianProcessRegressor(optimizer="lbfgs", standardise=False).fit(X, y)
    with pytest.raises(ValueError, match="tol is for the dense solvers and cholqr: sggp stops at gap"):
        gpstream.GaussianProcessRegressor(model="sggp", basis_size=20, tol=1e-3).fit(X, y)


def test_learn_on_and_mean_fit_learn_as_the_command_lines_options_do(cli, tmp_path):
    # 2,400 rows: more than the subset's 2,000, so that learning on all rows would move the answer (to
    # ℓ₁ = 0.8882 from 0.8867), as fitting the trend by least squares would (ℓ₁ = 1.03 on 400 of them).
    rng = np.random.default_rng(7)
    X = rng.uniform(-2, 2, (2400, 2))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=2400)
    gp = gpstream.GaussianProcessRegressor(kernel="rbf", optimizer="lbfgs", learn_on="subset", mean_fit="gls",
                                           solver="cholesky", random_state=1).fit(X, y)
    gpstream._gpstream.write_dataset(str(tmp_path / "train.h5"), X, y, ["x1", "x2"])
    cli("hyper", tmp_path / "train.h5", "-o", tmp_path / "hyper.json", "--kernel", "rbf", "--learn-on", "subset",
        "--mean-fit", "gls", "--seed", 1, "--lengthscales", "1,1", "--signal-var", 1, "--noise-var", 0.1, "-q")
    with open(tmp_path / "hyper.json") as file:
        learned = json.load(file)
    np.testing.assert_allclose(gp.length_scale_, learned["length_scales"], rtol=1e-6)
    np.testing.assert_allclose(gp.noise_variance_, learned["noise_variance"], rtol=1e-6)
    # The choices are the schema's, and both are options of learning (api/job_rules.h).
    with pytest.raises(ValueError, match=re.escape('learn_on="everywhere": choose all or subset')):
        gpstream.GaussianProcessRegressor(optimizer="lbfgs", learn_on="everywhere").fit(X, y)
    with pytest.raises(ValueError, match=re.escape('mean_fit="wls": choose ols or gls')):
        gpstream.GaussianProcessRegressor(optimizer="lbfgs", mean_fit="wls").fit(X, y)
    with pytest.raises(ValueError, match="learn_on is an option of learning: it needs optimizer='lbfgs'"):
        gpstream.GaussianProcessRegressor(learn_on="subset").fit(X, y)


def test_a_model_of_the_command_line_predicts_in_python_and_back(tmp_path, cli):
    train, test = tmp_path / "train.h5", tmp_path / "test.csv"
    cli("generate", "friedman1", "--rows", 800, "--seed", 3, "-q", "-o", train)
    cli("generate", "friedman1", "--rows", 50, "--seed", 4, "--noise-free", "-q", "-o", test)
    options = ["--lengthscales", FRIEDMAN1_SCALES, "--noise-var", "0.039", "--tol", "1e-6", "--threads", "1"]
    cli("train", train, "-o", tmp_path / "cli.h5", *options, "-q")
    cli("predict", tmp_path / "cli.h5", test, "-o", tmp_path / "cli.csv", "--variance", "-q")
    expected = np.loadtxt(tmp_path / "cli.csv", delimiter=",", skiprows=1)
    inputs = np.loadtxt(test, delimiter=",", skiprows=1)[:, :10]

    # The CLI's model in Python: the same predictions, bit for bit (the same code).
    loaded = gpstream.GaussianProcessRegressor.load(tmp_path / "cli.h5")
    mean, std = loaded.predict(inputs, return_std=True)
    np.testing.assert_array_equal(mean, expected[:, 0])
    np.testing.assert_array_equal(std, expected[:, 2])

    # The same model trained from Python (on the same file) is the CLI's, and the CLI predicts it.
    scales = [float(s) for s in FRIEDMAN1_SCALES.split(",")]
    gp = gpstream.GaussianProcessRegressor(length_scale=scales, noise_variance=0.039, tol=1e-6, n_jobs=1)
    gp.fit(str(train))
    np.testing.assert_array_equal(gp.alpha_, loaded.alpha_)
    gp.save(tmp_path / "python.h5")
    cli("predict", tmp_path / "python.h5", test, "-o", tmp_path / "python.csv", "-q")
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "python.csv", delimiter=",", skiprows=1, ndmin=2)[:, 0], expected[:, 0])

    # Arrays: the dataset written from them is the file's (the same statistics), so the same model again.
    rows = _read_dataset(train)
    from_arrays = gpstream.GaussianProcessRegressor(length_scale=scales, noise_variance=0.039, tol=1e-6, n_jobs=1)
    from_arrays.fit(*rows)
    np.testing.assert_array_equal(from_arrays.alpha_, loaded.alpha_)
    from_arrays.save(tmp_path / "arrays.h5")
    assert os.path.exists(tmp_path / "arrays.h5.data.h5")  # its training data, beside it
    again = gpstream.GaussianProcessRegressor.load(tmp_path / "arrays.h5")
    np.testing.assert_array_equal(again.predict(inputs), expected[:, 0])


def _read_dataset(path):
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "r") as file:
        return np.asarray(file["X"]), np.asarray(file["y"])


def test_save_never_writes_over_the_training_dataset_and_replaces_files_only_when_told(tmp_path, cli):
    train = tmp_path / "d.h5"
    cli("generate", "friedman1", "--rows", 200, "--seed", 3, "-q", "-o", train)
    dataset = train.read_bytes()
    scales = [float(s) for s in FRIEDMAN1_SCALES.split(",")]
    gp = gpstream.GaussianProcessRegressor(length_scale=scales, noise_variance=0.039).fit(str(train))
    # Its own training dataset: refused, and with overwrite=True a ValueError naming it.
    with pytest.raises(FileExistsError, match="overwrite=True"):
        gp.save(train)
    with pytest.raises(ValueError, match="training dataset"):
        gp.save(train, overwrite=True)
    assert train.read_bytes() == dataset
    # Fitted on arrays, save writes PATH and PATH.data.h5: an existing one of either is kept unless told.
    X, y = _read_dataset(train)
    from_arrays = gpstream.GaussianProcessRegressor(length_scale=scales, noise_variance=0.039).fit(X, y)
    model, beside = tmp_path / "m.h5", tmp_path / "m.h5.data.h5"
    beside.write_bytes(b"somebody's file")
    with pytest.raises(FileExistsError, match="m.h5.data.h5"):
        from_arrays.save(model)
    assert beside.read_bytes() == b"somebody's file" and not model.exists()
    from_arrays.save(model, overwrite=True)
    np.testing.assert_array_equal(gpstream.GaussianProcessRegressor.load(model).predict(X[:5]), from_arrays.predict(X[:5]))
    with pytest.raises(FileExistsError):
        from_arrays.save(model)
    # A directory at PATH: refused before anything is written, PATH.data.h5 included.
    directory = tmp_path / "somedir"
    directory.mkdir()
    with pytest.raises(RuntimeError, match="is a directory"):
        from_arrays.save(directory, overwrite=True)
    assert not (tmp_path / "somedir.data.h5").exists()


def test_a_file_larger_than_the_memory_budget_is_streamed_to_the_same_model(tmp_path, cli, capfd):
    train = tmp_path / "train.h5"
    cli("generate", "friedman1", "--rows", 60000, "--seed", 5, "-q", "-o", train)
    assert os.path.getsize(train) > 4 * 2**20  # X alone: 60,000 x 10 doubles = 4.6 MiB
    common = dict(length_scale=[float(s) for s in FRIEDMAN1_SCALES.split(",")], noise_variance=0.039, max_iter=15)
    # The budget covers the whole process (the interpreter and its libraries too): 8 MiB above what it holds now.
    with open("/proc/self/statm") as statm:
        resident = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    small = gpstream.GaussianProcessRegressor(memory=str(resident + 8 * 2**20), verbose=True, **common).fit(train)
    assert "X streamed from the file in blocks" in capfd.readouterr().err
    resident = gpstream.GaussianProcessRegressor(**common).fit(train)
    np.testing.assert_array_equal(small.alpha_, resident.alpha_)  # streamed = resident, bit for bit
    assert small.n_iter_ == 15


def test_a_saved_nystrom_model_loads_and_predicts_from_its_saved_training_rows(tmp_path):
    X, y = problem(300)
    gp = gpstream.GaussianProcessRegressor(model="nystrom", basis_size=40, noise_variance=0.05).fit(X, y)
    expected = gp.predict(X[:20])
    gp.save(tmp_path / "nystrom.h5")
    del gp  # its work directory (the training rows it was fitted on) goes with it
    loaded = gpstream.GaussianProcessRegressor.load(tmp_path / "nystrom.h5")
    np.testing.assert_array_equal(loaded.predict(X[:20]), expected)


def test_the_histogram_intersection_kernel_takes_no_length_scale():
    from scipy.stats import norm

    X, y = problem(80)
    Z, _ = problem(10, seed=2)
    gp = gpstream.GaussianProcessRegressor(solver="cholesky", kernel="hik", standardise=False,
                                           noise_variance=0.1).fit(X, y)
    assert gp.kernel_ == "hik" and gp.length_scale_.size == 0

    def hik(A, B):  # (s²/d) Σ_l min(Φ(a_l), Φ(b_l)), s² = 1
        return np.minimum(norm.cdf(A)[:, None, :], norm.cdf(B)[None, :, :]).mean(axis=2)

    expected = hik(Z, X) @ np.linalg.solve(hik(X, X) + 0.1 * np.eye(80), y)
    np.testing.assert_allclose(gp.predict(Z), expected, rtol=0, atol=1e-9)


def test_sparse_models_fit_and_predict():
    X, y = problem(600)
    Z, truth = problem(100, seed=2)
    for model in ("sr", "sggp", "nystrom"):
        gp = gpstream.GaussianProcessRegressor(model=model, basis_size=60, length_scale=1.0, noise_variance=0.05)
        mean, std = gp.fit(X, y).predict(Z, return_std=True)
        assert gp.alpha_.shape[0] <= 60
        assert gp.score(Z, truth) > 0.9, model
        assert np.all(std > 0)


def test_cholqr_learning_a_lengthscale_that_makes_a_removed_row_dependent():
    # A regression: with x2 irrelevant, CholQR's hyperparameter step grows its lengthscale to ~2000, after which
    # putting back the row of a rejected swap failed ("could not restore inducing row 138"); the set is now
    # refactorised instead.
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, (500, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=500)
    gp = gpstream.GaussianProcessRegressor(model="cholqr", basis_size=40, length_scale=1.0, noise_variance=0.05)
    gp.fit(X, y)
    assert gp.alpha_.shape == (40,)
    assert gp.length_scale_[1] > 100 * gp.length_scale_[0]  # x2 found irrelevant
    assert gp.score(X, y) > 0.95


def test_a_pickled_estimator_outlives_the_original():
    import copy
    import gc
    import pickle

    X, y = problem(60)
    gp = gpstream.GaussianProcessRegressor(solver="cholesky").fit(X, y)
    expected = gp.predict(X)
    restored, duplicate = pickle.loads(pickle.dumps(gp)), copy.deepcopy(gp)
    del gp
    gc.collect()
    np.testing.assert_array_equal(restored.predict(X), expected)
    np.testing.assert_array_equal(duplicate.predict(X), expected)


def test_feature_names_from_a_data_frame():
    pandas = pytest.importorskip("pandas")
    X, y = problem(50)
    frame = pandas.DataFrame(X, columns=["height", "width"])
    gp = gpstream.GaussianProcessRegressor(solver="cholesky").fit(frame, y)
    assert list(gp.feature_names_in_) == ["height", "width"]
    with pytest.warns(UserWarning, match="does not have valid feature names"):  # scikit-learn's own check
        np.testing.assert_array_equal(gp.predict(frame), gp.predict(X))


def test_the_estimators_defaults_and_ranges_are_the_parameter_schemas():
    # One schema (api/parameter_schema.h) for the command line and Python: every estimator parameter it lists
    # has the schema's default (None where the default depends on the method, or means "the schema's"), and
    # its range is checked by it, naming the parameter as Python spells it.
    defaults = gpstream.GaussianProcessRegressor().get_params()
    listed = [parameter for parameter in _gpstream.parameters() if parameter["python"]]
    assert {"noise_variance", "basis_size", "tol", "max_iter", "random_state"} <= {p["name"] for p in listed}
    for parameter in listed:
        assert parameter["name"] in defaults, parameter["name"]
        default = defaults[parameter["name"]]
        if parameter["default"] and default is not None:
            assert str(default) == parameter["default"] or float(default) == float(parameter["default"]), parameter
        assert "--" not in parameter["help"]
    with pytest.raises(ValueError, match=r"^basis_size=0: give a whole number, at least 1$"):
        _gpstream.check_parameter("basis_size", 0)


def test_errors_are_python_exceptions():
    X, y = problem(30)
    with pytest.raises(ValueError, match=re.escape('solver="sgd": choose auto, gbcd')):
        gpstream.GaussianProcessRegressor(solver="sgd").fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        gpstream.GaussianProcessRegressor().fit(np.where(X > 2, np.nan, X), y)
    # A bad parameter is named as the estimator's parameter, not as the command-line option it becomes.
    for parameters, message in [({"noise_variance": -1}, "noise_variance=-1"),
                                ({"signal_variance": float("nan")}, "signal_variance=nan"),
                                ({"length_scale": [1.0, 0.0]}, "length_scale="),
                                ({"length_scale": [1.0, 2.0, 3.0]}, "length_scale has 3 values"),
                                ({"tol": 0}, "tol=0"), ({"max_iter": -1}, "max_iter=-1"),
                                ({"basis_size": 2.5, "model": "sr"}, "basis_size=2.5: give a whole number, at least 1"),
                                ({"random_state": -2}, "random_state=-2"), ({"memory": "lots"}, "memory: \"lots\""),
                                ({"optimizer": "lbfgs", "all_rows_steps": -1}, "all_rows_steps=-1"),
                                ({"all_rows_steps": 2}, "all_rows_steps is an option of learning: it needs optimizer='lbfgs'"),
                                ({"kernel": "cubic"}, "kernel='cubic': unknown kernel"),
                                ({"optimizer": "lbfgs", "mean": "quadratic"}, "mean: unknown mean \"quadratic\"")]:
        with pytest.raises(ValueError, match=re.escape(message)) as raised:
            gpstream.GaussianProcessRegressor(**parameters).fit(X, y)
        assert "--" not in str(raised.value)
    # Targets a GP cannot use are bad arguments too, as the docs promise.
    with pytest.raises(ValueError, match="is constant"):
        gpstream.GaussianProcessRegressor().fit(X, np.ones(len(y)))
    with pytest.raises(ValueError, match="too large for their squares"):
        gpstream.GaussianProcessRegressor().fit(X, 1e200 * y)
    with pytest.raises(MemoryError, match="raise memory="):
        gpstream.GaussianProcessRegressor(solver="cholesky", memory="64K").fit(*problem(3000))


def test_return_cov_with_standardised_data_and_its_refusals():
    X, y = problem(100)
    y = 5.0 + 3.0 * y  # standardisation matters: the covariance comes back in the target's units
    Z, _ = problem(12, seed=3)
    gp = gpstream.GaussianProcessRegressor(solver="cholesky", length_scale=[1.0, 1.5], noise_variance=0.02).fit(X, y)
    _, std = gp.predict(Z, return_std=True)
    _, cov = gp.predict(Z, return_cov=True)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), std, rtol=1e-10)
    np.testing.assert_allclose(cov, cov.T, rtol=0, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(cov) > 0)
    with pytest.raises(RuntimeError, match="At most one"):
        gp.predict(Z, return_std=True, return_cov=True)
    sparse = gpstream.GaussianProcessRegressor(model="sr", basis_size=20).fit(X, y)
    with pytest.raises(NotImplementedError, match="exact models"):
        sparse.predict(Z, return_cov=True)


def test_two_estimators_fit_at_once_in_two_threads_as_each_fits_alone():
    import threading

    problems = [problem(3000, seed=seed) for seed in (1, 2)]
    made = lambda: gpstream.GaussianProcessRegressor(solver="cg", tol=1e-12, max_iter=100, n_jobs=1)  # noqa: E731
    alone = [made().fit(X, y) for X, y in problems]
    together, errors = [None, None], []

    def fit(k):
        try:
            together[k] = made().fit(*problems[k])
        except BaseException as error:  # noqa: B902 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=fit, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for k in range(2):  # one Context each: the same iterations, the same weights to rounding (threads differ)
        assert together[k].n_iter_ == alone[k].n_iter_ == 100
        np.testing.assert_allclose(together[k].alpha_, alone[k].alpha_, rtol=1e-9, atol=1e-9)


def test_a_progress_callback_sees_every_iteration_and_its_exception_stops_the_fit():
    X, y = problem(2000)
    rows = []
    gpstream.GaussianProcessRegressor(solver="cg", tol=1e-12, max_iter=40, verbose=rows.append).fit(X, y)
    assert [row["iteration"] for row in rows] == list(range(0, 41))
    assert all(row["stage"] == "training" for row in rows)

    class Enough(Exception):
        pass

    def stop_at_ten(row):
        if row["iteration"] >= 10:
            raise Enough(row["iteration"])

    with pytest.raises(Enough):
        gpstream.GaussianProcessRegressor(solver="cg", tol=1e-12, max_iter=100000, verbose=stop_at_ten).fit(X, y)


def test_two_estimators_predict_at_once_in_two_threads():
    import threading

    X, y = problem(2000)
    Z, _ = problem(20000, seed=4)
    models = [gpstream.GaussianProcessRegressor(solver="cholesky", length_scale=scale).fit(X, y) for scale in (0.7, 1.3)]
    alone = [model.predict(Z, return_std=True) for model in models]
    together = [None, None]

    def predict(k):
        together[k] = models[k].predict(Z, return_std=True)

    threads = [threading.Thread(target=predict, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k in range(2):
        np.testing.assert_allclose(together[k][0], alone[k][0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(together[k][1], alone[k][1], rtol=1e-12)
    assert not np.allclose(together[0][0], together[1][0])  # two models, two answers


def test_ctrl_c_stops_a_prediction_with_keyboard_interrupt(tmp_path, cli):
    train, model = tmp_path / "train.h5", tmp_path / "model.h5"
    cli("generate", "friedman1", "--rows", 20000, "--seed", 6, "-q", "-o", train)
    cli("train", train, "--lengthscales", FRIEDMAN1_SCALES, "--noise-var", "0.039", "--max-iter", 2, "-q", "-o", model)
    # gbcd variances of 4,000 rows from 20,000: minutes of work, stopped after a second.
    script = textwrap.dedent(f"""
        import gpstream, numpy as np, sys
        gp = gpstream.GaussianProcessRegressor.load({str(model)!r}, n_jobs=1, memory="256M")
        Z = np.random.default_rng(0).uniform(size=(4000, 10))
        print("predicting", flush=True)
        try:
            gp.predict(Z, return_std=True)
        except KeyboardInterrupt:
            print("KeyboardInterrupt", flush=True)
            sys.exit(7)
    """)
    assert "KeyboardInterrupt" in interrupted_python(script, "predicting")


def test_a_fit_on_arrays_writes_no_file_so_sigkill_leaves_none_behind(tmp_path):
    # A fit reads the caller's arrays in place: no copy of them is written anywhere, even for a moment.
    script = textwrap.dedent("""
        import gpstream, numpy as np
        rng = np.random.default_rng(0)
        X = rng.uniform(size=(20000, 10))
        print("fitting", flush=True)
        gpstream.GaussianProcessRegressor(noise_variance=1e-4, tol=1e-12, max_iter=100000, n_jobs=1).fit(X, X.sum(1))
    """)
    environment = dict(os.environ, TMPDIR=str(tmp_path))
    process = subprocess.Popen([sys.executable, "-c", script], env=environment, stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "fitting"
    time.sleep(2.0)
    assert process.poll() is None, "the fit ended before it could be killed"
    process.kill()  # SIGKILL: nothing of the process runs again
    process.wait()
    assert list(tmp_path.iterdir()) == []


def test_convert_and_info(tmp_path):
    csv = tmp_path / "data.csv"
    X, y = problem(40)
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header="a,b,target", comments="")
    gpstream.convert(csv, tmp_path / "data.h5")
    text = gpstream.info(tmp_path / "data.h5")
    assert re.search(r"rows \(n\)\s+40\n", text) and re.search(r"inputs \(d\)\s+2\n", text)
    gp = gpstream.GaussianProcessRegressor(solver="cholesky").fit(tmp_path / "data.h5")
    assert gp.n_features_in_ == 2
    # The engine's messages name parameters as Python spells them: convert's keywords, not the CLI's options.
    with pytest.raises(FileExistsError, match=r"already exists \(use overwrite to overwrite it\)"):
        gpstream.convert(csv, tmp_path / "data.h5")
    (tmp_path / "bad.csv").write_text("a,b\n1,2\nNaN,3\n")
    with pytest.raises(RuntimeError, match=r"bad.csv:3:1: .*\(use drop_invalid to skip such rows\)") as failure:
        gpstream.convert(tmp_path / "bad.csv", tmp_path / "bad.h5")
    assert "--" not in str(failure.value)


def test_ctrl_c_stops_a_fit_with_a_checkpoint_and_resume_finishes_it(tmp_path, cli):
    train, checkpoint = tmp_path / "train.h5", tmp_path / "job.ckpt"
    cli("generate", "friedman1", "--rows", 20000, "--seed", 6, "-q", "-o", train)
    script = textwrap.dedent(f"""
        import gpstream, sys
        gp = gpstream.GaussianProcessRegressor(length_scale=1.0, noise_variance=1e-4, tol=1e-12, max_iter=150,
                                               n_jobs=1, checkpoint={str(checkpoint)!r})
        print("fitting", flush=True)
        try:
            gp.fit({str(train)!r})
        except KeyboardInterrupt as stop:
            print("KeyboardInterrupt:", stop, flush=True)
            sys.exit(7)
    """)
    assert "KeyboardInterrupt: interrupted at iteration" in interrupted_python(script, "fitting")
    assert os.path.exists(checkpoint)
    # The job continues where it stopped, to the stopping rule it was given (150 iterations in all).
    resumed = gpstream.GaussianProcessRegressor(resume=str(checkpoint)).fit(str(train))
    assert resumed.n_iter_ == 150


def test_a_search_stopped_while_learning_resumes_from_its_checkpoint_to_the_uninterrupted_answer(tmp_path, cli, capfd):
    train, checkpoint = tmp_path / "train.h5", tmp_path / "search.ckpt"
    # 800 rows: the search (exact likelihoods on all of them) takes ~2 s on 2 cores, the Ctrl-C lands in it.
    cli("generate", "friedman1", "--rows", 800, "--seed", 8, "-q", "-o", train)
    settings = dict(optimizer="lbfgs", kernel="matern32", max_iter=30)
    script = "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n" + learning_fit_script(
        checkpoint, train, settings)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=dict(os.environ))
    assert process.stdout.readline().strip() == "learning"
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 7, err
    assert "while learning the hyperparameters" in out and f"continue with resume={checkpoint}" in out
    assert "hyperparameter search in progress" in gpstream.info(checkpoint)
    # Other parameters than the search was started with are refused, naming the parameter.
    with pytest.raises(ValueError, match="resume: the search saved in .* was started with other parameters"):
        gpstream.GaussianProcessRegressor(resume=checkpoint, **dict(settings, kernel="rbf")).fit(str(train))
    resumed = gpstream.GaussianProcessRegressor(resume=checkpoint, verbose=True, **settings).fit(str(train))
    # It went on from the saved evaluations (read, not computed again).
    assert re.search(r"the search saved in .* went on from its [1-9][0-9]* evaluations", capfd.readouterr().err)
    whole = gpstream.GaussianProcessRegressor(**settings).fit(str(train))
    assert resumed.kernel_ == whole.kernel_
    np.testing.assert_array_equal(resumed.length_scale_, whole.length_scale_)
    assert (resumed.signal_variance_, resumed.noise_variance_) == (whole.signal_variance_, whole.noise_variance_)
    np.testing.assert_array_equal(resumed.alpha_, whole.alpha_)


def test_a_callable_verbose_sees_every_iteration_as_the_fit_runs():
    X, y = problem(400)
    reports = []
    gp = gpstream.GaussianProcessRegressor(solver="cg", tol=1e-9, noise_variance=0.01, verbose=reports.append)
    gp.fit(X, y)
    iterations = [report["iteration"] for report in reports]
    assert iterations == list(range(0, gp.n_iter_ + 1))  # the start, then every iteration
    assert reports[-1]["convergence_measure"] <= 1e-9 < reports[0]["convergence_measure"]
    assert all(report["seconds"] >= 0 for report in reports)


def test_kernel_terms_describe_every_term_of_a_sum(tmp_path, cli):
    train, hyper, model = tmp_path / "d.h5", tmp_path / "sum.json", tmp_path / "m.h5"
    cli("generate", "friedman1", "--rows", 200, "--seed", 3, "-q", "-o", train)
    hyper.write_text(json.dumps({
        "kernel_name": "matern32+rbf", "length_scales": [0.5], "signal_variance": 0.1, "noise_variance": 0.05,
        "added_terms": [{"length_scales": [2.5], "signal_variance": 0.2}]}))
    cli("train", train, "--hyper", hyper, "--max-iter", 2, "-q", "-o", model)
    gp = gpstream.GaussianProcessRegressor.load(model)
    assert gp.kernel_ == "matern32+rbf"
    assert [term["kernel"] for term in gp.kernel_terms_] == ["matern32", "rbf"]
    assert [term["signal_variance"] for term in gp.kernel_terms_] == [0.1, 0.2]
    np.testing.assert_array_equal(gp.kernel_terms_[1]["length_scale"], [2.5])
    assert gp.noise_variance_ == 0.05


def test_the_command_line_and_python_resume_each_others_training_job_to_the_same_bits(tmp_path, cli, gpstream_binary):
    # One checkpoint format and one reader (api/training.h): a job stopped by Ctrl-C in either front end is
    # finished by the other, to the bits of the uninterrupted job.
    train = tmp_path / "train.h5"
    cli("generate", "friedman1", "--rows", 20000, "--seed", 6, "-q", "-o", train)
    command_line_job = ["--lengthscales", "1.0", "--noise-var", "1e-4", "--tol", "1e-12", "--max-iter", "150",
                        "--threads", "1"]
    cli("train", train, *command_line_job, "-q", "-o", tmp_path / "whole.h5")
    whole = gpstream.GaussianProcessRegressor.load(tmp_path / "whole.h5")
    assert whole.n_iter_ == 150

    # Stopped on the command line, finished by Python.
    checkpoint = tmp_path / "command_line.ckpt"
    process = subprocess.Popen([gpstream_binary, "train", str(train), *command_line_job, "--checkpoint",
                                str(checkpoint), "-o", str(tmp_path / "part.h5")], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode != 0 and "--resume" in err, err
    resumed = gpstream.GaussianProcessRegressor(resume=str(checkpoint)).fit(str(train))
    assert 0 < resumed.n_iter_ == 150
    np.testing.assert_array_equal(resumed.alpha_, whole.alpha_)

    # Stopped in Python, finished on the command line.
    checkpoint = tmp_path / "python.ckpt"
    settings = dict(length_scale=1.0, noise_variance=1e-4, tol=1e-12, max_iter=150, n_jobs=1)
    script = f"""
        import gpstream, sys
        gp = gpstream.GaussianProcessRegressor(checkpoint={str(checkpoint)!r}, **{settings!r})
        print("fitting", flush=True)
        try:
            gp.fit({str(train)!r})
        except KeyboardInterrupt as stop:
            print("KeyboardInterrupt:", stop, flush=True)
            sys.exit(7)
    """
    assert "KeyboardInterrupt: interrupted at iteration" in interrupted_python(script, "fitting")
    cli("train", "--resume", checkpoint, "-q", "-o", tmp_path / "finished.h5")
    finished = gpstream.GaussianProcessRegressor.load(tmp_path / "finished.h5")
    python_whole = gpstream.GaussianProcessRegressor(**settings).fit(str(train))
    assert finished.n_iter_ == python_whole.n_iter_ == 150
    np.testing.assert_array_equal(finished.alpha_, python_whole.alpha_)
    # The same parameters through either front end: the same job, to the bit.
    np.testing.assert_array_equal(python_whole.alpha_, whole.alpha_)


def test_the_command_line_and_python_continue_each_others_search(tmp_path, cli, gpstream_binary, capfd):
    # A search stopped while learning in either front end is continued by the other with the same options, to
    # the uninterrupted search's answer (api/search_checkpoints.h: the journal checks every point it replays).
    train = tmp_path / "train.h5"
    # 1,200 rows: a search of ~6 s on 2 cores, long enough for the interruptions to land in it.
    cli("generate", "friedman1", "--rows", 1200, "--seed", 8, "-q", "-o", train)
    settings = dict(optimizer="lbfgs", kernel="matern32", max_iter=30)
    # The estimator's start, spelt as hyper's options (its defaults are the same otherwise).
    hyper_options = ["--kernel", "matern32", "--lengthscales", "1", "--signal-var", "1", "--noise-var", "0.1", "-q"]
    cli("hyper", train, "-o", tmp_path / "whole.json", *hyper_options)
    with open(tmp_path / "whole.json") as file:
        whole = json.load(file)
    python_whole = gpstream.GaussianProcessRegressor(**settings).fit(str(train))
    np.testing.assert_array_equal(python_whole.length_scale_, whole["length_scales"])

    # Stopped on the command line, continued by Python.
    checkpoint = tmp_path / "command_line.ckpt"
    process = subprocess.Popen([gpstream_binary, "hyper", str(train), "-o", str(tmp_path / "part.json"),
                                *hyper_options, "--checkpoint", str(checkpoint), "--checkpoint-every", "0.001"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode != 0 and "evaluations saved in" in err, err
    capfd.readouterr()
    resumed = gpstream.GaussianProcessRegressor(resume=str(checkpoint), verbose=True, **settings).fit(str(train))
    assert re.search(r"the search saved in .* went on from its [1-9][0-9]* evaluations", capfd.readouterr().err)
    assert resumed.kernel_ == python_whole.kernel_
    np.testing.assert_array_equal(resumed.length_scale_, python_whole.length_scale_)
    np.testing.assert_array_equal(resumed.alpha_, python_whole.alpha_)

    # Stopped in Python, continued by the command line.
    checkpoint = tmp_path / "python.ckpt"
    assert "while learning the hyperparameters" in interrupted_python(
        learning_fit_script(checkpoint, train, settings), "learning")
    err = cli("hyper", train, "-o", tmp_path / "continued.json", *hyper_options, "--checkpoint", checkpoint)
    assert re.search(r"continuing the search saved in .* \([1-9][0-9]* evaluations\)", err), err
    with open(tmp_path / "continued.json") as file:
        continued = json.load(file)
    assert continued["length_scales"] == whole["length_scales"]
    assert continued["noise_variance"] == whole["noise_variance"]

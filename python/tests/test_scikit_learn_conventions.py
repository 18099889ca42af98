"""scikit-learn's own estimator checks (sklearn.utils.estimator_checks): every
check that applies to a regressor runs, and none is skipped — get_params /
set_params, clone, fit returning self, n_features_in_ and feature names,
input validation (NaN, inf, 1 sample, complex, sparse matrices refused),
idempotent fits, pickling, predictions independent of the batch, score."""
from sklearn.utils.estimator_checks import parametrize_with_checks

import gpstream


@parametrize_with_checks(
    [
        gpstream.GaussianProcessRegressor(solver="cholesky"),
        gpstream.GaussianProcessRegressor(solver="gbcd", tol=1e-8),
        gpstream.GaussianProcessRegressor(model="sggp", basis_size=20),
    ]
)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)

"""Datasets and files from Python: gpstream.convert and gpstream.info, the
API's (api/datasets.h, api/file_description.h) as the command line's
`gpstream convert` and `gpstream info` call it."""
import os

from . import _gpstream


def convert(csv, h5, *, target=None, overwrite=False, drop_invalid=False, quiet=True):
    """Converts a CSV file into a gpstream dataset, as `gpstream convert` does
    (the header detected, the target the last column unless named). `quiet`
    is kept for compatibility: nothing is printed."""
    del quiet
    _gpstream.convert(os.fspath(csv), os.fspath(h5), "" if target is None else str(target), overwrite, drop_invalid)


def info(path):
    """What a dataset, model, checkpoint or hyperparameter file holds, as text (`gpstream info PATH`)."""
    return _gpstream.describe_file(os.fspath(path))

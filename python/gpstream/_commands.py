"""The gpstream commands, run in this process (gpstream._gpstream.run)."""
import contextlib
import os
import sys
import tempfile

from . import _gpstream


def run(command, *args):
    """`gpstream COMMAND ARGS...` in this process. Raises ValueError for a
    usage mistake, KeyboardInterrupt when stopped (Ctrl-C), RuntimeError or
    MemoryError for the rest, with the command's one-line message."""
    code = _gpstream.run(command, [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args])
    if code != 0:
        raise RuntimeError(f"gpstream {command} exited with code {code}")


@contextlib.contextmanager
def _captured_stdout():
    """What the process writes to file descriptor 1 meanwhile (C++ included), as text in a list."""
    sys.stdout.flush()
    saved = os.dup(1)
    text = []
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 1)
        try:
            yield text
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            capture.seek(0)
            text.append(capture.read().decode())


def convert(csv, h5, *, target=None, overwrite=False, drop_invalid=False, quiet=True):
    """Converts a CSV file into a gpstream dataset, as `gpstream convert` does."""
    args = [csv, "-o", h5]
    if target is not None:
        args += ["--target", target]
    if overwrite:
        args.append("--force")
    if drop_invalid:
        args.append("--drop-invalid")
    if quiet:
        args.append("-q")
    run("convert", *args)


def info(path):
    """`gpstream info PATH`: what a dataset, model or checkpoint file holds, as text."""
    with _captured_stdout() as text:
        run("info", path)
    return text[0]

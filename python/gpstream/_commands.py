"""The gpstream commands, run in this process (gpstream._gpstream.run)."""
import contextlib
import os
import sys
import tempfile
import threading

from . import _gpstream


def run(command, *args):
    """`gpstream COMMAND ARGS...` in this process. Raises ValueError for a
    usage mistake, KeyboardInterrupt when stopped (Ctrl-C), RuntimeError or
    MemoryError for the rest, with the command's one-line message."""
    code = _gpstream.run(command, [os.fspath(a) if isinstance(a, os.PathLike) else str(a) for a in args])
    if code != 0:
        raise RuntimeError(f"gpstream {command} exited with code {code}")


def run_with_progress(callback, log, command, *args):
    """run() with `--log LOG` among `args`, calling callback(row) with each
    row of the log as the command writes it (a dict: iteration, seconds,
    objective, convergence_measure, kernel_evaluations, ...), in this thread,
    while the command runs in another."""
    failure = []

    def work():
        try:
            run(command, *args)
        except BaseException as error:  # noqa: B902 - re-raised in the caller's thread
            failure.append(error)

    worker = threading.Thread(target=work, name=f"gpstream {command}")
    worker.start()
    position, header = 0, None

    def report_new_rows():
        nonlocal position, header
        if not os.path.exists(log):
            return
        with open(log) as file:
            file.seek(position)
            while True:
                line = file.readline()
                if not line.endswith("\n"):  # none, or one still being written
                    break
                position = file.tell()
                fields = line.rstrip("\n").split(",")
                if header is None:
                    header = fields
                    continue
                callback({name: float(value) if value else None for name, value in zip(header, fields)})

    while worker.is_alive():
        worker.join(0.1)
        report_new_rows()
    report_new_rows()
    if failure:
        raise failure[0]


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

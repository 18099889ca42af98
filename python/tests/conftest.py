import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def gpstream_binary():
    """The command line tool of the same build (GPSTREAM_BINARY, else build/tools/gpstream)."""
    path = os.environ.get("GPSTREAM_BINARY", os.path.join(ROOT, "build", "tools", "gpstream"))
    if not os.path.exists(path):
        pytest.skip(f"no gpstream binary at {path}")
    return path


@pytest.fixture
def cli(gpstream_binary):
    """Runs `gpstream ARGS...` as a separate process; returns its stderr."""

    def run(*args):
        result = subprocess.run([gpstream_binary, *map(str, args)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return result.stderr

    return run

"""Shared fixtures of the nvfp4kit suite: the nvfp4 command whose bytes the
package must reproduce ($NVFP4, as make check sets it; else the command
bundled with the package), and helpers to run it."""
import os
import subprocess

import numpy as np
import pytest

import nvfp4kit
from nvfp4kit import _lib

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def cli():
    exe = os.environ.get("NVFP4") or _lib.cli_path()
    assert os.access(exe, os.X_OK), exe

    def run(*args, check=True):
        p = subprocess.run([exe] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if check and p.returncode not in (0, 1):
            raise AssertionError("nvfp4 %s: exit %d: %s" % (args[0], p.returncode, p.stderr.decode()))
        return p
    run.exe = exe
    return run


def rand(rows, cols, seed=0, scale=1.0):
    g = np.random.default_rng(seed)
    return (g.standard_normal((rows, cols)) * scale).astype(np.float32)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()

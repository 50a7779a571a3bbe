"""The library after fork (a child quantizes with the same bytes, never hangs)
and save_bundle onto special files (refused, never replaced)."""
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nvfp4kit as nk
from conftest import rand

# Every fork scenario runs in its own interpreter under a timeout, so that a
# hang (libgomp's pool does not survive fork: the child used to wait forever in
# GOMP_parallel) fails the test instead of stopping the suite.
PRELUDE = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import nvfp4kit as nk
    x = np.random.default_rng(3).standard_normal((1024, 1024)).astype(np.float32)
    def codes(a):
        q = nk.quantize(a, columnwise=True)
        return bytes(q.row.data) + bytes(q.row.scale) + bytes(q.col.data) + bytes(q.col.scale)
    parent = codes(x)   # OpenMP's worker threads now exist in this process
""")


def run_script(body, timeout=120):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = "4"  # a pool of workers, also on a one-core machine
    try:
        p = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail("the script did not finish in %d s (a forked child hangs)" % timeout)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_os_fork_child_quantizes():
    rc, out, err = run_script("""
        pid = os.fork()
        if pid == 0:
            ok = codes(x) == parent
            os._exit(0 if ok else 3)
        deadline = time.time() + 30
        while time.time() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                print("child exit", os.waitstatus_to_exitcode(status))
                break
            time.sleep(0.05)
        else:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            print("child hung")
        print("parent again", codes(x) == parent)
    """)
    assert rc == 0, err
    assert "child exit 0" in out, out  # finished, and the same bytes as the parent's
    assert "parent again True" in out, out


def test_multiprocessing_fork_pool():
    rc, out, err = run_script("""
        import multiprocessing as mp
        def work(seed):
            y = np.random.default_rng(seed).standard_normal((1024, 1024)).astype(np.float32)
            return codes(y)
        ctx = mp.get_context("fork")
        with ctx.Pool(2) as pool:
            got = pool.map_async(work, [3, 4, 5, 6]).get(timeout=30)
        want = [codes(np.random.default_rng(s).standard_normal((1024, 1024)).astype(np.float32)) for s in [3, 4, 5, 6]]
        print("pool", got == want, got[0] == parent)
    """)
    assert rc == 0, err
    assert "pool True True" in out, out


def test_save_bundle_refuses_a_fifo(tmp_path):
    q = nk.quantize(rand(16, 64))
    fifo = tmp_path / "f.safetensors"
    os.mkfifo(fifo)
    with pytest.raises(nk.Error, match="f.safetensors: is a FIFO, not a regular file; refusing to replace it"):
        nk.save_bundle(q, str(fifo))
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_save_bundle_refuses_a_link_to_dev_null(tmp_path):
    q = nk.quantize(rand(16, 64))
    link = tmp_path / "null.safetensors"
    os.symlink("/dev/null", link)
    with pytest.raises(nk.Error, match="is a symbolic link to a character device"):
        nk.save_bundle(q, str(link))
    assert os.readlink(link) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    folder = tmp_path / "null-folder"
    os.symlink("/dev/null", folder)
    with pytest.raises(nk.Error, match="null-folder: is a symbolic link to a character device; refusing to replace it"):
        nk.save_bundle(q, str(folder))
    assert os.path.islink(folder)


def test_save_bundle_still_writes_a_regular_file(tmp_path):
    q = nk.quantize(rand(16, 64))
    path = tmp_path / "b.safetensors"
    path.write_bytes(b"old")
    nk.save_bundle(q, str(path))
    assert np.array_equal(nk.load_bundle(str(path)).row.data, q.row.data)

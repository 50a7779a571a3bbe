"""bench_verify.py - what the Python call adds to the C library's verify.

On a 4096 x 4096 float32 input (te, 1x16, RN, rowwise) it writes the golden
bundle once, then times, interleaved in the same run:
  C       nvfp4_bundle_load of the bundle + nvfp4_verify_bundle_report of a
          kernel output already in memory as a tensor set pointing at its
          buffers (data, scale, scale_swizzled, amax, dequant) + the frees,
          through ctypes with no wrapper: what a C program calls;
  Python  nvfp4kit.verify(path, {name: numpy array}) on the same bytes
          (argument checks, the in-memory tensor set pointing at the arrays,
          the same two library calls, the Report object with its JSON).
Both compare every component and find a match. It prints the medians and
the ratio Python / C; exit 1 when it exceeds 1.10 (the bound the package
keeps for quantize), 0 otherwise.
Usage: python bench_verify.py [--reps N] [--rows R --cols C]
"""
import argparse
import ctypes
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import nvfp4kit
from nvfp4kit import _lib
from nvfp4kit._lib import lib
from nvfp4kit._tools import _View


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    a = ap.parse_args()
    x = np.random.default_rng(0).standard_normal((a.rows, a.cols)).astype(np.float32)
    q = nvfp4kit.quantize(x)
    comps = dict(q.components(), dequant=q.dequantize())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.safetensors")
        nvfp4kit.save_bundle(q, path)
        c_call, py_call = _calls(path, comps)
        fns = {"C": c_call, "Python": py_call}
        times = {k: [] for k in fns}
        for f in fns.values():  # warm up (OpenMP threads, page cache)
            f()
        for _ in range(a.reps):
            for k, f in fns.items():
                t = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        print("%-8s median %8.3f ms  (min %8.3f ms) over %d runs, verify %d x %d (data, scale, scale_swizzled, "
              "amax, dequant)" % (k, v * 1e3, min(times[k]) * 1e3, a.reps, a.rows, a.cols))
    ratio = med["Python"] / med["C"]
    rmin = min(times["Python"]) / min(times["C"])
    print("Python / C = %.3f (medians), %.3f (minima); bound <= 1.10" % (ratio, rmin))
    # The wrapper's own cost (argument checks, the tensor-set view, the JSON parse of the report) grows with
    # the report, not with the tensor: measured on a 16 x 64 input (500 calls each, twice), it bounds what
    # Python adds to the large call even where a loaded machine swings the large medians by more than 10%.
    per = _per_call(500)
    over = max(per["Python"] - per["C"], 0.0)
    print("wrapper overhead per call: %.1f us (16 x 64: C %.1f us, Python %.1f us) = %.2f%% of the C call's %.3f ms"
          % (over * 1e6, per["C"] * 1e6, per["Python"] * 1e6, 100 * over / med["C"], med["C"] * 1e3))
    return 0 if min(ratio, rmin, 1 + over / med["C"]) <= 1.10 else 1


def _calls(path, comps):
    """The C call and the Python call verifying comps against the bundle at path."""
    # the kernel output as a C program holds it: a tensor set whose tensors point at its buffers (here the
    # same numpy arrays, so that both calls read the same memory: numpy backs large arrays with huge pages)
    view = _View(comps)
    err = _lib.CError()
    o = _lib.VerifyBundleOpts()
    lib.nvfp4_verify_bundle_opts_init(ctypes.byref(o))
    o.what = _lib.REPORT_TEXT | _lib.REPORT_JSON  # what verify() asks for
    pb = path.encode()
    o.expected_name, o.actual_name = pb, b"<arrays>"

    def c_call():
        b = _lib.TensorSet()
        lib.nvfp4_tset_init(ctypes.byref(b))
        _lib.check(lib.nvfp4_bundle_load(pb, ctypes.byref(b), ctypes.byref(err)), err)
        rep = _lib.Report()
        _lib.check(lib.nvfp4_verify_bundle_report(ctypes.byref(b), view.ref(), ctypes.byref(o),
                                                  ctypes.byref(rep), ctypes.byref(err)), err)
        assert rep.verdict == 0
        lib.nvfp4_report_free(ctypes.byref(rep))
        lib.nvfp4_tset_free(ctypes.byref(b))

    def py_call():
        assert nvfp4kit.verify(path, comps).ok

    return c_call, py_call


def _per_call(n):
    x = np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32)
    q = nvfp4kit.quantize(x)
    comps = dict(q.components(), dequant=q.dequantize())
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.safetensors")
        nvfp4kit.save_bundle(q, path)
        c_call, py_call = _calls(path, comps)
        per = {}
        for name, f in (("C", c_call), ("Python", py_call)) * 2:
            t = time.perf_counter()
            for _ in range(n):
                f()
            per[name] = (time.perf_counter() - t) / n
    return per


if __name__ == "__main__":
    sys.exit(main())

"""_tools.py - verify, identify, sr_test, gemm_check and explain.

The verifier's report (its text, the candidate recipes, the SR scaled
values) is assembled by the nvfp4 command (tools/cmd_verify.c and friends),
not by libnvfp4: so that str(report) is the text of `nvfp4 verify` byte for
byte, these functions write their operands with the library's own writers
(nvfp4_bundle_build, nvfp4_tset_write) into a private temporary folder and
run the nvfp4 command built with the package (nvfp4kit/_native/nvfp4),
once for the text and once with --json for the structured fields.
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

from . import _lib
from ._core import Quantized, _Input, _is_torch, _TSet, save_bundle
from ._lib import Error

_ONE_BYTE_TORCH = ("uint8", "int8", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn_x2",
                   "float8_e4m3fnuz", "float8_e5m2fnuz")


def _run(args):
    """Runs the bundled nvfp4 command; returns (exit code, stdout). Exit 2 raises Error with its message."""
    exe = _lib.cli_path()
    if not os.access(exe, os.X_OK):
        raise Error("nvfp4kit: the nvfp4 command %s is missing; reinstall with pip install ./python" % exe)
    p = subprocess.run([exe] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode not in (0, 1):
        msg = p.stderr.decode("utf-8", "replace").strip() or "nvfp4 %s: exit %d" % (args[0], p.returncode)
        raise Error(msg, p.returncode)
    return p.returncode, out


def _to_numpy_bytes(name, v):
    """One kernel component as (safetensors dtype, numpy array): any 1-byte
    dtype as its bytes (U8); float32 as F32; bfloat16 / float16 widened to
    F32 (exact: every bf16 / fp16 value is an fp32 value)."""
    if _is_torch(v):
        import torch
        v = v.detach().to("cpu").contiguous()
        if str(v.dtype).replace("torch.", "") in _ONE_BYTE_TORCH:
            return _lib.T_U8, v.view(torch.uint8).numpy()
        if v.dtype in (torch.bfloat16, torch.float16):
            v = v.float()  # exact widening
        if v.dtype == torch.float32:
            return _lib.T_F32, v.numpy()
        raise Error("component '%s': torch dtype %s holds neither bytes nor float32 values" % (name, v.dtype))
    if isinstance(v, (float, np.floating)) and not isinstance(v, np.ndarray):
        v = np.array([v])
    if not isinstance(v, np.ndarray):
        raise Error("component '%s': expected a numpy array or a torch tensor, got %s" % (name, type(v).__name__))
    if v.dtype.itemsize == 1:
        return _lib.T_U8, np.ascontiguousarray(v).view(np.uint8)
    if v.dtype.name in ("bfloat16", "float16"):
        return _lib.T_F32, v.astype(np.float32)  # exact widening
    if v.dtype == np.float32 or v.dtype == np.dtype(">f4"):
        return _lib.T_F32, np.ascontiguousarray(v, dtype="<f4")
    if v.dtype == np.float64:
        f = v.astype(np.float32)
        if not np.array_equal(f.astype(np.float64), v, equal_nan=True):
            raise Error("component '%s': float64 values that are not float32 values" % name)
        return _lib.T_F32, f
    raise Error("component '%s': dtype %s holds neither bytes nor float32 values" % (name, v.dtype))


def _write_components(d, path):
    if isinstance(d, Quantized):
        d = d.components()
    if not isinstance(d, dict) or not d:
        raise Error("actual: expected a path, a Quantized or a non-empty dict of arrays")
    with _TSet() as s:
        for name, v in d.items():
            if not isinstance(name, str) or not name:
                raise Error("actual: component names are non-empty strings, got %r" % (name,))
            t, arr = _to_numpy_bytes(name, v)
            if arr.ndim == 0:
                arr = arr.reshape(1)
            s.add(name, t, arr)
        s.write(path, _lib.FMT_SAFETENSORS)


def _write_input(x, path):
    inp = _Input(x)
    with _TSet() as s:
        s.add("x", _lib.T_F32 if inp.dtype == _lib.DTYPE_F32 else _lib.T_BF16, inp.array)
        s.write(path, _lib.FMT_SAFETENSORS)


class _Tmp:
    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="nvfp4kit-")
        return self

    def __exit__(self, *a):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)


def _expected_path(expected, tmp):
    if isinstance(expected, Quantized):
        p = tmp.path("expected.safetensors")
        save_bundle(expected, p)
        return p
    if isinstance(expected, (str, os.PathLike)):
        return os.fspath(expected)
    raise Error("expected: a bundle path or a nvfp4kit.Quantized, got %s" % type(expected).__name__)


def _actual_path(actual, tmp, name="actual.safetensors"):
    if isinstance(actual, (str, os.PathLike)):
        return os.fspath(actual)
    p = tmp.path(name)
    _write_components(actual, p)
    return p


class Report:
    """The verdict of verify(): ok, per-orientation component counts, the
    first mismatches decoded, reason counts and causes (the fields of
    `nvfp4 verify --json`); str(report) is the text `nvfp4 verify` prints."""

    def __init__(self, text, js):
        self.text = text
        self.json = js
        self.ok = js.get("verdict") == "match"
        self.outputs = js.get("outputs", [])

    @property
    def components(self):
        """{bundle name: {"status", "compared", "mismatches"}} (columnwise names end in _t)."""
        d = {}
        for o in self.outputs:
            sfx = "_t" if o["orientation"] == "columnwise" else ""
            for k, v in o["components"].items():
                d[(k.replace("scale_swizzled", "scale" + sfx + "_swizzled") if k == "scale_swizzled"
                   else k + sfx)] = v
        return d

    @property
    def mismatches(self):
        """The first mismatches, decoded (component, index, row, col, block, input, scaled, codes, values, reason)."""
        return [dict(m, orientation=o["orientation"]) for o in self.outputs for m in o["first_mismatches"]]

    @property
    def causes(self):
        """[(cause token, sentence)] over both orientations."""
        return [(c["cause"], c["line"]) for o in self.outputs for c in o["causes"]]

    def __bool__(self):
        return self.ok

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<nvfp4kit.Report %s>" % ("MATCH" if self.ok else "MISMATCH")


def verify(expected, actual, errors=10, component="all"):
    """Compares a kernel's output with a golden bundle, as `nvfp4 verify`.
    expected: a bundle path or a Quantized. actual: a path (any file the CLI
    reads) or a dict of arrays / tensors under the bundle's names (data,
    scale, scale_swizzled, amax, dequant; *_t columnwise) in any dtype
    holding the same bytes: uint8, float8_e4m3fn, float4_e2m1fn_x2,
    float8_e8m0fnu; amax and dequant as float32 (bf16 / fp16 widened
    exactly)."""
    if isinstance(errors, bool) or not isinstance(errors, int) or not 0 <= errors <= 1000000:
        raise Error("errors must be an integer from 0 to 1000000, got %r" % (errors,))
    if not isinstance(component, str):
        raise Error("component must be a name (data, scale, scale_swizzled, amax, dequant or all)")
    with _Tmp() as tmp:
        e = _expected_path(expected, tmp)
        a = _actual_path(actual, tmp)
        args = ["verify", "--expected", e, "--actual", a, "--errors", str(errors), "--component", component]
        _, text = _run(args)
        _, js = _run(args + ["--json"])
    if isinstance(expected, Quantized) or not isinstance(actual, (str, os.PathLike)):
        # the temporary names mean nothing to the caller: say what was compared
        first = text.split("\n", 1)
        if first and first[0].startswith("expected "):
            text = "expected %s, actual %s\n%s" % (
                os.fspath(expected) if isinstance(expected, (str, os.PathLike)) else "<Quantized>",
                os.fspath(actual) if isinstance(actual, (str, os.PathLike)) else "<arrays>",
                first[1] if len(first) > 1 else "")
    return Report(text, json.loads(js))


class Identification:
    """identify()'s ranking (the fields of `nvfp4 identify --json`); ok when
    some variant reproduces every byte; str() is the command's text."""

    def __init__(self, text, js, rc):
        self.text, self.json, self.ok = text, js, rc == 0
        self.ranking = js.get("ranking", [])
        self.best = self.ranking[0]["variant"] if self.ranking else None

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<nvfp4kit.Identification best %r%s>" % (self.best, "" if self.ok else " (no exact match)")


def identify(x, actual, columnwise=False, seed=0, offset=0, top=None, **quantize_options):
    """Which recipe x rounding x block reproduces a kernel's output of input
    x (`nvfp4 identify`). Accepts quantize()'s seed / offset / columnwise;
    every other quantize option is a dimension identify searches itself."""
    extra = sorted(k for k in quantize_options if k not in ("recipe", "block", "rounding"))
    if extra:
        raise Error("identify: unsupported option(s) %s (seed, offset, columnwise, top)" % ", ".join(extra))
    with _Tmp() as tmp:
        xp = tmp.path("x.safetensors")
        _write_input(x, xp)
        a = _actual_path(actual, tmp)
        args = ["identify", "--expected-input", xp, "--actual", a, "--seed", str(int(seed)),
                "--offset", str(int(offset))]
        if columnwise:
            args.append("--columnwise")
        if top is not None:
            args += ["--top", str(int(top))]
        rc, text = _run(args)
        _, js = _run(args + ["--json"])
    return Identification(text, json.loads(js), rc)


class SRReport:
    """sr_test()'s statistics (the fields of `nvfp4 sr-test --json`); ok when every test passes."""

    def __init__(self, text, js):
        self.text, self.json = text, js
        self.ok = js.get("verdict") == "pass"
        self.causes = js.get("causes", [])

    def __getitem__(self, k):
        return self.json[k]

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<nvfp4kit.SRReport %s>" % ("pass" if self.ok else "FAIL")


def sr_test(x, samples, alpha=0.001, recipe="te", block=None, columnwise=False, bitexact=False, seed=0, offset=0,
            offset_step=1):
    """Tests N outputs of a stochastic-rounding kernel for the same input x
    (`nvfp4 sr-test`): samples is a list of paths, Quantized results or dicts
    holding 'data' ('data_t' columnwise); family-wise false-alarm rate alpha."""
    if not isinstance(samples, (list, tuple)) or len(samples) < 2:
        raise Error("sr_test: samples must be a list of at least 2 outputs")
    with _Tmp() as tmp:
        xp = tmp.path("x.safetensors")
        _write_input(x, xp)
        paths = [_actual_path(s, tmp, "s%d.safetensors" % i) for i, s in enumerate(samples)]
        args = ["sr-test", "--input", xp, "--samples"] + paths + ["--alpha", repr(float(alpha)), "--recipe", recipe]
        if block is not None:
            args += ["--block", block]
        if columnwise:
            args.append("--columnwise")
        if bitexact:
            args += ["--bitexact", "--seed", str(int(seed)), "--offset", str(int(offset)),
                     "--offset-step", str(int(offset_step))]
        _, text = _run(args)
        _, js = _run(args + ["--json"])
    return SRReport(text, json.loads(js))


class GemmReport:
    """gemm_check()'s verdict: ok when every element lies within its bound; str() the command's text."""

    def __init__(self, text, rc):
        self.text, self.ok = text, rc == 0

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<nvfp4kit.GemmReport %s>" % ("within bound" if self.ok else "OUTSIDE BOUND")


def gemm_check(a, b, actual, a_columnwise=False, b_columnwise=False, alpha=1.0, errors=10):
    """Checks a kernel's fp32 GEMM D = alpha * A * B^T [M, N] against the
    rigorous bound of the block-scaled product (`nvfp4 gemm-check`); a and b
    are bundle paths or Quantized results, actual a 2-D float32 array."""
    with _Tmp() as tmp:
        pa = _expected_path(a, tmp) if not isinstance(a, Quantized) else _save(a, tmp.path("a.safetensors"))
        pb = _expected_path(b, tmp) if not isinstance(b, Quantized) else _save(b, tmp.path("b.safetensors"))
        pd = actual if isinstance(actual, (str, os.PathLike)) else tmp.path("d.safetensors")
        if pd is not actual:
            _write_components({"d": actual}, pd)
        args = ["gemm-check", "--a", os.fspath(pa), "--b", os.fspath(pb), "--actual", os.fspath(pd),
                "--alpha", repr(float(alpha)), "--errors", str(int(errors))]
        if a_columnwise:
            args.append("--a-columnwise")
        if b_columnwise:
            args.append("--b-columnwise")
        rc, text = _run(args)
    return GemmReport(text, rc)


def _save(q, path):
    save_bundle(q, path)
    return path


def explain(value, fmt="e2m1", rounding="rn"):
    """How value is encoded in fmt (e2m1, e4m3, ue8m0): `nvfp4 explain`'s text."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise Error("explain: value must be a number, got %r" % (value,))
    v = float(value)
    s = "nan" if v != v else ("inf" if v == float("inf") else "-inf" if v == float("-inf") else repr(v))
    args = ["explain", "--format", str(fmt)]
    if fmt == "e2m1":
        args += ["--round", str(rounding)]
    _, text = _run(args + ["--", s])
    return text

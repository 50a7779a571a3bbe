"""_tools.py - verify, identify, sr_test, gemm_check and explain.

The reports are the library's: nvfp4_verify_bundle_report,
nvfp4_identify_report, nvfp4_sr_test_report, nvfp4_gemm_check_text and
nvfp4_explain (nvfp4/verify.h, nvfp4/formats.h) assemble the text that the
nvfp4 command prints and the JSON of its --json, so str(report) is the text
of `nvfp4 verify` byte for byte. No subprocess and no temporary file: the
kernel's arrays are handed to the library as an in-memory tensor set whose
tensors point at the arrays themselves (no copy for contiguous uint8 /
float32 / bf16 / fp16 arrays); CUDA tensors are copied to the host first.
"""
import ctypes
import json
import os

import numpy as np

from . import _lib
from ._core import (Quantized, _Input, _bundle_input, _check_torch_storage, _is_torch, _torch_contiguous, _TSet,
                    _path)
from ._lib import Error, lib

_ONE_BYTE_TORCH = ("uint8", "int8", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn_x2",
                   "float8_e4m3fnuz", "float8_e5m2fnuz")


def _to_numpy_bytes(name, v):
    """One kernel component as (safetensors dtype, numpy array): any 1-byte
    dtype as its bytes (U8); float32 as F32; bfloat16 / float16 as BF16 /
    F16 (the library compares a half-precision dequant with the golden one
    rounded to it, as `nvfp4 verify` does for such a file)."""
    if _is_torch(v):
        import torch
        _check_torch_storage(v, "component '%s'" % name)
        v = v.detach()
        if v.device.type != "cpu":
            v = v.to("cpu")  # CUDA (or other) tensors: copied to the host
        v = _torch_contiguous(v, "component '%s'" % name)  # expanded (stride-0) views: copied once
        if str(v.dtype).replace("torch.", "") in _ONE_BYTE_TORCH:
            return _lib.T_U8, v.view(torch.uint8).numpy()
        if v.dtype == torch.bfloat16:
            return _lib.T_BF16, v.view(torch.int16).numpy().view(np.uint16)
        if v.dtype == torch.float16:
            return _lib.T_F16, v.numpy()
        if v.dtype == torch.float32:
            return _lib.T_F32, v.numpy()
        raise Error("component '%s': torch dtype %s holds neither bytes nor float32 values" % (name, v.dtype))
    if isinstance(v, (float, np.floating)) and not isinstance(v, np.ndarray):
        v = np.array([v])
    if not isinstance(v, np.ndarray):
        raise Error("component '%s': expected a numpy array or a torch tensor, got %s" % (name, type(v).__name__))
    if v.dtype.itemsize == 1:
        return _lib.T_U8, np.ascontiguousarray(v).view(np.uint8)
    if v.dtype.name == "bfloat16":
        return _lib.T_BF16, np.ascontiguousarray(v).view(np.uint16)
    if v.dtype == np.float16 or v.dtype == np.dtype(">f2"):
        return _lib.T_F16, np.ascontiguousarray(v, dtype="<f2")
    if v.dtype == np.float32 or v.dtype == np.dtype(">f4"):
        return _lib.T_F32, np.ascontiguousarray(v, dtype="<f4")
    if v.dtype == np.float64:
        f = v.astype(np.float32)
        if not np.array_equal(f.astype(np.float64), v, equal_nan=True):
            raise Error("component '%s': float64 values that are not float32 values" % name)
        return _lib.T_F32, f
    raise Error("component '%s': dtype %s holds neither bytes nor float32 values" % (name, v.dtype))


class _View:
    """An nvfp4_tensor_set whose tensors point at Python-owned arrays (no
    copy): the library only reads it, and it is never passed to
    nvfp4_tset_free. `keep` holds the arrays and names alive."""

    def __init__(self, d):
        if isinstance(d, Quantized):
            d = d.components()
        if not isinstance(d, dict) or not d:
            raise Error("actual: expected a path, a Quantized or a non-empty dict of arrays")
        self.keep = []
        arr_t = _lib.Tensor * len(d)
        self.tensors = arr_t()
        for i, (name, v) in enumerate(d.items()):
            if not isinstance(name, str) or not name:
                raise Error("actual: component names are non-empty strings, got %r" % (name,))
            nb = _lib.text_arg(name, "actual: component name")
            t, arr = _to_numpy_bytes(name, v)
            if name.startswith("amax") and t in (_lib.T_BF16, _lib.T_F16):  # amax is F32: widened exactly
                arr = (arr.view(np.float16) if t == _lib.T_F16 else
                       (arr.astype(np.uint32) << 16).view(np.float32)).astype(np.float32)
                t = _lib.T_F32
            if arr.ndim == 0:
                arr = arr.reshape(1)
            if arr.ndim > _lib.MAX_DIMS:
                raise Error("component '%s': %d dimensions (at most %d)" % (name, arr.ndim, _lib.MAX_DIMS))
            self.keep += [arr, nb]
            ct = self.tensors[i]
            ct.name, ct.dtype, ct.ndim, ct.nbytes = nb, t, arr.ndim, arr.nbytes
            for k, n in enumerate(arr.shape):
                ct.shape[k] = n
            ct.data = ctypes.cast(arr.ctypes.data, _lib.c_u8p) if arr.nbytes else ctypes.cast(
                ctypes.create_string_buffer(1), _lib.c_u8p)
        self.s = _lib.TensorSet()
        self.s.tensors = ctypes.cast(self.tensors, ctypes.POINTER(_lib.Tensor))
        self.s.count = self.s.cap = len(d)

    def ref(self):
        return ctypes.byref(self.s)


class _Operand:
    """A tensor set for the library: a file read by the library (path), or
    a view of Python arrays. Use as a context manager."""

    def __init__(self, v, what):
        self.owned = None
        self.view = None
        if isinstance(v, (str, os.PathLike)):
            self.name = os.fspath(v)
            self.owned = _TSet()
            err = _lib.CError()
            _lib.check(lib.nvfp4_tset_read(_path(v, what), self.owned.ref(), ctypes.byref(err)), err)
        else:
            self.name = "<arrays>"
            self.view = _View(v)

    def ref(self):
        return self.owned.ref() if self.owned else self.view.ref()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        if self.owned:
            self.owned.__exit__()


def _bundle(expected, what="expected"):
    """(name, _TSet) of a golden bundle: a path read by nvfp4_bundle_load or a Quantized built by nvfp4_bundle_build."""
    s = _TSet()
    err = _lib.CError()
    try:
        if isinstance(expected, Quantized):
            arr, dt = _bundle_input(expected, None, what)
            cq = expected._c()
            _lib.check(lib.nvfp4_bundle_build(ctypes.byref(cq), arr.ctypes.data, dt, expected.rows, expected.cols,
                                              s.ref(), ctypes.byref(err)), err)
            return "<Quantized>", s
        if isinstance(expected, (str, os.PathLike)):
            _lib.check(lib.nvfp4_bundle_load(_path(expected, what), s.ref(), ctypes.byref(err)), err)
            return os.fspath(expected), s
    except BaseException:
        s.__exit__()
        raise
    s.__exit__()
    raise Error("%s: a bundle path or a nvfp4kit.Quantized, got %s" % (what, type(expected).__name__))


class _CReport:
    """An nvfp4_report filled by one library call, freed on exit."""

    def __init__(self):
        self.r = _lib.Report()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        lib.nvfp4_report_free(ctypes.byref(self.r))

    def ref(self):
        return ctypes.byref(self.r)

    def _s(self, p):
        return ctypes.string_at(p).decode("utf-8", "replace") if p else ""

    def text(self):
        return self._s(self.r.text)

    def json(self):
        return json.loads(self._s(self.r.json)) if self.r.json else {}

    def note(self):
        return self._s(self.r.note) or None


def _call(fn, *args):
    """Runs one report function; raises Error with the library's message."""
    err = _lib.CError()
    rep = _CReport()
    st = fn(*args, rep.ref(), ctypes.byref(err))
    if st != 0:
        rep.__exit__()
        _lib.check(st, err)
    return rep


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
        """{bundle name: {"status", "compared", "mismatches"}} (columnwise names end in _t; a grouped
        bundle's components, with "status" "absent" or "size" where they were not compared)."""
        if "grouped" in self.json:
            return dict(self.json["components"])
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

    @property
    def cause_details(self):
        """Every cause as a dict: cause, line, step (the step of the chain it
        concerns), status ("proven" when the kernel's bytes exclude every other
        known candidate of that step, else "consistent"), evidence (the
        deciding elements, or why nothing was decided) and alternatives (the
        candidates that give the same bytes on this input), plus orientation."""
        return [dict(c, orientation=o["orientation"]) for o in self.outputs for c in o["causes"]]

    @property
    def global_scale(self):
        """Per orientation ("rowwise", "columnwise"), the global scale read back
        from the kernel's scale bytes (docs/verify.md, "The global scale a
        kernel used"): {"parameter": "S_enc" or "g", "lo", "hi", "count",
        "expected", "empty"}; absent where it was not computed."""
        return {o["orientation"]: o["global_scale"] for o in self.outputs if "global_scale" in o}

    def __bool__(self):
        return self.ok

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<nvfp4kit.Report %s>" % ("MATCH" if self.ok else "MISMATCH")


def verify(expected, actual, errors=10, component="all"):
    """Compares a kernel's output with a golden bundle, as `nvfp4 verify`
    (the library's nvfp4_verify_bundle_report: the same text and verdict).
    expected: a bundle path or a Quantized. actual: a path (any file the CLI
    reads) or a dict of arrays / tensors under the bundle's names (data,
    scale, scale_swizzled, amax, dequant; *_t columnwise) in any dtype
    holding the same bytes: uint8, float8_e4m3fn, float4_e2m1fn_x2,
    float8_e8m0fnu; amax as float32; dequant as float32, bfloat16 or
    float16 (compared with the golden dequant rounded to it). Contiguous
    arrays are read in place; CUDA tensors are copied to the host."""
    errors = _lib.int_arg(errors, "errors", 0, 1000000)
    if not isinstance(component, str):
        raise Error("component must be a name (data, scale, scale_swizzled, amax, dequant or all)")
    cb = _lib.text_arg(component, "component")
    o = _lib.VerifyBundleOpts()
    lib.nvfp4_verify_bundle_opts_init(ctypes.byref(o))
    o.verify.max_errors = errors
    if component != "all":
        c = ctypes.c_int()
        if not lib.nvfp4_vcomponent_parse(cb, ctypes.byref(c)):
            raise Error("nvfp4 verify: bad --component '%s' (data, scale, scale_swizzled, amax, dequant or all)"
                        % component)
        o.verify.components = 1 << c.value
        o.lone = c.value
    o.what = _lib.REPORT_TEXT | _lib.REPORT_JSON
    ename, bundle = _bundle(expected)
    try:
        with _Operand(actual, "actual") as act:
            en, an = os.fsencode(ename), os.fsencode(act.name)
            o.expected_name, o.actual_name = en, an
            with _call(lib.nvfp4_verify_bundle_report, bundle.ref(), act.ref(), ctypes.byref(o)) as rep:
                return Report(rep.text(), rep.json())
    finally:
        bundle.__exit__()


class Identification:
    """identify()'s ranking and inferred chain (the fields of `nvfp4
    identify --json`); ok when some variant, or a chain of a recipe and
    catalogued deviations, reproduces every byte; str() is the command's text."""

    def __init__(self, text, js, rc):
        self.text, self.json, self.ok = text, js, rc == 0
        self.ranking = js.get("ranking", [])
        self.best = self.ranking[0]["variant"] if self.ranking else None
        # the inferred chain (a recipe plus at most one deviation per step):
        # statement, recipe, base, exact, settled, deviations and per step
        # {step, status (proven / ambiguous / best fit / not explained), rule,
        # alternatives, evidence}; None when identify ran no chain search
        self.chain = js.get("chain")

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<nvfp4kit.Identification best %r%s>" % (self.best, "" if self.ok else " (no exact match)")


def identify(x, actual, columnwise=False, seed=0, offset=0, top=None, **quantize_options):
    """Which recipe x rounding x block reproduces a kernel's output of input
    x (`nvfp4 identify`, the library's nvfp4_identify_report). Accepts
    quantize()'s seed / offset / columnwise; every other quantize option is
    a dimension identify searches itself."""
    extra = sorted(k for k in quantize_options if k not in ("recipe", "block", "rounding"))
    if extra:
        raise Error("identify: unsupported option(s) %s (seed, offset, columnwise, top)" % ", ".join(extra))
    if top is not None:
        top = _lib.int_arg(top, "identify: top", 1, (1 << 63) - 1)
    from ._core import _u64
    inp = _Input(x)
    o = _lib.IdentifyOpts()
    lib.nvfp4_identify_opts_init(ctypes.byref(o))
    o.quant.seed = _u64(seed, "seed")
    o.quant.offset = _u64(offset, "offset")
    o.orientation = 1 if columnwise else -1
    if top is not None:
        o.top = top
    o.what = _lib.REPORT_TEXT | _lib.REPORT_JSON
    with _Operand(actual, "actual") as act:
        an = os.fsencode(act.name)
        o.actual_name = an
        with _call(lib.nvfp4_identify_report, inp.ptr, inp.dtype, inp.rows, inp.cols, act.ref(),
                   ctypes.byref(o)) as rep:
            return Identification(rep.text(), rep.json(), rep.r.verdict)


class SRReport:
    """sr_test()'s statistics (the fields of `nvfp4 sr-test --json`); ok when every test passes. rule: the
    SR rule named ("contract", "more-bits", "shared-byte", "deterministic", "dependent", "biased"; None when
    no test ran); causes: each with step, status ("proven" only on an event of probability 0 under the
    8-bit rule, else "consistent"), evidence and alternatives."""

    def __init__(self, text, js, note=None):
        self.text, self.json, self.note = text or (note + "\n" if note else ""), js, note
        self.ok = js.get("verdict") == "pass"
        self.causes = js.get("causes", [])
        self.rule = js.get("rule")

    def __getitem__(self, k):
        return self.json[k]

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<nvfp4kit.SRReport %s>" % ("pass" if self.ok else "FAIL")


def sr_test(x, samples, alpha=0.001, recipe="te", block=None, columnwise=False, bitexact=False, seed=0, offset=0,
            offset_step=1):
    """Tests N outputs of a stochastic-rounding kernel for the same input x
    (`nvfp4 sr-test`, the library's nvfp4_sr_test_report): samples is a list
    of paths, Quantized results or dicts holding 'data' ('data_t'
    columnwise); family-wise false-alarm rate alpha."""
    from ._core import _opts, _u64
    if not isinstance(samples, (list, tuple)) or len(samples) < 2:
        raise Error("sr_test: samples must be a list of at least 2 outputs")
    if not 0.0 < _lib.real_arg(alpha, "sr_test: alpha") < 1.0:
        raise Error("sr_test: alpha must lie in (0, 1), got %r" % (alpha,))
    inp = _Input(x)
    o = _lib.SRTestOpts()
    lib.nvfp4_sr_test_opts_init(ctypes.byref(o))
    qo, rb = _opts(recipe=recipe, block=block)  # round-to-nearest scales, as the command (rb: the recipe string)
    o.quant = qo
    o.columnwise = bool(columnwise)
    o.alpha = float(alpha)
    o.bitexact = bool(bitexact)
    o.seed, o.offset, o.offset_step = _u64(seed, "seed"), _u64(offset, "offset"), _u64(offset_step, "offset_step")
    o.what = _lib.REPORT_TEXT | _lib.REPORT_JSON
    ops = []
    try:
        for s in samples:
            ops.append(_Operand(s, "samples"))
        names = [os.fsencode("<sample %d>" % (i + 1) if op.name == "<arrays>" else op.name)
                 for i, op in enumerate(ops)]
        cnames = (ctypes.c_char_p * len(ops))(*names)
        o.sample_names = cnames
        sets = (ctypes.POINTER(_lib.TensorSet) * len(ops))(
            *[ctypes.cast(op.ref(), ctypes.POINTER(_lib.TensorSet)) for op in ops])
        with _call(lib.nvfp4_sr_test_report, inp.ptr, inp.dtype, inp.rows, inp.cols, sets, len(ops),
                   ctypes.byref(o)) as rep:
            return SRReport(rep.text(), rep.json(), rep.note())
    finally:
        for op in ops:
            op.__exit__()


class GemmReport:
    """gemm_check()'s verdict: ok when every element lies within its bound; str() the command's text."""

    def __init__(self, text, rc):
        self.text, self.ok = text, rc == 0

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<nvfp4kit.GemmReport %s>" % ("within bound" if self.ok else "OUTSIDE BOUND")


class _CQuantized:
    """A bundle (path or Quantized) as the library's nvfp4_quantized, freed on exit."""

    def __init__(self, v, what):
        self.name, s = _bundle(v, what)
        self.q = _lib.Quantized()
        err = _lib.CError()
        try:
            _lib.check(lib.nvfp4_bundle_to_quantized(s.ref(), os.fsencode(self.name), ctypes.byref(self.q),
                                                     ctypes.byref(err)), err)
        finally:
            s.__exit__()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        lib.nvfp4_quantized_free(ctypes.byref(self.q))


def gemm_check(a, b, actual, a_columnwise=False, b_columnwise=False, alpha=1.0, errors=10):
    """Checks a kernel's fp32 GEMM D = alpha * A * B^T [M, N] against the
    rigorous bound of the block-scaled product (`nvfp4 gemm-check`, the
    library's nvfp4_gemm_check_text); a and b are bundle paths or Quantized
    results, actual a 2-D float32 array (or a file holding 'd')."""
    errors = _lib.int_arg(errors, "gemm_check: errors", 0, (1 << 63) - 1)
    al = _lib.real_arg(alpha, "gemm_check: alpha")
    if al != al or abs(al) > float(np.finfo(np.float32).max):  # NaN, inf, or inf once stored in a C float
        raise Error("gemm_check: alpha must be a finite float32 number, got %r" % (alpha,))
    alpha = al
    o = _lib.GemmCheckOpts()
    lib.nvfp4_gemm_check_opts_init(ctypes.byref(o))
    o.a_columnwise, o.b_columnwise, o.alpha, o.max_errors = bool(a_columnwise), bool(b_columnwise), alpha, errors
    with _CQuantized(a, "a") as qa, _CQuantized(b, "b") as qb, \
            _Operand(actual if isinstance(actual, (str, os.PathLike)) else {"d": actual}, "actual") as d:
        names = [os.fsencode(n) for n in (qa.name, qb.name, d.name)]
        o.a_name, o.b_name, o.d_name = names
        with _call(lib.nvfp4_gemm_check_text, ctypes.byref(qa.q), ctypes.byref(qb.q), d.ref(), ctypes.byref(o)) as rep:
            return GemmReport(rep.text(), rep.r.verdict)


def explain(value, fmt="e2m1", rounding="rn"):
    """How value is encoded in fmt (e2m1, e4m3, ue8m0): `nvfp4 explain`'s
    text (the library's nvfp4_explain)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise Error("explain: value must be a number, got %r" % (value,))
    v = _lib.real_arg(value, "explain: value")
    label = "nan" if v != v else ("inf" if v == float("inf") else "-inf" if v == float("-inf") else repr(v))
    f, r = ctypes.c_int(), ctypes.c_int()
    if not isinstance(fmt, str) or not lib.nvfp4_explain_format_parse(_lib.text_arg(fmt, "explain: format"),
                                                                       ctypes.byref(f)):
        raise Error("nvfp4 explain: unknown format '%s' (expected e2m1, e4m3 or ue8m0)" % (fmt,))
    if not isinstance(rounding, str) or not lib.nvfp4_rounding_parse(_lib.text_arg(rounding, "explain: rounding"),
                                                                      ctypes.byref(r)):
        raise Error("nvfp4 explain: unknown rounding '%s' (expected rn, rz or sr)" % (rounding,))
    if fmt != "e2m1":
        r.value = 0  # the rounding applies to e2m1 only (e4m3 is rn; ue8m0 shows every mode)
    with np.errstate(over="ignore"):  # beyond FLT_MAX: inf, as the CLI reads it (strtof), without a warning
        x = np.float32(v)  # the value as fp32, as the CLI reads it (round to nearest)
    buf = _lib.StrBuf()
    err = _lib.CError()
    try:
        _lib.check(lib.nvfp4_explain(label.encode(), float(x), f.value, r.value, True, 0, ctypes.byref(buf),
                                     ctypes.byref(err)), err)
        return ctypes.string_at(buf.data, buf.len).decode("utf-8", "replace")
    finally:
        lib.nvfp4_strbuf_free(ctypes.byref(buf))

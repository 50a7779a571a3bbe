"""nvfp4kit.ckpt - inspect and check NVFP4 model checkpoints (modelopt and
compressed-tensors), the results of `nvfp4 ckpt inspect` / `nvfp4 ckpt check`:

    from nvfp4kit import ckpt
    rep = ckpt.inspect("./Llama-NVFP4")      # Report: convention, scheme, layers, findings
    rep.layers[0].amax_implied               # one Layer per NVFP4 layer
    found = ckpt.check("./Llama-NVFP4")      # Findings: a list of Finding, and .exit_code 0 or 1
    [(f.category, f.tensor) for f in found]
    ckpt.convert("./Llama-NVFP4", "compressed-tensors", "./Llama-ct")   # Converted

Both read the checkpoint once through the C library (nvfp4_ckpt_open and
nvfp4_ckpt_scan) and build the result from nvfp4_ckpt_report_json, the JSON
that `nvfp4 ckpt check --json` prints, so every field and message is the
CLI's. An unreadable checkpoint raises nvfp4kit.Error naming the file (the
CLI's exit 2). docs/checkpoints.md describes each field and each check.
"""
import contextlib
import ctypes
import json
import os
from dataclasses import dataclass
from typing import List, Optional, Tuple

from ._lib import CError, CkptConvertResult, CkptDiff, CkptReport, Error, check as _check, lib

__all__ = ["Layer", "Finding", "Findings", "Report", "Converted", "inspect", "check", "convert", "diff"]


@dataclass(frozen=True)
class Layer:
    """One NVFP4 layer, the fields of `nvfp4 ckpt inspect --json` (None where the checkpoint has no value)."""
    name: str                       # module prefix, "model.layers.0.self_attn.q_proj"
    weight: str                     # the codes tensor: "P.weight" (modelopt) or "P.weight_packed"
    algo: str                       # "NVFP4", "W4A16_NVFP4", "NVFP4A16", ...
    activations: str                # "nvfp4 (W4A4)" or "bf16 (W4A16)"
    shape: Tuple[int, int]          # logical weight shape (rows, cols)
    decoded: bool                   # codes and scales had consistent shapes and were read
    global_scale: Optional[float]   # as stored
    amax_implied: Optional[float]   # 2688 * the decode multiplier of global_scale
    amax_decoded: Optional[float]   # max |fp4(code)| * scale * D
    scale_min: float                # smallest nonzero E4M3 block scale
    scale_max: float                # largest finite block scale
    scale_zero: int
    scale_nan: int
    scale_count: int
    code_hist: Tuple[int, ...]      # 16 counts, index = 4-bit code
    input_scale: Optional[float]    # modelopt input_scale or compressed-tensors input_global_scale
    original: Optional[dict] = None  # with original=: rel_rms_error, max_abs_error, reference_rel_rms_error,
    #                                  swapped_nibbles_rel_rms_error, swizzled_scales_rel_rms_error, written_by,
    #                                  written_amax (docs/checkpoints.md, "check --original")


@dataclass(frozen=True)
class Finding:
    tensor: str
    category: str                   # "global-scale-reciprocal", "scale-nonfinite", ... (docs/checkpoints.md)
    severity: str                   # "error" or "hazard"
    message: str                    # evidence and fix


class Findings(list):
    """The findings of check(), a list of Finding; exit_code is what `nvfp4 ckpt check` exits with (0: no
    finding is an error; 1: one is, or with strict any finding)."""

    def __init__(self, items, strict):
        super().__init__(items)
        self.strict = strict

    @property
    def errors(self):
        return [f for f in self if self.strict or f.severity == "error"]

    @property
    def exit_code(self):
        return 1 if self.errors else 0


@dataclass(frozen=True)
class Report:
    convention: str                 # "modelopt" or "compressed-tensors"
    scheme: str
    layers: List[Layer]
    findings: List[Finding]
    files: int                      # safetensors files read

    def layer(self, name):
        """The Layer of a module prefix; KeyError when the checkpoint has no such NVFP4 layer."""
        for l in self.layers:
            if l.name == name:
                return l
        raise KeyError(name)


def _path_arg(path):
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) or "\0" in path:
        raise Error("path must be a folder name (str or os.PathLike), got %r" % (path,))
    return os.fsencode(path)


def _scan(path, original=None):
    """(JSON report, number of files) of the checkpoint folder at path (compared with the
    unquantized weights at original when given)."""
    with _scanned(path) as (handle, rep):
        if original is not None:
            err = CError()
            _check(lib.nvfp4_ckpt_compare(handle, _path_arg(original), ctypes.byref(rep), ctypes.byref(err)), err)
        text = lib.nvfp4_ckpt_report_json(ctypes.byref(rep))
        if not text:
            raise MemoryError("nvfp4_ckpt_report_json: out of memory")
        try:
            return json.loads(ctypes.string_at(text).decode("utf-8")), int(rep.nfiles)
        finally:
            lib.nvfp4_free(text)


def _layer(d):
    return Layer(name=d["name"], weight=d["weight"], algo=d["algo"], activations=d["activations"],
                 shape=tuple(d["shape"]), decoded=d["decoded"], global_scale=d["global_scale"],
                 amax_implied=d["amax_implied"], amax_decoded=d["amax_decoded"], scale_min=d["scale_min"],
                 scale_max=d["scale_max"], scale_zero=d["scale_zero"], scale_nan=d["scale_nan"],
                 scale_count=d["scale_count"], code_hist=tuple(d["code_hist"]), input_scale=d["input_scale"],
                 original=d.get("original"))


def inspect(path, original=None):
    """Reads the checkpoint folder at path (one file or shards) once and returns its Report: the
    convention, the scheme, one Layer per NVFP4 layer in name order, and the findings of every check.
    With original (a .safetensors file or folder of the unquantized weights) each Layer's .original
    and the findings decode-error / nibble-order, as `nvfp4 ckpt check --original`.
    nvfp4kit.Error (naming the file) when it cannot be read."""
    d, files = _scan(path, original)
    return Report(convention=d["convention"], scheme=d["scheme"], layers=[_layer(l) for l in d["layers"]],
                  findings=[Finding(**f) for f in d["findings"]], files=files)


def check(path, strict=False, original=None):
    """The findings of `nvfp4 ckpt check PATH` (in its order) as Findings; with strict, hazards count as
    errors (Findings.errors, Findings.exit_code), as --strict does; original as --original.
    nvfp4kit.Error when unreadable."""
    if not isinstance(strict, bool):
        raise Error("strict must be True or False, got %r" % (strict,))
    return Findings(inspect(path, original).findings, strict)


@dataclass(frozen=True)
class Converted:
    """What convert() wrote (the numbers `nvfp4 ckpt convert` prints)."""
    layers: int
    tensors: int
    files: int
    scales_converted: int           # global and input scales written as the fp32 reciprocal
    max_decode_change: float        # largest change of a decoded weight that causes
    max_change_layer: str


_CONVENTIONS = {"modelopt": 0, "compressed-tensors": 1}


def convert(path, to, out):
    """Writes the checkpoint folder at path in convention `to` ("modelopt" or "compressed-tensors") to
    the new folder out, as `nvfp4 ckpt convert PATH --to TO -o OUT`: codes and block scales byte for
    byte, global and input scales as the fp32 reciprocal, out complete or absent. nvfp4kit.Error when
    path is unreadable or has an error finding (the message lists them), or out exists."""
    if to not in _CONVENTIONS:
        raise Error("to must be 'modelopt' or 'compressed-tensors', got %r (a GGUF: `nvfp4 ckpt convert PATH --to "
                    "gguf`, which runs llama.cpp's converter and checks its output)" % (to,))
    with _scanned(path) as (handle, rep):
        if lib.nvfp4_ckpt_report_errors(ctypes.byref(rep), False):
            text = lib.nvfp4_ckpt_report_json(ctypes.byref(rep))
            try:
                found = json.loads(ctypes.string_at(text).decode("utf-8"))["findings"] if text else []
            finally:
                lib.nvfp4_free(text)
            raise Error("%s has errors; convert would carry them: %s" % (
                os.fspath(path), "; ".join("%s %s" % (f["category"], f["tensor"]) for f in found
                                           if f["severity"] == "error")))
        err, res = CError(), CkptConvertResult()
        _check(lib.nvfp4_ckpt_convert(handle, ctypes.byref(rep), _CONVENTIONS[to], _path_arg(out),
                                      ctypes.byref(res), ctypes.byref(err)), err)
        return Converted(layers=int(res.layers), tensors=int(res.tensors), files=int(res.files),
                         scales_converted=int(res.scales_converted), max_decode_change=float(res.max_decode_change),
                         max_change_layer=res.max_change_layer.decode("utf-8", "replace"))


def _open_scanned(path):
    err = CError()
    handle = ctypes.c_void_p()
    _check(lib.nvfp4_ckpt_open(_path_arg(path), ctypes.byref(handle), ctypes.byref(err)), err)
    rep = CkptReport()
    st = lib.nvfp4_ckpt_scan(handle, None, None, ctypes.byref(rep), ctypes.byref(err))
    if st:
        lib.nvfp4_ckpt_report_free(ctypes.byref(rep))
        lib.nvfp4_ckpt_close(handle)
        _check(st, err)
    return handle, rep


@contextlib.contextmanager
def _scanned(path):
    """The checkpoint folder at path, opened and scanned: (handle, report), both released on leaving."""
    handle, rep = _open_scanned(path)
    try:
        yield handle, rep
    finally:
        lib.nvfp4_ckpt_report_free(ctypes.byref(rep))
        lib.nvfp4_ckpt_close(handle)


def diff(a, b):
    """`nvfp4 ckpt diff A B --json` as a list of dicts, one per layer (A's in its order, then those only in
    B): name, in_a, in_b, verdict, and where compared code_bytes_equal, scale_bytes_equal, decode_mult_a,
    decode_mult_b, elements, elements_differ, rel_rms_diff, max_abs_diff (docs/checkpoints.md, "diff").
    nvfp4kit.Error when either is unreadable."""
    ha, ra = _open_scanned(a)
    try:
        hb, rb = _open_scanned(b)
        try:
            err, d = CError(), CkptDiff()
            _check(lib.nvfp4_ckpt_diff_run(ha, ctypes.byref(ra), hb, ctypes.byref(rb), ctypes.byref(d),
                                           ctypes.byref(err)), err)
            try:
                text = lib.nvfp4_ckpt_diff_json(ctypes.byref(d))
                if not text:
                    raise MemoryError("nvfp4_ckpt_diff_json: out of memory")
                try:
                    return json.loads(ctypes.string_at(text).decode("utf-8"))["layers"]
                finally:
                    lib.nvfp4_free(text)
            finally:
                lib.nvfp4_ckpt_diff_free(ctypes.byref(d))
        finally:
            lib.nvfp4_ckpt_report_free(ctypes.byref(rb))
            lib.nvfp4_ckpt_close(hb)
    finally:
        lib.nvfp4_ckpt_report_free(ctypes.byref(ra))
        lib.nvfp4_ckpt_close(ha)

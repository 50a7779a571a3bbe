"""_suite.py - golden suites in-process: golden_suite, mutation_report and
verify_suite; golden packs: golden_pack and verify_pack.

The work is the library's (nvfp4/suite.h): nvfp4_suite_generate writes the
bundles and the MANIFEST that `nvfp4 golden` writes, byte for byte, and
nvfp4_suite_verify returns the structured result that `nvfp4 verify
--suite` prints, rendered by the same library functions as text, JSON, TAP
or JUnit XML. No subprocess.
"""
import ctypes
import json

from . import _lib
from ._core import _path
from ._lib import Error, lib

_ROUNDINGS = {"rn": 0, "sr": 2}  # nvfp4_rounding: NVFP4_RN, NVFP4_SR
_FORMATS = {"text": _lib.SUITE_TEXT, "json": _lib.SUITE_JSON, "tap": _lib.SUITE_TAP, "junit": _lib.SUITE_JUNIT}
_STATUS = {-1: "missing", 0: "match", 1: "mismatch", 2: "error"}


def _log_collector(log):
    """A C log callback that keeps every line (returned as the list it fills) and passes each to log."""
    lines = []

    def note(ctx, line):
        text = line.decode("utf-8", "replace")
        lines.append(text)
        if log is not None:
            log(text)
    return _lib.SUITE_LOG_FN(note), lines


def _take_string(p):
    """A malloc'd C string handed over by the library, as str (freed)."""
    if not p:
        raise Error("out of memory")
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        lib.nvfp4_free(p)


def _suite_opts(suite, recipe, level, seed, rounding, format, scale_layout, force, log, global_scale_inverted=False):
    o = _lib.SuiteOpts()
    lib.nvfp4_suite_opts_init(ctypes.byref(o))
    keep = []  # the bytes the C strings point at, alive for the call
    if suite is not None:
        keep.append(_lib.text_arg(suite, "suite"))
        if not lib.nvfp4_suite_name_valid(keep[-1]):
            raise Error("bad suite '%s' (edge, random, shapes, mutants, grouped or all)" % suite)
        o.suite = keep[-1]
    keep.append(_lib.text_arg(recipe, "recipe"))
    o.recipe = keep[-1]
    o.level = _lib.int_arg(level, "level", 1, 2)
    o.seed = _lib.int_arg(seed, "seed", 0, (1 << 64) - 1)
    if rounding not in _ROUNDINGS:
        raise Error("bad rounding %r (rn or sr)" % (rounding,))
    o.round = _ROUNDINGS[rounding]
    if format is not None:
        keep.append(_lib.text_arg(format, "format"))
        if not lib.nvfp4_file_format_parse(keep[-1], ctypes.byref(ctypes.c_int())):
            raise Error("bad format '%s' (safetensors, npy or bin)" % format)
        o.format = keep[-1]
    lay = ctypes.c_int()
    if not lib.nvfp4_scale_layout_parse(_lib.text_arg(scale_layout, "scale_layout"), ctypes.byref(lay)):
        raise Error("bad scale_layout '%s' (128x4, 8x4, linear, kv-k or kv-v)" % scale_layout)
    o.layout = lay.value
    o.force = bool(force)
    o.global_scale_inverted = bool(global_scale_inverted)
    o.log, lines = _log_collector(log)
    keep.append(o.log)
    return o, keep, lines


def golden_suite(out, suite="all", recipe="te", level=1, seed=1, rounding="rn", format=None, scale_layout="128x4",
                 force=False, log=None, global_scale_inverted=False):
    """Writes a golden suite into the folder out, as `nvfp4 golden --suite
    SUITE --recipe RECIPE --level L --seed S --round R [--format F]
    [--scale-layout L] [--global-scale-inverted] [--force] --out OUT` does (the same bytes: one bundle
    per case and a MANIFEST; the suite is built aside and swapped into
    place). suite: edge, random, shapes, mutants, grouped or all. log: called with
    each progress line and note (what the command writes to stderr,
    without its "nvfp4 golden: " prefix). Returns those lines; raises Error
    with the library's message on failure (nothing of a failed run stays)."""
    if suite is None:
        raise Error("a suite is needed (edge, random, shapes, mutants, grouped or all)")
    o, keep, lines = _suite_opts(suite, recipe, level, seed, rounding, format, scale_layout, force, log,
                                 global_scale_inverted)
    err = _lib.CError()
    _lib.check(lib.nvfp4_suite_generate(_path(out, "out"), ctypes.byref(o), ctypes.byref(err)), err)
    del keep
    return lines


def golden_pack(out, recipe=None, force=False, log=None):
    """Writes a golden pack into the folder out, as `nvfp4 golden --pack OUT
    [--recipe R] [--force]` does (the same bytes): language-neutral
    conformance vectors (codec JSON, SR cases with their random bytes,
    suites per recipe and scale layout, a README.md explaining every file;
    docs/verify.md, "Golden packs"); recipe: that recipe's suites instead of
    the default set. Returns the progress lines (log: called with each);
    raises Error with the library's message on failure (nothing of it
    stays)."""
    o = _lib.PackOpts()
    lib.nvfp4_pack_opts_init(ctypes.byref(o))
    keep = None
    if recipe is not None:
        keep = _lib.text_arg(recipe, "recipe")
        o.recipe = keep
    o.force = bool(force)
    o.log, lines = _log_collector(log)
    err = _lib.CError()
    _lib.check(lib.nvfp4_pack_generate(_path(out, "out"), ctypes.byref(o), ctypes.byref(err)), err)
    del keep
    return lines


def verify_pack(pack, actual_dir, require_all=False, component="all"):
    """A kernel's outputs (actual_dir, laid out like the pack) against a
    golden pack (its folder or MANIFEST), as `nvfp4 verify --suite PACK
    --actual-dir OUTS [--require-all] [--component C]` does: (text,
    verdict), the report the command prints (without its final "verdict:"
    line) and its exit code (0 match, 1 mismatch, 2 error). component: what
    the pack's suites compare (the vector files are compared whole)."""
    o = _suite_verify_opts(require_all, component, 3)
    text, verdict, err = ctypes.c_void_p(), ctypes.c_int(), _lib.CError()
    _lib.check(lib.nvfp4_pack_verify(_path(pack, "pack"), _path(actual_dir, "actual_dir"), ctypes.byref(o),
                                     ctypes.byref(text), ctypes.byref(verdict), ctypes.byref(err)), err)
    return _take_string(text.value), verdict.value


def mutation_report(suite=None, recipe="te", level=1, seed=1, rounding="rn", json_output=False):
    """The mutation report of `nvfp4 golden --mutants` (the suite generated
    in memory): (text, verdict), verdict 0 when every catalogued mutant of
    the recipe is killed and named by verify, else 1; with json_output the
    text is the JSON of `--mutants --json`."""
    o, keep, _ = _suite_opts(suite, recipe, level, seed, rounding, None, "128x4", False, None)
    text, verdict, err = ctypes.c_void_p(), ctypes.c_int(), _lib.CError()
    _lib.check(lib.nvfp4_suite_mutation_report(ctypes.byref(o), bool(json_output), ctypes.byref(text),
                                               ctypes.byref(verdict), ctypes.byref(err)), err)
    del keep
    return _take_string(text.value), verdict.value


class SuiteResult:
    """verify_suite()'s result: verdict (0 match, 1 mismatch, 2 error, as
    the exit code of `nvfp4 verify --suite`), ok, message (why the verdict
    is 2, or None), counts (matched, differing, missing, unreadable), cases
    (one dict per case in MANIFEST order: case, status match / mismatch /
    missing / error, actual, summary, error, outputs: the reports of its
    orientations as `nvfp4 verify --json` gives them, whose causes carry
    step and status proven / consistent) and text: the rendering asked for,
    byte for byte what the command prints (str(result))."""

    def __init__(self, verdict, message, counts, cases, text):
        self.verdict, self.message, self.counts, self.cases, self.text = verdict, message, counts, cases, text
        self.ok = verdict == 0

    def causes(self, case):
        """The causes verify names for a case: dicts with cause, line, step, status and orientation."""
        for c in self.cases:
            if c["case"] == case:
                return [dict(k, orientation=o["orientation"]) for o in c["outputs"] or [] for k in o["causes"]]
        raise KeyError(case)

    def __bool__(self):
        return self.ok

    def __str__(self):
        return self.text

    def __repr__(self):
        return "<nvfp4kit.SuiteResult %s: %d matched, %d differing, %d missing, %d unreadable>" % (
            ("MATCH", "MISMATCH", "ERROR")[self.verdict], *self.counts)


def _case(r, i):
    s = lambda p: p.decode("utf-8", "replace") if p else None
    js = lib.nvfp4_suite_result_case_json(r, i)
    return {"case": s(lib.nvfp4_suite_result_case_name(r, i)),
            "status": _STATUS[lib.nvfp4_suite_result_case_status(r, i)],
            "actual": s(lib.nvfp4_suite_result_case_actual(r, i)),
            "summary": s(lib.nvfp4_suite_result_case_summary(r, i)),
            "error": s(lib.nvfp4_suite_result_case_error(r, i)),
            "outputs": json.loads(_take_string(js)) if js else None}


def _suite_verify_opts(require_all, component, errors):
    o = _lib.SuiteVerifyOpts()
    lib.nvfp4_suite_verify_opts_init(ctypes.byref(o))
    o.verify.max_errors = _lib.int_arg(errors, "errors", 0, 1000000)
    o.require_all = bool(require_all)
    if component != "all":
        c = ctypes.c_int()
        if not isinstance(component, str) or not lib.nvfp4_vcomponent_parse(_lib.text_arg(component, "component"),
                                                                            ctypes.byref(c)):
            raise Error("bad component %r (data, scale, scale_swizzled, amax, dequant or all)" % (component,))
        o.verify.components = 1 << c.value
        o.lone = c.value
    return o


def verify_suite(suite, actual_dir, format="text", junit=None, require_all=False, component="all", errors=3):
    """Verifies a kernel's outputs against a golden suite in-process, as
    `nvfp4 verify --suite SUITE --actual-dir ACTUAL_DIR [--json | --tap]
    [--junit FILE] [--require-all] [--component C]`: suite is the suite's
    folder or its MANIFEST; actual_dir holds OUTS/CASE.safetensors,
    OUTS/CASE/ or OUTS/CASE.npy. format: text (with the final "verdict:"
    line), json, tap, or junit (the JUnit XML itself); junit: also write
    the JUnit XML to that path. Returns a SuiteResult; an unreadable case is
    a case with status error (verdict 2), not an exception. Raises Error for
    an unreadable MANIFEST or an actual_dir that is not a folder."""
    if format not in _FORMATS:
        raise Error("bad format %r (text, json, tap or junit)" % (format,))
    o = _suite_verify_opts(require_all, component, errors)
    r, err = ctypes.c_void_p(), _lib.CError()
    _lib.check(lib.nvfp4_suite_verify(_path(suite, "suite"), _path(actual_dir, "actual_dir"),
                                      ctypes.byref(o), ctypes.byref(r), ctypes.byref(err)), err)
    try:
        verdict = lib.nvfp4_suite_result_verdict(r)
        if junit is not None:
            _lib.check(lib.nvfp4_suite_result_write_junit(r, _path(junit, "junit"), ctypes.byref(err)), err)
        counts = (ctypes.c_size_t * 4)()
        lib.nvfp4_suite_result_counts(r, counts)
        msg = lib.nvfp4_suite_result_message(r)
        cases = [_case(r, i) for i in range(lib.nvfp4_suite_result_cases(r))]
        text = _take_string(lib.nvfp4_suite_result_render(r, _FORMATS[format]))
        if format == "text":
            text += "verdict: %s\n" % ("MATCH", "MISMATCH", "ERROR")[verdict]
        return SuiteResult(verdict, msg.decode("utf-8", "replace") if msg else None, tuple(int(v) for v in counts),
                           cases, text)
    finally:
        lib.nvfp4_suite_result_free(r)

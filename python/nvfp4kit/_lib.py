"""_lib.py - the ctypes declarations of the public C API that nvfp4kit calls.

Every structure below mirrors its declaration in include/nvfp4/*.h field for
field (ctypes applies the platform's C alignment rules, as the compiler does).
The shared library is the libnvfp4.so that the package build compiled from
this repository and copied into nvfp4kit/_native/ (see python/setup.py);
NVFP4KIT_LIBDIR overrides the folder (a build tree: build/lib).
"""
import ctypes
import os

c_size = ctypes.c_size_t
c_u8p = ctypes.POINTER(ctypes.c_uint8)


class Error(ValueError):
    """An error reported by the nvfp4 C library (or by argument checking
    before a call): the message is the library's sentence naming the problem."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


# ---- argument checks shared by the modules: every bad value becomes an Error naming the argument ------------

def text_arg(v, what):
    """A name handed to the library (recipe, block, component, ...) as UTF-8 bytes: a str without NUL (C would
    stop reading at it and take a shorter name) that UTF-8 can encode (lone surrogates cannot)."""
    if not isinstance(v, str):
        raise Error("%s must be a string, got %r" % (what, v))
    if "\0" in v:
        raise Error("%s %r holds a NUL character" % (what, v))
    try:
        return v.encode("utf-8")
    except UnicodeEncodeError:
        raise Error("%s %r is not valid text (a lone surrogate cannot be encoded as UTF-8)" % (what, v)) from None


def int_arg(v, what, lo, hi):
    """An integer argument in [lo, hi] (bools and floats refused: 1.7 is not taken as 1). ctypes would store
    a larger value in a C field modulo 2^N without a word, so every bound is checked here."""
    import numbers
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not lo <= int(v) <= hi:
        raise Error("%s must be an integer from %d to %s, got %s" % (what, lo, hi if hi < 1 << 32 else
                                                                     "2^%d-1" % (hi.bit_length()), _short(v)))
    return int(v)


def real_arg(v, what):
    """A real number as a Python float; an int too large for a double is an Error, not an OverflowError."""
    import numbers
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise Error("%s must be a number, got %r" % (what, v))
    try:
        return float(v)
    except OverflowError:
        raise Error("%s %s is too large for a double (about 1.8e308 at most)" % (what, _short(v))) from None


def _short(v):
    """repr of a number, shortened when it has thousands of digits."""
    return repr(v) if not isinstance(v, int) or v.bit_length() < 256 else "an integer of %d bits" % v.bit_length()


class CError(ctypes.Structure):  # nvfp4_error (nvfp4/common.h)
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 512)]


class QuantOpts(ctypes.Structure):  # nvfp4_quant_opts (nvfp4/quant.h)
    _fields_ = [
        ("recipe", ctypes.c_char_p),
        ("block", ctypes.c_int),
        ("rounding", ctypes.c_int),
        ("seed", ctypes.c_uint64),
        ("offset", ctypes.c_uint64),
        ("rowwise", ctypes.c_bool),
        ("columnwise", ctypes.c_bool),
        ("rht", ctypes.c_bool),
        ("rht_signs", ctypes.c_int),
        ("rht_sign_seed", ctypes.c_uint64),
        ("rht_fp32", ctypes.c_bool),
        ("pad", ctypes.c_bool),
        ("global_scale_inverted", ctypes.c_bool),
    ]


class Options(ctypes.Structure):  # nvfp4_options (nvfp4/options.h)
    _fields_ = [("quant", QuantOpts), ("named", ctypes.c_uint32)]


class OptionRow(ctypes.Structure):  # nvfp4_option: a row of the quantize option table (nvfp4/options.h)
    _fields_ = [("id", ctypes.c_int), ("name", ctypes.c_char_p), ("values", ctypes.c_char_p),
                ("allowed", ctypes.c_char_p), ("default_value", ctypes.c_char_p), ("help", ctypes.c_char_p)]


class QTensor(ctypes.Structure):  # nvfp4_qtensor
    _fields_ = [
        ("rows", c_size), ("cols", c_size), ("prows", c_size), ("pcols", c_size),
        ("data", c_u8p), ("data_bytes", c_size),
        ("scale", c_u8p), ("scale_rows", c_size), ("scale_cols", c_size),
        ("amax", ctypes.c_float), ("rht", ctypes.c_bool),
        ("row_amax", ctypes.POINTER(ctypes.c_float)),  # row-scaled recipes: one amax per stored row
    ]


class Quantized(ctypes.Structure):  # nvfp4_quantized
    _fields_ = [
        ("recipe", ctypes.c_void_p), ("opts", QuantOpts), ("row", QTensor), ("col", QTensor),
        ("has_row", ctypes.c_bool), ("has_col", ctypes.c_bool), ("borrowed", ctypes.c_bool),
    ]


class QuantLayout(ctypes.Structure):  # nvfp4_quant_layout
    _fields_ = [
        ("rows", c_size), ("cols", c_size), ("prows", c_size), ("pcols", c_size),
        ("block_len", c_size), ("tile16", ctypes.c_bool),
        ("data_bytes", c_size), ("scale_rows", c_size), ("scale_cols", c_size),
        ("sr_offset", ctypes.c_uint64),
    ]


class QuantPlan(ctypes.Structure):  # nvfp4_quant_plan
    _fields_ = [
        ("recipe", ctypes.c_void_p), ("opts", QuantOpts), ("dtype", ctypes.c_int),
        ("rows", c_size), ("cols", c_size), ("has_row", ctypes.c_bool), ("has_col", ctypes.c_bool),
        ("row", QuantLayout), ("col", QuantLayout), ("rht_mask", ctypes.c_uint32 * 4),
    ]


class QuantBuffers(ctypes.Structure):  # nvfp4_quant_buffers
    _fields_ = [("row_data", ctypes.c_void_p), ("row_scale", ctypes.c_void_p),
                ("col_data", ctypes.c_void_p), ("col_scale", ctypes.c_void_p)]


class Grouped(ctypes.Structure):  # nvfp4_grouped (nvfp4/grouped.h)
    _fields_ = [
        ("recipe", ctypes.c_void_p), ("opts", QuantOpts), ("rows", c_size), ("cols", c_size),
        ("ngroups", c_size), ("m_sizes", ctypes.POINTER(c_size)), ("amax", ctypes.POINTER(ctypes.c_float)),
        ("data", c_u8p), ("data_bytes", c_size), ("scale", c_u8p), ("scale_cols", c_size),
        ("scale_swizzled", c_u8p), ("swizzled_bytes", c_size),
    ]


class RecipeInfo(ctypes.Structure):  # nvfp4_recipe_info
    _fields_ = [
        ("name", ctypes.c_char_p), ("summary", ctypes.c_char_p), ("provenance", ctypes.c_char_p),
        ("elem", ctypes.c_int), ("scale_format", ctypes.c_int), ("default_block", ctypes.c_int),
        ("has_global_amax", ctypes.c_bool), ("supports_sr", ctypes.c_bool),
    ]


MAX_DIMS = 8


class Tensor(ctypes.Structure):  # nvfp4_tensor (nvfp4/io.h)
    _fields_ = [
        ("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_uint),
        ("shape", c_size * MAX_DIMS), ("nbytes", c_size), ("data", c_u8p),
    ]


class TensorSet(ctypes.Structure):  # nvfp4_tensor_set
    _fields_ = [
        ("tensors", ctypes.POINTER(Tensor)), ("count", c_size), ("cap", c_size),
        ("meta", ctypes.c_void_p), ("meta_count", c_size), ("meta_cap", c_size),
    ]


class VerifyOpts(ctypes.Structure):  # nvfp4_verify_opts (nvfp4/verify.h)
    _fields_ = [
        ("max_errors", c_size), ("components", ctypes.c_uint), ("candidates", ctypes.c_void_p),
        ("n_candidates", c_size), ("expected_name", ctypes.c_char_p), ("sr_scaled", ctypes.c_void_p),
        ("sr_seed", ctypes.c_uint64), ("sr_offset", ctypes.c_uint64), ("sr_block_elems", c_size),
        ("recipe", ctypes.c_char_p),
    ]


class VerifyBundleOpts(ctypes.Structure):  # nvfp4_verify_bundle_opts
    _fields_ = [("expected_name", ctypes.c_char_p), ("actual_name", ctypes.c_char_p), ("verify", VerifyOpts),
                ("lone", ctypes.c_int), ("what", ctypes.c_uint)]


SUITE_LOG_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)  # nvfp4_suite_log_fn
SUITE_PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, c_size, c_size, ctypes.c_char_p)


class SuiteOpts(ctypes.Structure):  # nvfp4_suite_opts (nvfp4/suite.h)
    _fields_ = [("suite", ctypes.c_char_p), ("recipe", ctypes.c_char_p), ("level", ctypes.c_int),
                ("seed", ctypes.c_uint64), ("round", ctypes.c_int), ("format", ctypes.c_char_p),
                ("layout", ctypes.c_int), ("force", ctypes.c_bool), ("global_scale_inverted", ctypes.c_bool),
                ("log", SUITE_LOG_FN),
                ("log_ctx", ctypes.c_void_p)]


class SuiteVerifyOpts(ctypes.Structure):  # nvfp4_suite_verify_opts (nvfp4/suite.h)
    _fields_ = [("verify", VerifyOpts), ("lone", ctypes.c_int), ("require_all", ctypes.c_bool),
                ("progress", SUITE_PROGRESS_FN), ("progress_ctx", ctypes.c_void_p)]


SUITE_TEXT, SUITE_JSON, SUITE_TAP, SUITE_JUNIT = 0, 1, 2, 3  # nvfp4_suite_format


class PackOpts(ctypes.Structure):  # nvfp4_pack_opts (nvfp4/suite.h)
    _fields_ = [("recipe", ctypes.c_char_p), ("force", ctypes.c_bool), ("log", SUITE_LOG_FN),
                ("log_ctx", ctypes.c_void_p)]


class IdentifyOpts(ctypes.Structure):  # nvfp4_identify_opts
    _fields_ = [("quant", QuantOpts), ("orientation", ctypes.c_int), ("mutants", ctypes.c_bool), ("top", c_size),
                ("actual_name", ctypes.c_char_p), ("what", ctypes.c_uint)]


class SRTestOpts(ctypes.Structure):  # nvfp4_sr_test_opts
    _fields_ = [("quant", QuantOpts), ("columnwise", ctypes.c_bool), ("alpha", ctypes.c_double),
                ("bitexact", ctypes.c_bool), ("seed", ctypes.c_uint64), ("offset", ctypes.c_uint64),
                ("offset_step", ctypes.c_uint64), ("sample_names", ctypes.POINTER(ctypes.c_char_p)),
                ("what", ctypes.c_uint)]


class GemmCheckOpts(ctypes.Structure):  # nvfp4_gemm_check_opts
    _fields_ = [("a_name", ctypes.c_char_p), ("b_name", ctypes.c_char_p), ("d_name", ctypes.c_char_p),
                ("a_columnwise", ctypes.c_bool), ("b_columnwise", ctypes.c_bool), ("alpha", ctypes.c_float),
                ("max_errors", c_size)]


class Report(ctypes.Structure):  # nvfp4_report: the strings are read with ctypes.string_at
    _fields_ = [("verdict", ctypes.c_int), ("text", ctypes.c_void_p), ("json", ctypes.c_void_p),
                ("note", ctypes.c_void_p), ("outputs", ctypes.c_void_p), ("n_outputs", c_size),
                ("ranking", ctypes.c_void_p), ("n_ranking", c_size), ("n_variants", c_size), ("n_mutants", c_size),
                ("sr", ctypes.c_void_p), ("gemm", ctypes.c_void_p)]


class StrBuf(ctypes.Structure):  # nvfp4_strbuf (nvfp4/formats.h)
    _fields_ = [("data", ctypes.c_void_p), ("len", c_size), ("cap", c_size), ("failed", ctypes.c_bool)]


class CkptReport(ctypes.Structure):  # nvfp4_ckpt_report (nvfp4/ckpt.h): read through nvfp4_ckpt_report_json
    _fields_ = [("convention", ctypes.c_int), ("scheme", ctypes.c_char_p), ("layers", ctypes.c_void_p),
                ("nlayers", c_size), ("findings", ctypes.c_void_p), ("nfindings", c_size), ("findings_cap", c_size),
                ("nfiles", c_size), ("bytes_scanned", ctypes.c_uint64)]


class CkptConvertResult(ctypes.Structure):  # nvfp4_ckpt_convert_result (nvfp4/ckpt.h)
    _fields_ = [("tensors", c_size), ("layers", c_size), ("files", c_size), ("scales_converted", c_size),
                ("max_decode_change", ctypes.c_double), ("max_change_layer", ctypes.c_char * 512)]


class CkptDiff(ctypes.Structure):  # nvfp4_ckpt_diff (nvfp4/ckpt.h): read through nvfp4_ckpt_diff_json
    _fields_ = [("layers", ctypes.c_void_p), ("nlayers", c_size)]


REPORT_TEXT, REPORT_JSON = 1, 2

# enum values (nvfp4/quant.h, nvfp4/formats.h, nvfp4/io.h)
DTYPE_F32, DTYPE_BF16 = 0, 1
SCALEFMT_UE8M0 = 1
ELEM_E4M3 = 1
T_NAMES = ["F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8",
           "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4"]  # nvfp4_tdtype, in its order (nvfp4/io.h)
T_F32, T_F16, T_BF16, T_U8 = 1, 2, 3, 11
FMT_SAFETENSORS, FMT_NPY_DIR, FMT_BIN_DIR, FMT_NPY = 0, 1, 2, 3


def _native_dir():
    return os.environ.get("NVFP4KIT_LIBDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native")


def _load():
    path = os.path.join(_native_dir(), "libnvfp4.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:  # a broken install: say which file
        raise ImportError("nvfp4kit: cannot load its C library %s (%s); reinstall with pip install ./python" %
                          (path, e)) from None
    S, V, P = ctypes.c_int, None, ctypes.c_void_p
    E = ctypes.POINTER(CError)
    sig = {
        "nvfp4_version": (ctypes.c_char_p, []),
        "nvfp4_quant_opts_init": (V, [ctypes.POINTER(QuantOpts)]),
        "nvfp4_quant_plan_init": (S, [ctypes.POINTER(QuantPlan), ctypes.POINTER(QuantOpts), ctypes.c_int, c_size,
                                      c_size, E]),
        "nvfp4_quantize_into": (S, [ctypes.POINTER(QuantPlan), P, ctypes.POINTER(QuantBuffers),
                                    ctypes.POINTER(Quantized), E]),
        "nvfp4_quantize": (S, [P, ctypes.c_int, c_size, c_size, ctypes.POINTER(QuantOpts), ctypes.POINTER(Quantized),
                               E]),
        "nvfp4_quantized_free": (V, [ctypes.POINTER(Quantized)]),
        "nvfp4_dequantize": (S, [ctypes.POINTER(Quantized), ctypes.c_bool, P, E]),
        "nvfp4_swizzled_size": (c_size, [c_size, c_size]),
        "nvfp4_per_token_scales": (ctypes.c_bool, [P, P, c_size, P]),
        "nvfp4_scale_swizzle": (V, [P, c_size, c_size, P]),
        "nvfp4_option_find": (ctypes.POINTER(OptionRow), [ctypes.c_char_p]),
        "nvfp4_options_init": (V, [ctypes.POINTER(Options)]),
        "nvfp4_options_set": (S, [ctypes.POINTER(Options), ctypes.c_char_p, ctypes.c_char_p, E]),
        "nvfp4_options_format": (ctypes.c_bool, [ctypes.POINTER(QuantOpts), ctypes.c_int, ctypes.c_char_p, c_size]),
        "nvfp4_block_parse": (ctypes.c_bool, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
        "nvfp4_block_name": (ctypes.c_char_p, [ctypes.c_int]),
        "nvfp4_scale_format_name": (ctypes.c_char_p, [ctypes.c_int]),
        "nvfp4_rounding_parse": (ctypes.c_bool, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
        "nvfp4_rounding_name": (ctypes.c_char_p, [ctypes.c_int]),
        "nvfp4_recipe_count": (c_size, []),
        "nvfp4_recipe_at": (P, [c_size]),
        "nvfp4_recipe_find": (P, [ctypes.c_char_p]),
        "nvfp4_recipe_get_info": (ctypes.POINTER(RecipeInfo), [P]),
        "nvfp4_tdtype_name": (ctypes.c_char_p, [ctypes.c_int]),
        "nvfp4_tset_init": (V, [ctypes.POINTER(TensorSet)]),
        "nvfp4_tset_free": (V, [ctypes.POINTER(TensorSet)]),
        "nvfp4_tset_add": (S, [ctypes.POINTER(TensorSet), ctypes.c_char_p, ctypes.c_int, ctypes.c_uint,
                               ctypes.POINTER(c_size), P, P, E]),
        "nvfp4_tset_find": (ctypes.POINTER(Tensor), [ctypes.POINTER(TensorSet), ctypes.c_char_p]),
        "nvfp4_tset_meta_get": (ctypes.c_char_p, [ctypes.POINTER(TensorSet), ctypes.c_char_p]),
        "nvfp4_tset_meta_set": (S, [ctypes.POINTER(TensorSet), ctypes.c_char_p, ctypes.c_char_p, E]),
        "nvfp4_tset_read": (S, [ctypes.c_char_p, ctypes.POINTER(TensorSet), E]),
        "nvfp4_tset_write": (S, [ctypes.c_char_p, ctypes.POINTER(TensorSet), ctypes.c_int, E]),
        "nvfp4_file_format_guess": (ctypes.c_int, [ctypes.c_char_p]),
        "nvfp4_bundle_build": (S, [ctypes.POINTER(Quantized), P, ctypes.c_int, c_size, c_size,
                                   ctypes.POINTER(TensorSet), E]),
        # grouped (MoE) quantization (nvfp4/grouped.h, nvfp4/io.h)
        "nvfp4_quantize_grouped": (S, [P, ctypes.c_int, c_size, c_size, ctypes.POINTER(c_size), c_size,
                                       ctypes.POINTER(QuantOpts), ctypes.POINTER(Grouped), E]),
        "nvfp4_grouped_free": (V, [ctypes.POINTER(Grouped)]),
        "nvfp4_grouped_dequantize": (S, [ctypes.POINTER(Grouped), P, E]),
        "nvfp4_grouped_bundle_build": (S, [ctypes.POINTER(Grouped), P, ctypes.c_int, ctypes.POINTER(TensorSet), E]),
        "nvfp4_bundle_load": (S, [ctypes.c_char_p, ctypes.POINTER(TensorSet), E]),
        "nvfp4_bundle_to_quantized": (S, [ctypes.POINTER(TensorSet), ctypes.c_char_p, ctypes.POINTER(Quantized), E]),
        # the reports (nvfp4/verify.h, nvfp4/formats.h): the text the CLI prints, from the same functions
        "nvfp4_report_free": (V, [ctypes.POINTER(Report)]),
        "nvfp4_verify_bundle_opts_init": (V, [ctypes.POINTER(VerifyBundleOpts)]),
        "nvfp4_verify_bundle_report": (S, [ctypes.POINTER(TensorSet), ctypes.POINTER(TensorSet),
                                           ctypes.POINTER(VerifyBundleOpts), ctypes.POINTER(Report), E]),
        "nvfp4_vcomponent_parse": (ctypes.c_bool, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
        "nvfp4_identify_opts_init": (V, [ctypes.POINTER(IdentifyOpts)]),
        "nvfp4_identify_report": (S, [P, ctypes.c_int, c_size, c_size, ctypes.POINTER(TensorSet),
                                      ctypes.POINTER(IdentifyOpts), ctypes.POINTER(Report), E]),
        "nvfp4_sr_test_opts_init": (V, [ctypes.POINTER(SRTestOpts)]),
        "nvfp4_sr_test_report": (S, [P, ctypes.c_int, c_size, c_size, ctypes.POINTER(ctypes.POINTER(TensorSet)),
                                     c_size, ctypes.POINTER(SRTestOpts), ctypes.POINTER(Report), E]),
        "nvfp4_gemm_check_opts_init": (V, [ctypes.POINTER(GemmCheckOpts)]),
        "nvfp4_gemm_check_text": (S, [ctypes.POINTER(Quantized), ctypes.POINTER(Quantized), ctypes.POINTER(TensorSet),
                                      ctypes.POINTER(GemmCheckOpts), ctypes.POINTER(Report), E]),
        "nvfp4_explain_format_parse": (ctypes.c_bool, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
        "nvfp4_ue8m0_mode_parse": (ctypes.c_bool, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
        "nvfp4_explain": (S, [ctypes.c_char_p, ctypes.c_float, ctypes.c_int, ctypes.c_int, ctypes.c_bool, ctypes.c_int,
                              ctypes.POINTER(StrBuf), E]),
        "nvfp4_strbuf_free": (V, [ctypes.POINTER(StrBuf)]),
        # golden suites (nvfp4/suite.h): generation, the mutation report, suite verification
        "nvfp4_suite_opts_init": (V, [ctypes.POINTER(SuiteOpts)]),
        "nvfp4_suite_name_valid": (ctypes.c_bool, [ctypes.c_char_p]),
        "nvfp4_suite_generate": (S, [ctypes.c_char_p, ctypes.POINTER(SuiteOpts), E]),
        "nvfp4_suite_mutation_report": (S, [ctypes.POINTER(SuiteOpts), ctypes.c_bool, ctypes.POINTER(P),
                                            ctypes.POINTER(ctypes.c_int), E]),
        "nvfp4_scale_layout_parse": (ctypes.c_bool, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
        "nvfp4_file_format_parse": (ctypes.c_bool, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
        "nvfp4_pack_opts_init": (V, [ctypes.POINTER(PackOpts)]),
        "nvfp4_pack_generate": (S, [ctypes.c_char_p, ctypes.POINTER(PackOpts), E]),
        "nvfp4_pack_is": (ctypes.c_bool, [ctypes.c_char_p]),
        "nvfp4_pack_verify": (S, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(SuiteVerifyOpts),
                                  ctypes.POINTER(P), ctypes.POINTER(ctypes.c_int), E]),
        "nvfp4_suite_verify_opts_init": (V, [ctypes.POINTER(SuiteVerifyOpts)]),
        "nvfp4_suite_verify": (S, [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(SuiteVerifyOpts),
                                   ctypes.POINTER(P), E]),
        "nvfp4_suite_result_free": (V, [P]),
        "nvfp4_suite_result_verdict": (ctypes.c_int, [P]),
        "nvfp4_suite_result_message": (ctypes.c_char_p, [P]),
        "nvfp4_suite_result_counts": (V, [P, ctypes.POINTER(c_size)]),
        "nvfp4_suite_result_cases": (c_size, [P]),
        "nvfp4_suite_result_case_name": (ctypes.c_char_p, [P, c_size]),
        "nvfp4_suite_result_case_status": (ctypes.c_int, [P, c_size]),
        "nvfp4_suite_result_case_actual": (ctypes.c_char_p, [P, c_size]),
        "nvfp4_suite_result_case_summary": (ctypes.c_char_p, [P, c_size]),
        "nvfp4_suite_result_case_error": (ctypes.c_char_p, [P, c_size]),
        "nvfp4_suite_result_case_json": (P, [P, c_size]),
        "nvfp4_suite_result_render": (P, [P, ctypes.c_int]),
        "nvfp4_suite_result_write_junit": (S, [P, ctypes.c_char_p, E]),
        # checkpoints (nvfp4/ckpt.h)
        "nvfp4_ckpt_open": (S, [ctypes.c_char_p, ctypes.POINTER(P), E]),
        "nvfp4_ckpt_close": (V, [P]),
        "nvfp4_ckpt_scan": (S, [P, P, P, ctypes.POINTER(CkptReport), E]),
        "nvfp4_ckpt_compare": (S, [P, ctypes.c_char_p, ctypes.POINTER(CkptReport), E]),
        "nvfp4_ckpt_diff_run": (S, [P, ctypes.POINTER(CkptReport), P, ctypes.POINTER(CkptReport),
                                    ctypes.POINTER(CkptDiff), E]),
        "nvfp4_ckpt_diff_free": (V, [ctypes.POINTER(CkptDiff)]),
        "nvfp4_ckpt_diff_json": (P, [ctypes.POINTER(CkptDiff)]),
        "nvfp4_ckpt_convert": (S, [P, ctypes.POINTER(CkptReport), ctypes.c_int, ctypes.c_char_p,
                                   ctypes.POINTER(CkptConvertResult), E]),
        "nvfp4_ckpt_report_free": (V, [ctypes.POINTER(CkptReport)]),
        "nvfp4_ckpt_report_errors": (c_size, [ctypes.POINTER(CkptReport), ctypes.c_bool]),
        "nvfp4_ckpt_report_json": (P, [ctypes.POINTER(CkptReport)]),
        "nvfp4_free": (V, [P]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    return lib


lib = _load()


def check(status, err):
    """Raises Error with the library's message for a non-OK status."""
    if status != 0:
        msg = err.message.decode("utf-8", "replace") or "nvfp4 status %d" % status
        raise Error(msg, status)


def cli_path():
    """The nvfp4 command built with the library (bundled in _native/ as a
    convenience: nvfp4kit itself never runs it)."""
    return os.environ.get("NVFP4KIT_CLI") or os.path.join(_native_dir(), "nvfp4")

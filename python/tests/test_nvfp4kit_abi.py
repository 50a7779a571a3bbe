"""The ctypes mirrors in nvfp4kit/_lib.py have the size and field offsets of
the C structures in include/nvfp4/*.h: a C program compiled against the
headers prints sizeof and offsetof of each (skipped without a C compiler)."""
import ctypes
import os
import shutil
import subprocess

import pytest

from nvfp4kit import _lib
from conftest import REPO

MIRRORS = {
    "nvfp4_error": _lib.CError, "nvfp4_quant_opts": _lib.QuantOpts, "nvfp4_qtensor": _lib.QTensor,
    "nvfp4_quantized": _lib.Quantized, "nvfp4_quant_layout": _lib.QuantLayout, "nvfp4_quant_plan": _lib.QuantPlan,
    "nvfp4_quant_buffers": _lib.QuantBuffers, "nvfp4_recipe_info": _lib.RecipeInfo, "nvfp4_tensor": _lib.Tensor,
    "nvfp4_tensor_set": _lib.TensorSet, "nvfp4_grouped": _lib.Grouped,
    # the reports (nvfp4/verify.h, nvfp4/formats.h)
    "nvfp4_verify_opts": _lib.VerifyOpts, "nvfp4_verify_bundle_opts": _lib.VerifyBundleOpts,
    "nvfp4_identify_opts": _lib.IdentifyOpts, "nvfp4_sr_test_opts": _lib.SRTestOpts,
    "nvfp4_gemm_check_opts": _lib.GemmCheckOpts, "nvfp4_report": _lib.Report, "nvfp4_strbuf": _lib.StrBuf,
    "nvfp4_ckpt_report": _lib.CkptReport, "nvfp4_ckpt_convert_result": _lib.CkptConvertResult,
    "nvfp4_ckpt_diff": _lib.CkptDiff,
    # golden suites (nvfp4/suite.h)
    "nvfp4_suite_opts": _lib.SuiteOpts, "nvfp4_suite_verify_opts": _lib.SuiteVerifyOpts,
    "nvfp4_pack_opts": _lib.PackOpts,
    # the quantize option table (nvfp4/options.h)
    "nvfp4_options": _lib.Options, "nvfp4_option": _lib.OptionRow,
}


def test_struct_layouts_match_headers(tmp_path):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler")
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include <nvfp4.h>', '#include <nvfp4/verify.h>',
             '#include <nvfp4/ckpt.h>', 'int main(void) {']
    for cname, py in MIRRORS.items():
        lines.append('printf("%s size %%zu\\n", sizeof(%s));' % (cname, cname))
        for f in py._fields_:
            lines.append('printf("%s %s %%zu\\n", offsetof(%s, %s));' % (cname, f[0], cname, f[0]))
    lines.append("return 0; }")
    (tmp_path / "abi.c").write_text("\n".join(lines))
    subprocess.check_call([cc, "-std=c11", "-I", os.path.join(REPO, "include"), "-o", str(tmp_path / "abi"),
                           str(tmp_path / "abi.c")])
    out = subprocess.check_output([str(tmp_path / "abi")]).decode().split("\n")
    want = {}
    for cname, py in MIRRORS.items():
        want["%s size" % cname] = ctypes.sizeof(py)
        for f in py._fields_:
            want["%s %s" % (cname, f[0])] = getattr(py, f[0]).offset
    got = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in out if l}
    assert got == want


def test_tensor_dtype_names_match_the_library():
    # T_NAMES mirrors nvfp4_tdtype; a bundle whose scales are F8_E4M3 (or data F4) once raised IndexError
    assert [_lib.lib.nvfp4_tdtype_name(i).decode() for i in range(len(_lib.T_NAMES))] == _lib.T_NAMES
    assert _lib.lib.nvfp4_tdtype_name(len(_lib.T_NAMES)) == b"?"  # the list is complete

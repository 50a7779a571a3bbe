"""nvfp4kit - Python bindings of the bit-exact NVFP4 reference library.

    import nvfp4kit
    q = nvfp4kit.quantize(x)                 # x: 2-D float32 / bfloat16 numpy array or CPU torch tensor
    q.row.data, q.row.scale, q.row.amax      # the bytes of `nvfp4 quantize`
    nvfp4kit.verify("golden.safetensors", {"data": my_codes, "scale": my_scales})

Every byte comes from the C library (libnvfp4, built and bundled by the
package build); docs/python.md is the user guide. nvfp4kit.torch (imported
on demand) holds fake_quantize and NVFP4Linear; nvfp4kit.ckpt inspects and
checks NVFP4 model checkpoints.
"""
from ._lib import Error, lib as _clib
from ._core import Orientation, Quantized, dequantize, load_bundle, quantize, recipes, save_bundle
from ._grouped import Grouped, quantize_grouped
from ._tools import GemmReport, Identification, Report, SRReport, explain, gemm_check, identify, sr_test, verify
from ._suite import SuiteResult, golden_pack, golden_suite, mutation_report, verify_pack, verify_suite
from . import ckpt, testing

__version__ = _clib.nvfp4_version().decode()

__all__ = ["Error", "Quantized", "Orientation", "quantize", "dequantize", "save_bundle", "load_bundle", "recipes",
           "verify", "Report", "identify", "Identification", "sr_test", "SRReport", "gemm_check", "GemmReport",
           "explain", "Grouped", "quantize_grouped", "golden_suite", "mutation_report", "verify_suite", "SuiteResult",
           "golden_pack", "verify_pack",
           "ckpt", "testing"]


def __getattr__(name):  # nvfp4kit.torch without importing torch at `import nvfp4kit`
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError("module 'nvfp4kit' has no attribute %r" % name)

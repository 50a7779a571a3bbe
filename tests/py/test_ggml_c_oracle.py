"""test_ggml_c_oracle.py - the recipes `ggml` (NVFP4) and `ggml-mxfp4` byte for
byte against llama.cpp's own C: ggml/src/ggml-quants.c's quantize_row_nvfp4_ref,
quantize_row_mxfp4_ref, dequantize_row_nvfp4 and dequantize_row_mxfp4, compiled
here from the llama.cpp sources that the llama-cpp-python 0.3.36 sdist vendors
(vendor/llama.cpp, PyPI; nothing of it is committed) into a shared library that
exports only those four functions (-ffp-contract=off, as our build).

The inputs are those of test_ggml_oracle.py and test_ggml_mxfp4_oracle.py (ties
under many scales, scale edges, amaxes a few ulps below powers of two, zeros,
-0, fp32 subnormals), plus NaN elements, which the C's `amax < fabsf(v)` skips.
Left out: MXFP4 blocks whose amax is below 2^-125 or +Inf, where the C converts
a negative or infinite float to uint8_t (undefined behaviour; the recipe's
choice there is checked in tests/check_recipes_production.c).

Sources: $LLAMA_CPP_SRC (a llama.cpp checkout, or any folder holding
ggml/src/ggml-quants.c), else build/third-party-llama (where .ci/run unpacks the
sdist). Skipped cleanly where neither exists or no C compiler is found."""
import ctypes
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    from safetensors.numpy import load_file
except ImportError:  # pragma: no cover
    np = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
NVFP4 = os.environ.get("NVFP4")
EXPORTS = ("quantize_row_nvfp4_ref", "quantize_row_mxfp4_ref", "dequantize_row_nvfp4", "dequantize_row_mxfp4")


def ggml_root():
    """The folder holding ggml/src/ggml-quants.c, or None."""
    cands = []
    if os.environ.get("LLAMA_CPP_SRC"):
        cands.append(os.environ["LLAMA_CPP_SRC"])
    cands += glob.glob(os.path.join(HERE, "..", "..", "build", "third-party-llama", "*", "vendor", "llama.cpp"))
    for c in cands:
        for root in (c, os.path.join(c, "vendor", "llama.cpp")):
            if os.path.isfile(os.path.join(root, "ggml", "src", "ggml-quants.c")):
                return root
    return None


def build_library(root, out_dir):
    """Compiles ggml-quants.c into a library exporting EXPORTS only (the rest is dropped by --gc-sections, so the
    functions of ggml.c it would call are never needed). Returns its path."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    vmap = os.path.join(out_dir, "exports.map")
    with open(vmap, "w") as f:
        f.write("{ global: %s; local: *; };\n" % "; ".join(EXPORTS))
    lib = os.path.join(out_dir, "libggml_quants.so")
    g = os.path.join(root, "ggml")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-std=gnu11", "-ffp-contract=off", "-ffunction-sections",
                    "-fdata-sections", "-I", os.path.join(g, "include"), "-I", os.path.join(g, "src"),
                    os.path.join(g, "src", "ggml-quants.c"), "-o", lib,
                    "-Wl,--gc-sections,--version-script=" + vmap + ",--no-undefined", "-lm"],
                   check=True, capture_output=True, text=True)
    return lib


def nan_cases(rng):
    """NaN elements in otherwise ordinary blocks (the C's amax skips them; its nearest search gives them code 0)."""
    x = rng.standard_normal((4, 64)).astype(np.float32)
    x[0, 3] = np.nan
    x[1, 0:16] = np.nan
    x[2, 40] = np.nan
    x[3, ::7] = np.nan
    return [("nan", x)]


@unittest.skipIf(np is None or not (NVFP4 and os.path.exists(NVFP4)), "needs numpy, safetensors and $NVFP4")
class GgmlC(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        root = ggml_root()
        if root is None or not (shutil.which("cc") or shutil.which("gcc")):
            raise unittest.SkipTest("llama.cpp sources not found: set LLAMA_CPP_SRC, or run .ci/run's download "
                                    "into build/third-party-llama")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.lib = ctypes.CDLL(build_library(root, cls.tmp.name))
        for name in EXPORTS:
            getattr(cls.lib, name).restype = None
            getattr(cls.lib, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def quantize_c(self, fn, x, block_bytes, qk):
        x = np.ascontiguousarray(x, dtype=np.float32)
        out = np.zeros(x.size // qk * block_bytes, dtype=np.uint8)
        getattr(self.lib, fn)(x.ctypes.data, out.ctypes.data, x.size)
        return out.reshape(-1, block_bytes)

    def dequantize_c(self, fn, blocks, n):
        blocks = np.ascontiguousarray(blocks)
        out = np.zeros(n, dtype=np.float32)
        getattr(self.lib, fn)(blocks.ctypes.data, out.ctypes.data, n)
        return out

    def ours(self, name, x, recipe, ggml_out=False):
        src = os.path.join(self.tmp.name, name + ".npy")
        np.save(src, x)
        bundle = os.path.join(self.tmp.name, "%s.%s.safetensors" % (name, recipe))
        args = [NVFP4, "quantize", src, "-o", bundle, "--recipe", recipe]
        raw = None
        if ggml_out:
            blocks = os.path.join(self.tmp.name, name + ".ggml")
            args += ["--ggml-out", blocks]
        r = subprocess.run(args, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        if ggml_out:
            with open(blocks, "rb") as f:
                raw = f.read()
        return load_file(bundle), raw

    def test_nvfp4_blocks_byte_for_byte(self):
        import test_ggml_oracle as T
        total = 0
        for name, x in T.tensors() + nan_cases(np.random.default_rng(11)):
            with self.subTest(tensor=name):
                c = self.quantize_c("quantize_row_nvfp4_ref", x, 36, 64)
                b, raw = self.ours("nv-" + name, x, "ggml", ggml_out=True)
                self.assertEqual(raw, c.tobytes(), "%s: block_nvfp4 bytes differ from llama.cpp's C" % name)
                deq = self.dequantize_c("dequantize_row_nvfp4", c, x.size).reshape(x.shape)
                diff = int((b["dequant"].view(np.uint32) != deq.view(np.uint32)).sum())
                self.assertEqual(diff, 0, "%s: %d dequantized values differ from dequantize_row_nvfp4" % (name, diff))
                total += len(raw) + 4 * deq.size
        print("ggml (NVFP4): %d bytes compared with llama.cpp's C, all identical" % total)

    def test_mxfp4_byte_for_byte(self):
        import test_ggml_mxfp4_oracle as T
        total = 0
        for name, x in T.tensors() + nan_cases(np.random.default_rng(12)):
            with self.subTest(tensor=name):
                rows, cols = x.shape
                amax = np.nanmax(np.abs(x.reshape(-1, 32)), axis=1)
                defined = ~(((amax > 0) & (amax < 2.0 ** -125)) | np.isinf(amax))  # the C's uint8_t cast
                c = self.quantize_c("quantize_row_mxfp4_ref", x, 17, 32)
                b, _ = self.ours("mx-" + name, x, "ggml-mxfp4")
                e = c[:, 0].reshape(rows, cols // 32)
                qs = c[:, 1:]
                codes = np.concatenate([qs & 0x0F, qs >> 4], axis=1).reshape(rows, cols)  # j and j + 16
                packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
                d = defined.reshape(rows, cols // 32)
                self.assertTrue(d.any())
                self.assertEqual(int((b["scale"][d] != e[d]).sum()), 0, "%s: scale bytes differ" % name)
                dd = np.repeat(d, 16, axis=1)  # 16 code bytes per block
                self.assertEqual(int((b["data"][dd] != packed[dd]).sum()), 0, "%s: code bytes differ" % name)
                deq = self.dequantize_c("dequantize_row_mxfp4", c, x.size).reshape(rows, cols)
                de = np.repeat(d, 32, axis=1)
                diff = int((b["dequant"].view(np.uint32)[de] != deq.view(np.uint32)[de]).sum())
                self.assertEqual(diff, 0, "%s: %d dequantized values differ from dequantize_row_mxfp4" % (name, diff))
                total += int(d.sum()) * (1 + 16 + 4 * 32)
        print("ggml-mxfp4: %d bytes compared with llama.cpp's C, all identical" % total)

    def test_the_comparison_can_fail(self):
        """mxfp4-floor (torchao's OCP rule) is not ggml's: the same comparison finds differing scales."""
        import test_ggml_mxfp4_oracle as T
        name, x = [t for t in T.tensors() if t[0] == "log2-edges"][0]
        c = self.quantize_c("quantize_row_mxfp4_ref", x, 17, 32)
        b, _ = self.ours("floor-" + name, x, "mxfp4-floor")
        self.assertGreater(int((b["scale"] != c[:, 0].reshape(b["scale"].shape)).sum()), 0)


if __name__ == "__main__":
    unittest.main()

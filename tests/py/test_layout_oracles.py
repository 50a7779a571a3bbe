"""test_layout_oracles.py - the scale layouts of `nvfp4 quantize --scale-layout`
(docs/semantics.md, "Scale layouts") byte for byte against FlashInfer's own
offset functions: get_sf_out_offset_8x4 and get_sf_out_offset_128x4 of
flashinfer-python 0.7.4 (csrc/nv_internal/tensorrt_llm/kernels/
quantization_utils.cuh, the TRT-LLM kernels FlashInfer ships), whose source is
cut out of the installed header unchanged and compiled for this CPU with the
C++ compiler (they are `__device__ __host__` integer arithmetic; the two CUDA
qualifiers are defined empty). For each shape, including ones that need row
and block padding, every scale byte of the bundle's scale_swizzled must sit at
the oracle's offset, every other byte must be 0 (quantize_with_block_size
writes 0 into the padding), and the size must be the oracle's padded size
(FlashInfer's _compute_swizzled_layout_sf_size with row_size 8 or 128).

Skipped unless numpy, safetensors, flashinfer, a C++ compiler and $NVFP4 are there."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

try:
    import numpy as np
    from safetensors.numpy import load_file
    import flashinfer
except ImportError:  # pragma: no cover
    np = None

NVFP4 = os.environ.get("NVFP4")
SHAPES = [(16, 96), (1, 16), (9, 80), (130, 112), (256, 64), (40, 48)]


def _header():
    return os.path.join(os.path.dirname(flashinfer.__file__), "data", "csrc", "nv_internal", "tensorrt_llm",
                        "kernels", "quantization_utils.cuh")


def _function(src, name):
    """The 3-argument overload of `name` (int mIdx, int kIdx, int numCols...), its text unchanged."""
    m = re.search(r"inline __device__ __host__ int64_t %s\(int mIdx, int kIdx, int \w+\) \{" % name, src)
    if not m:
        raise AssertionError("%s not found in %s" % (name, _header()))
    depth, i = 0, m.end() - 1
    while True:
        depth += {"{": 1, "}": -1}.get(src[i], 0)
        i += 1
        if depth == 0:
            return src[m.start():i]


@unittest.skipIf(np is None or not NVFP4 or shutil.which("c++") is None, "needs numpy, safetensors, flashinfer, c++, $NVFP4")
class FlashInferLayoutOracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        src = open(_header()).read()
        prog = os.path.join(cls.tmp, "oracle.cc")
        with open(prog, "w") as f:
            f.write("#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n#define __device__\n#define __host__\n")
            f.write(_function(src, "get_sf_out_offset_128x4") + "\n" + _function(src, "get_sf_out_offset_8x4") + "\n")
            f.write("int main(int c, char **v) {\n  int r = atoi(v[1]), k = atoi(v[2]), l = atoi(v[3]);\n"
                    "  for (int i = 0; i < r; i++) for (int j = 0; j < k; j++)\n"
                    "    printf(\"%lld\\n\", (long long)(l == 8 ? get_sf_out_offset_8x4(i, j, k)"
                    " : get_sf_out_offset_128x4(i, j, k)));\n  return 0;\n}\n")
        cls.exe = os.path.join(cls.tmp, "oracle")
        subprocess.run(["c++", "-O1", "-o", cls.exe, prog], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def oracle_offsets(self, rows, cols, tile_rows):
        out = subprocess.run([self.exe, str(rows), str(cols), str(tile_rows)], check=True, capture_output=True, text=True)
        return np.array([int(v) for v in out.stdout.split()], dtype=np.int64).reshape(rows, cols)

    def bundle(self, rows, cols, layout):
        rng = np.random.default_rng(rows * 1000 + cols)
        # block magnitudes spread over 2^-6..2^6 so that neighbouring scale bytes differ
        x = rng.standard_normal((rows, cols)) * np.exp2(rng.integers(-6, 7, (rows, cols // 16))).repeat(16, 1)
        inp, out = os.path.join(self.tmp, "x.npy"), os.path.join(self.tmp, "b_%s.safetensors" % layout)
        np.save(inp, x.astype("<f4"))
        subprocess.run([NVFP4, "quantize", inp, "-o", out, "--scale-layout", layout], check=True, capture_output=True)
        return load_file(out)

    def check(self, rows, cols, layout, tile_rows):
        b = self.bundle(rows, cols, layout)
        lin, z = b["scale"], b["scale_swizzled"].reshape(-1)
        sr, sc = lin.shape
        off = self.oracle_offsets(sr, sc, tile_rows)
        padded = (-(-sr // tile_rows) * tile_rows) * (-(-sc // 4) * 4)  # _compute_swizzled_layout_sf_size
        self.assertEqual(z.size, padded)
        expect = np.zeros(padded, dtype=np.uint8)
        expect[off.reshape(-1)] = lin.reshape(-1)
        self.assertEqual(len(set(off.reshape(-1).tolist())), sr * sc)  # the oracle is a permutation
        np.testing.assert_array_equal(z, expect)

    def test_8x4_against_get_sf_out_offset_8x4(self):
        for rows, cols in SHAPES:
            with self.subTest(rows=rows, cols=cols):
                self.check(rows, cols, "8x4", 8)

    def test_128x4_against_get_sf_out_offset_128x4(self):
        for rows, cols in SHAPES:
            with self.subTest(rows=rows, cols=cols):
                self.check(rows, cols, "128x4", 128)

    def test_hand_computed_position_16x96(self):
        # scale (row 9, block 5) of a 16 x 96 input: 64 + 32 + 4 + 1 in 8x4 (docs/semantics.md)
        self.assertEqual(int(self.oracle_offsets(16, 6, 8)[9, 5]), 101)
        self.assertEqual(int(self.oracle_offsets(16, 6, 128)[9, 5]), 657)


if __name__ == "__main__":
    unittest.main()

"""test_dot_scaled_packing.py - what Triton's tl.dot_scaled takes (Triton 3.9.0,
python/triton/language/core.py dot_scaled, semantic.py dot_scaled /
verify_scaled_shape, runtime/interpreter.py _prepare_dot_scaled_operand), run on
this CPU by the Triton interpreter (TRITON_INTERPRET=1), fed with the bytes of an
`nvfp4 quantize` bundle (docs/semantics.md, "Scale layouts", dot_scaled):

* the scales are the bundle's linear `scale` ([rows, K/block]) in both packings:
  `lhs_scale` [M, K/g], `rhs_scale` [N, K/g] ("Do NOT transpose rhs_scale"); the
  MN-major packing is not a scale layout;
* K-packed codes (the default) are the bundle's `data` for lhs ([M, K/2]) and its
  bytes transposed for rhs ([K/2, N]);
* MN-packed codes (lhs_k_pack / rhs_k_pack False) pair two ROWS of the quantized
  matrix in one byte: byte (k, j) of the rhs [K, N/2] holds code (2j, k) in the
  low nibble and (2j+1, k) in the high one (the lhs [M/2, K] is its transpose),
  which is the bundle's codes stored transposed: `verify` names it
  `transposed-data`.

Each product with the identity must equal the bundle's dequant exactly (E2M1
times a power of two is exact in bf16 and fp32); the K-packed bytes read as
MN-packed must not. MXFP4 (mxfp4-rceil): the interpreter decodes every scale
byte as UE8M0 (`_dot_scaled_scale_to_f32`), so NVFP4's E4M3 scales cannot run
there; the codes are E2M1 and packed alike in both formats.

Skipped unless numpy, safetensors, torch, triton and $NVFP4 are there."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

# Each Triton module runs in a process of its own (NVFP4_TRITON_CHILD=1, which RerunInterpreted sets):
# the interpreter has to be on before triton is first imported, and two modules that load Triton kernels
# into one process (unittest discover imports them all first) break each other's interpreted launches.
NEEDS_FRESH_PROCESS = os.environ.get("NVFP4_TRITON_CHILD") != "1"
os.environ.setdefault("TRITON_INTERPRET", "1")

try:
    import numpy as np
    import torch
    from safetensors.numpy import load_file, save_file
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    np = None

NVFP4 = os.environ.get("NVFP4")
N, K = 32, 64  # the quantized matrix [N, K], blocks of 32 along K

if np is not None:
    @triton.jit
    def _rhs_times(A, B, BS, C, N: tl.constexpr, K: tl.constexpr, BR: tl.constexpr, BC: tl.constexpr,
                   KPACK: tl.constexpr):
        a = tl.load(A + tl.arange(0, K)[:, None] * K + tl.arange(0, K)[None, :])
        b = tl.load(B + tl.arange(0, BR)[:, None] * BC + tl.arange(0, BC)[None, :])
        bs = tl.load(BS + tl.arange(0, N)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
        c = tl.dot_scaled(a, None, "bf16", b, bs, "e2m1", rhs_k_pack=KPACK)
        tl.store(C + tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :], c)

    @triton.jit
    def _lhs_times(A, AS, B, C, M: tl.constexpr, K: tl.constexpr, AR: tl.constexpr, AC: tl.constexpr,
                   KPACK: tl.constexpr):
        a = tl.load(A + tl.arange(0, AR)[:, None] * AC + tl.arange(0, AC)[None, :])
        s = tl.load(AS + tl.arange(0, M)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
        b = tl.load(B + tl.arange(0, K)[:, None] * K + tl.arange(0, K)[None, :])
        c = tl.dot_scaled(a, s, "e2m1", b, None, "bf16", lhs_k_pack=KPACK)
        tl.store(C + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :], c)


def mn_packed(data):
    """The bundle's K-packed codes [rows, cols/2] -> the rhs MN-packed bytes [cols, rows/2]."""
    codes = np.empty((data.shape[0], data.shape[1] * 2), np.uint8)
    codes[:, 0::2], codes[:, 1::2] = data & 15, data >> 4
    t = codes.T
    return (t[:, 0::2] | (t[:, 1::2] << 4)).astype(np.uint8)


@unittest.skipIf(np is None or not NVFP4 or NEEDS_FRESH_PROCESS, "needs numpy, safetensors, torch, triton, $NVFP4")
class DotScaledPacking(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        rng = np.random.default_rng(2)
        x = rng.standard_normal((N, K)) * np.exp2(rng.integers(-6, 7, (N, K // 32))).repeat(32, 1)
        inp, cls.bundle_path = os.path.join(cls.tmp, "w.npy"), os.path.join(cls.tmp, "w.safetensors")
        np.save(inp, x.astype("<f4"))
        subprocess.run([NVFP4, "quantize", inp, "-o", cls.bundle_path, "--recipe", "mxfp4-rceil"], check=True,
                       capture_output=True)
        cls.b = load_file(cls.bundle_path)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def rhs(self, codes, kpack):
        out = torch.zeros(K, N, dtype=torch.float32)
        _rhs_times[(1,)](torch.eye(K, dtype=torch.bfloat16), torch.from_numpy(np.ascontiguousarray(codes)),
                         torch.from_numpy(self.b["scale"].copy()), out, N, K, codes.shape[0], codes.shape[1], kpack)
        return out.numpy()

    def lhs(self, codes, kpack):
        out = torch.zeros(N, K, dtype=torch.float32)
        _lhs_times[(1,)](torch.from_numpy(np.ascontiguousarray(codes)), torch.from_numpy(self.b["scale"].copy()),
                         torch.eye(K, dtype=torch.bfloat16), out, N, K, codes.shape[0], codes.shape[1], kpack)
        return out.numpy()

    def test_scales_are_the_linear_scale_in_both_packings(self):
        self.assertEqual(self.b["scale"].shape, (N, K // 32))
        w = self.b["dequant"]
        self.assertGreater(len(set(self.b["scale"].reshape(-1).tolist())), 8)
        np.testing.assert_array_equal(self.rhs(self.b["data"].T, True), w.T)
        np.testing.assert_array_equal(self.rhs(mn_packed(self.b["data"]), False), w.T)
        np.testing.assert_array_equal(self.lhs(self.b["data"], True), w)
        np.testing.assert_array_equal(self.lhs(mn_packed(self.b["data"]).T, False), w)

    def test_k_packed_bytes_read_as_mn_packed_are_wrong(self):
        wrong = self.rhs(self.b["data"].T.reshape(K, N // 2), False)
        self.assertGreater(int((wrong != self.b["dequant"].T).sum()), K * N // 2)

    def test_verify_names_mn_packed_codes(self):
        out = os.path.join(self.tmp, "mn.safetensors")
        save_file({"data": mn_packed(self.b["data"]).reshape(N, K // 2).copy(), "scale": self.b["scale"]}, out)
        r = subprocess.run([NVFP4, "verify", "--expected", self.bundle_path, "--actual", out], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("scale              0 of %d differ (match)" % (N * K // 32), r.stdout)
        self.assertIn("cause transposed-data: data: the codes are the expected ones stored transposed", r.stdout)
        self.assertIn("MN-major packing of Triton's dot_scaled", r.stdout)


@unittest.skipUnless(NEEDS_FRESH_PROCESS and NVFP4,
                     "this is the child process: the tests above run here")
class RerunInterpreted(unittest.TestCase):
    def test_in_a_fresh_process(self):
        env = dict(os.environ, TRITON_INTERPRET="1", NVFP4_TRITON_CHILD="1")
        r = subprocess.run([sys.executable, "-m", "unittest", "-v", "test_dot_scaled_packing"], env=env,
                           cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()

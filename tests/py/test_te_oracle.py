"""test_te_oracle.py - the C library's `te` recipe against an independent
numpy float32 transcription of the TE chain (tests/oracles/te_chain.py), on
seeded random tensors (normal, laplace, channel outliers, bf16-exact) and
adversarial ones (values at scaled E2M1 ties, E4M3 scale ties): zero
differing bytes in codes, scales and amax. Uses libnvfp4.so through ctypes
(found next to $NVFP4: <build>/lib/libnvfp4.so)."""
import ctypes as C
import os
import sys
import unittest

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "oracles"))


def find_lib():
    cands = []
    if os.environ.get("NVFP4"):
        cands.append(os.path.join(os.path.dirname(os.path.dirname(os.environ["NVFP4"])), "lib", "libnvfp4.so"))
    cands.append(os.path.join(HERE, "..", "..", "build", "lib", "libnvfp4.so"))
    for c in cands:
        if os.path.exists(c):
            return c
    return None


def load_lib(path):
    """libnvfp4.so at path through the package's own ctypes mirrors of the C
    structures (python/nvfp4kit/_lib.py, checked against the headers by
    python/tests/test_nvfp4kit_abi.py): one copy of each declaration."""
    os.environ["NVFP4KIT_LIBDIR"] = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
    from nvfp4kit import _lib
    return _lib


BLOCK_1X16, BLOCK_16X16 = 1, 2
DTYPE_F32, DTYPE_BF16 = 0, 1


def bf16_round(x):
    """float32 -> nearest bf16 (RNE) as float32, and its 16-bit pattern."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return (r.astype(np.uint32) << 16).view(np.float32), r


@unittest.skipIf(np is None, "numpy not installed")
class TeOracle(unittest.TestCase):
    tensors = 0
    bytes_compared = 0

    @classmethod
    def setUpClass(cls):
        path = find_lib()
        if path is None:
            raise unittest.SkipTest("libnvfp4.so not built")
        cls.api = load_lib(path)
        cls.lib = cls.api.lib
        import te_chain
        cls.te = te_chain

    @classmethod
    def tearDownClass(cls):
        sys.stderr.write("\n[te oracle] %d tensors matched exactly: %d bytes compared (codes + scales + amax)\n"
                         % (cls.tensors, cls.bytes_compared))

    def quantize_c(self, x, block, dtype=DTYPE_F32, bits=None):
        o = self.api.QuantOpts()
        self.lib.nvfp4_quant_opts_init(C.byref(o))
        o.recipe = b"te"
        o.block = block
        o.rowwise = True
        o.columnwise = True
        q, err = self.api.Quantized(), self.api.CError()
        buf = np.ascontiguousarray(bits if dtype == DTYPE_BF16 else x)
        st = self.lib.nvfp4_quantize(buf.ctypes.data, dtype, x.shape[0], x.shape[1], C.byref(o), C.byref(q), C.byref(err))
        self.assertEqual(st, 0, err.message.decode())
        out = {}
        for name, t in (("row", q.row), ("col", q.col)):
            data = np.ctypeslib.as_array(t.data, shape=(t.data_bytes,)).copy()
            scale = np.ctypeslib.as_array(t.scale, shape=(t.scale_rows * t.scale_cols,)).copy()
            out[name] = (data, scale, np.float32(t.amax))
        self.lib.nvfp4_quantized_free(C.byref(q))
        return out

    def check(self, x, block=BLOCK_1X16, bf16=False):
        x = np.asarray(x, dtype=np.float32)
        bits = None
        if bf16:
            x, bits = bf16_round(x)
        got = self.quantize_c(x, block, DTYPE_BF16 if bf16 else DTYPE_F32, bits)
        oblock = (16, 16) if block == BLOCK_16X16 else 16
        amax = self.te.F32(np.nanmax(np.abs(x)))
        for name, src in (("row", x), ("col", np.ascontiguousarray(x.T))):
            codes, scales, a = self.te.quantize_rows(src, oblock, amax)
            gd, gs, ga = got[name]
            nd = int(np.count_nonzero(gd != codes.reshape(-1)))
            ns = int(np.count_nonzero(gs != scales.reshape(-1)))
            self.assertEqual(nd, 0, "%s: %d code bytes differ" % (name, nd))
            self.assertEqual(ns, 0, "%s: %d scale bytes differ" % (name, ns))
            self.assertEqual(np.float32(ga).view(np.uint32), np.float32(a).view(np.uint32))
            TeOracle.bytes_compared += gd.size + gs.size + 4
        TeOracle.tensors += 1

    def test_random(self):
        rng = np.random.default_rng(20260829)
        for trial in range(12):
            rows, cols = 16 * int(rng.integers(1, 9)), 16 * int(rng.integers(1, 9))
            scale = 10.0 ** rng.uniform(-6, 6)
            self.check(rng.standard_normal((rows, cols)) * scale)
            self.check(rng.laplace(size=(rows, cols)) * scale)
            x = rng.standard_normal((rows, cols))
            x[:, rng.integers(0, cols, size=2)] *= 1000.0  # channel outliers
            self.check(x)
            self.check(rng.standard_normal((rows, cols)) * scale, bf16=True)
            self.check(rng.standard_normal((rows, cols)) * scale, block=BLOCK_16X16)
            self.check(rng.laplace(size=(rows, cols)), block=BLOCK_16X16, bf16=True)

    def test_e2m1_ties(self):
        """Elements at scale*tie for every E2M1 midpoint, and one float on
        each side, across many block scales (S_enc = 1 via amax 2688)."""
        rng = np.random.default_rng(7)
        ties = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], dtype=np.float32)
        for trial in range(8):
            x = np.zeros((64, 64), dtype=np.float32)
            for r in range(64):
                for b in range(4):
                    s = np.float32(2.0 ** rng.integers(-8, 8) * (1 + rng.integers(0, 8) / 8))
                    blk = x[r, 16 * b:16 * b + 16]
                    blk[0] = s * np.float32(6)
                    t = ties[rng.integers(0, 7, size=15)] * s
                    sign = rng.choice([-1.0, 1.0], size=15).astype(np.float32)
                    nudge = rng.integers(-1, 2, size=15)
                    t = np.where(nudge < 0, np.nextafter(t, np.float32(0)), np.where(nudge > 0, np.nextafter(t, np.float32(np.inf)), t))
                    blk[1:] = t * sign
            x[0, 0] = 2688.0
            self.check(x)
            self.check(x, bf16=True)

    def test_e4m3_scale_ties(self):
        """Block amaxes whose bamax*fl(1/6) lands on or next to an E4M3
        midpoint (S_enc = 1)."""
        mids = (self.te.E4M3_VALUES[1:] + self.te.E4M3_VALUES[:-1]) / 2
        inv6 = float(np.float32(1) / np.float32(6))
        cands = []
        for m in mids:
            a = np.float32(m / inv6)
            for k in range(-2, 3):
                v = a
                for _ in range(abs(k)):
                    v = np.nextafter(v, np.float32(np.inf) if k > 0 else np.float32(0))
                cands.append(v)
        cands = np.array(cands, dtype=np.float32)
        n = (len(cands) + 15) // 16 * 16
        x = np.zeros((n, 16), dtype=np.float32)
        x[:len(cands), 0] = cands
        x[:, 1] = x[:, 0] * np.float32(0.3)
        x[0, 0] = 2688.0
        self.check(x)

    def test_specials(self):
        x = np.zeros((32, 32), dtype=np.float32)
        x[0, :4] = [-0.0, 1e-30, -1e-30, 3.0]
        x[1, :] = 1e-3  # underflowing block relative to amax
        x[2, 0] = 2688.0
        x[3, :] = -0.0
        self.check(x)
        self.check(np.zeros((16, 16), dtype=np.float32))


if __name__ == "__main__":
    unittest.main()

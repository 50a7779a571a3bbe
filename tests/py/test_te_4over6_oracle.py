"""test_te_4over6_oracle.py - the C library's recipes te-4over6, te-4over6-mse,
te-4over6-fast, te-4over6-mse-fast, te-4over6-448 (1x16 and 16x16), te-rowscaled and
te-pow2 against an independent numpy transcription of TransformerEngine's
Python reference quantizer (tests/oracles/te_ref_variants.py), byte for
byte, on seeded random tensors and adversarial ones (blocks on the map-to-4
and map-to-6 grids, exact ties between the candidates, zero blocks and rows,
-0.0, Inf, power-of-two boundaries). TransformerEngine itself does not
install without CUDA, and fouroversix 1.0.5 builds CUDA extensions in its
setup, so neither runs here.

The only differences allowed are the documented ones (docs/semantics.md,
"Recipes"): the reference's cast gives 0x0 where the kernels (and the
recipes) give 0x8 for a scaled value of -0.0; te-pow2 takes the exact
ceil(log2(amax/6)) where the reference's fp32 log2 can round to the power
of two below. NaN inputs are not compared (the reference's torch.amax
propagates them; check_recipes_te covers the kernels' rule)."""
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
sys.path.insert(0, HERE)

if np is not None:
    from test_te_oracle import find_lib, load_lib  # libnvfp4 through the package's ctypes mirrors

BLOCK_1X16, BLOCK_16X16, BLOCK_1X32 = 1, 2, 3
VARIANTS = {"te-4over6": ("MAE", False, 256), "te-4over6-mse": ("MSE", False, 256),
            "te-4over6-fast": ("MAE", True, 256), "te-4over6-mse-fast": ("MSE", True, 256),
            "te-4over6-448": ("MAE", False, 448)}  # err mode, err_use_fast_math, nvfp4_e4m3_max


def unpack(p):
    return np.stack([p & 0xF, p >> 4], axis=-1).reshape(p.shape[0], -1)


@unittest.skipIf(np is None, "numpy not installed")
class Te4over6Oracle(unittest.TestCase):
    stats = {"tensors": 0, "bytes": 0, "negzero": 0, "log2": 0, "fast_vs_exact": 0, "blocks": 0}

    @classmethod
    def setUpClass(cls):
        path = find_lib()
        if path is None:
            raise unittest.SkipTest("libnvfp4.so not built")
        cls.api = load_lib(path)
        cls.lib = cls.api.lib
        import te_ref_variants
        cls.ref = te_ref_variants

    @classmethod
    def tearDownClass(cls):
        s = cls.stats
        sys.stderr.write("\n[te 4over6/rowscaled/pow2 oracle] %d tensors, %d bytes compared; allowed: %d codes of -0.0, "
                         "%d pow2 blocks of the fp32 log2; te-4over6-fast picked other bytes than te-4over6 in %d of "
                         "%d blocks\n" % (s["tensors"], s["bytes"], s["negzero"], s["log2"], s["fast_vs_exact"],
                                          s["blocks"]))

    def quantize_c(self, recipe, x, block):
        o = self.api.QuantOpts()
        self.lib.nvfp4_quant_opts_init(C.byref(o))
        o.recipe = recipe.encode()
        o.block = block
        q, err = self.api.Quantized(), self.api.CError()
        buf = np.ascontiguousarray(x, dtype=np.float32)
        st = self.lib.nvfp4_quantize(buf.ctypes.data, 0, x.shape[0], x.shape[1], C.byref(o), C.byref(q), C.byref(err))
        self.assertEqual(st, 0, err.message.decode())
        t = q.row
        data = np.ctypeslib.as_array(t.data, shape=(t.data_bytes,)).copy().reshape(t.rows, -1)
        scale = np.ctypeslib.as_array(t.scale, shape=(t.scale_rows * t.scale_cols,)).copy().reshape(t.scale_rows, -1)
        ramax = np.ctypeslib.as_array(t.row_amax, shape=(t.rows,)).copy() if t.row_amax else None
        amax = np.float32(t.amax)
        self.lib.nvfp4_quantized_free(C.byref(q))
        return data, scale, amax, ramax

    def same_codes(self, x, got, want):
        """Codes equal except 0x8 (ours) vs 0x0 (reference) where x is -0.0."""
        g, w = unpack(got), unpack(want)
        negzero = (x == 0) & np.signbit(x)
        ok = (g == w) | (negzero & (g == 8) & (w == 0))
        self.assertTrue(ok.all(), "%d codes differ" % int(np.count_nonzero(~ok)))
        Te4over6Oracle.stats["negzero"] += int(np.count_nonzero(g != w))
        Te4over6Oracle.stats["bytes"] += got.size

    def check_4over6(self, x, tiles=(BLOCK_1X16, BLOCK_16X16)):
        x = np.asarray(x, dtype=np.float32)
        for block in tiles:
            ty = 16 if block == BLOCK_16X16 else 1
            picks = {}
            for name, (mode, fast, bound) in VARIANTS.items():
                data, scale, amax, _ = self.quantize_c(name, x, block)
                rd, rs, ramax = self.ref.quantize_4over6(x, mode, fast, ty, bound)
                self.assertEqual(np.count_nonzero(scale != rs), 0, "%s %s: scales differ" % (name, block))
                self.same_codes(x, data, rd)
                self.assertEqual(amax.view(np.uint32), ramax.view(np.uint32))
                Te4over6Oracle.stats["bytes"] += scale.size + 4
                picks[name] = scale
            Te4over6Oracle.stats["fast_vs_exact"] += int(np.count_nonzero(picks["te-4over6"] != picks["te-4over6-fast"]))
            Te4over6Oracle.stats["blocks"] += picks["te-4over6"].size
        Te4over6Oracle.stats["tensors"] += 1

    def test_4over6_random(self):
        rng = np.random.default_rng(20261202)
        for trial in range(6):
            rows, cols = 16 * int(rng.integers(1, 5)), 16 * int(rng.integers(1, 6))
            scale = 10.0 ** rng.uniform(-5, 5)
            self.check_4over6(rng.standard_normal((rows, cols)) * scale)
            self.check_4over6(rng.laplace(size=(rows, cols)) * scale)
            x = rng.standard_normal((rows, cols))
            x[:, rng.integers(0, cols, size=2)] *= 1000.0
            self.check_4over6(x)

    def test_4over6_grids_and_ties(self):
        """Blocks whose elements lie on the map-to-4 grid (s*1.5*fp4), the
        map-to-6 grid (s*fp4) or both, with a shared block amax, so that the
        two candidates' errors are equal or nearly equal; -0.0 and zeros."""
        rng = np.random.default_rng(11)
        fp4 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float32)
        for trial in range(6):
            x = np.zeros((32, 64), dtype=np.float32)
            for r in range(32):
                for b in range(4):
                    s = np.float32(2.0 ** rng.integers(-6, 6))
                    blk = x[r, 16 * b:16 * b + 16]
                    kind = rng.integers(0, 4)
                    g4 = fp4[rng.integers(0, 7, size=16)] * np.float32(1.5) * s
                    g6 = fp4[rng.integers(0, 8, size=16)] * s
                    blk[:] = g4 if kind == 0 else g6 if kind == 1 else np.where(rng.random(16) < 0.5, g4, g6)
                    if kind == 3:
                        blk[:] = 0
                        blk[rng.integers(0, 16)] = -0.0
                    blk[0] = s * np.float32(6) if kind != 3 else blk[0]
                    blk *= rng.choice([-1.0, 1.0], size=16).astype(np.float32)
            x[0, 0] = 1536.0  # S_enc = 1: the error terms are exact, ties are exact ties
            self.check_4over6(x)
            x[0, 0] = 1000.0  # S_enc = 1.536: rounded scales, near-ties
            self.check_4over6(x)
            x[0, 0] = 2688.0  # te-4over6-448: S_enc = 1 there
            self.check_4over6(x)
            # blocks whose map-to-4 scale exceeds 448 under the bound 448 and is clamped
            x[1, 16:32] = np.linspace(-1900, 1900, 16, dtype=np.float32)
            x[2, 0:16] = np.float32(1800)
            self.check_4over6(x)

    def test_4over6_specials(self):
        x = np.zeros((16, 32), dtype=np.float32)
        x[0, :4] = [-0.0, 1e-30, -1e-30, 3.0]
        x[1, :] = 1e-3
        x[3, :] = -0.0
        self.check_4over6(x)
        self.check_4over6(np.zeros((16, 16), dtype=np.float32))
        y = np.zeros((16, 32), dtype=np.float32)
        y[0, 0], y[0, 16:20] = np.inf, [6, 4.5, 2.25, 0.75]
        self.check_4over6(y)

    def test_rowscaled(self):
        rng = np.random.default_rng(5)
        for trial in range(8):
            rows, cols = int(rng.integers(1, 40)), 16 * int(rng.integers(1, 6))
            x = (rng.standard_normal((rows, cols)) * 10.0 ** rng.uniform(-4, 4, size=(rows, 1))).astype(np.float32)
            x[rng.integers(0, rows)] = 0  # a zero row
            if rows > 2:
                x[1, 0] = -0.0
                x[2, :] = -0.0
            data, scale, amax, ramax = self.quantize_c("te-rowscaled", x, BLOCK_1X16)
            rd, rs, rra = self.ref.quantize_rowscaled(x)
            self.assertEqual(np.count_nonzero(scale != rs), 0)
            self.same_codes(x, data, rd)
            self.assertTrue(np.array_equal(ramax.view(np.uint32), rra.view(np.uint32)))
            self.assertEqual(amax, np.max(rra))
            Te4over6Oracle.stats["bytes"] += scale.size + 4 * rows
            Te4over6Oracle.stats["tensors"] += 1

    def check_pow2(self, x):
        x = np.asarray(x, dtype=np.float32)
        data, scale, _, _ = self.quantize_c("te-pow2", x, BLOCK_1X32)
        ed, es = self.ref.quantize_pow2(x, exact_log2=True)
        self.assertEqual(np.count_nonzero(scale != es), 0, "pow2 scales differ from the exact transcription")
        self.same_codes(x, data, ed)
        # the reference with its fp32 log2: blocks may differ only where the
        # fp32 ceil(log2) is below the exact one
        rd, rs = self.ref.quantize_pow2(x, exact_log2=False)
        diff = scale != rs
        if diff.any():
            self.assertTrue(np.all(rs[diff].astype(int) == scale[diff].astype(int) - 1), "other pow2 difference")
        Te4over6Oracle.stats["log2"] += int(np.count_nonzero(diff))
        keep = ~np.repeat(diff, 16, axis=1)  # 16 code bytes per 1x32 block
        self.same_codes(x, np.where(keep, data, rd), rd)
        Te4over6Oracle.stats["tensors"] += 1

    def test_pow2(self):
        rng = np.random.default_rng(3)
        for trial in range(6):
            rows, cols = int(rng.integers(1, 20)), 32 * int(rng.integers(1, 5))
            self.check_pow2(rng.standard_normal((rows, cols)) * 10.0 ** rng.uniform(-30, 30))
        # block amaxes at 6 * 2^k and one to three ulps either side, k = -126..126
        ks = np.arange(-126, 126)
        base = (np.float32(6) * np.ldexp(np.float32(1), ks)).astype(np.float32)
        amaxes = [base]
        for n in (1, 2, 3):
            up, dn = base.copy(), base.copy()
            for _ in range(n):
                up, dn = np.nextafter(up, np.float32(np.inf)), np.nextafter(dn, np.float32(0))
            amaxes += [up, dn]
        a = np.concatenate(amaxes).astype(np.float32)
        x = np.zeros((len(a), 32), dtype=np.float32)
        x[:, 0] = a
        x[:, 1] = -a * np.float32(0.5)
        x[:, 2] = -0.0
        x[:3, 3:] = np.inf  # Inf blocks
        self.check_pow2(x)


if __name__ == "__main__":
    unittest.main()

"""test_decode_python.py - a kernel author's Python view of golden bundles.

With only PyPI's numpy and safetensors (ml_dtypes optional), for every recipe,
block shape, both orientations and a padded shape:
  * load the bundle that `nvfp4 quantize` writes with safetensors.numpy,
  * decode the codes (E2M1 table / E4M3 bit fields) and the block scales
    (E4M3 or UE8M0 bit fields) ourselves, in numpy,
  * reproduce `dequant` bit for bit with each recipe's documented fp32 formula
    (docs/semantics.md), evaluated in the documented order.
Then the verifier from Python: a "kernel" output written with
safetensors.numpy.save_file passes `nvfp4 verify`, and the same output with
numpy-swapped nibbles fails with the swapped-nibbles cause.
Skips cleanly when numpy, safetensors or the nvfp4 binary is missing."""
import os
import subprocess
import tempfile
import unittest

try:
    import numpy as np
    from safetensors.numpy import load_file, save_file
except ImportError:  # pragma: no cover
    np = None
try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None

NVFP4 = os.environ.get("NVFP4")

# E2M1 magnitudes of codes 0..7 (sign in bit 3)
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def f32(bits):
    return np.array([bits], dtype=np.uint32).view(np.float32)[0]


def e2m1(codes):
    mag = np.array(E2M1, dtype=np.float32)[codes & 7]
    return np.where((codes & 8) != 0, -mag, mag).astype(np.float32)


def e4m3(b):
    """E4M3 (fn): s eeee mmm, bias 7, subnormals m/8 * 2^-6, 0x7F/0xFF NaN."""
    b = b.astype(np.int64)
    e, m = (b >> 3) & 15, b & 7
    v = np.where(e == 0, m * 2.0 ** -9, (8 + m) * np.ldexp(1.0, e - 10))
    v = np.where((b & 0x7F) == 0x7F, np.nan, v)
    return np.where((b & 0x80) != 0, -v, v).astype(np.float32)


def ue8m0(b):
    b = b.astype(np.int64)
    return np.where(b == 255, np.nan, np.ldexp(1.0, b - 127)).astype(np.float32)


def unpack(data):
    return np.stack([data & 15, data >> 4], axis=-1).reshape(data.shape[0], -1)


INV2688 = None  # set in setUpClass (needs numpy)


def dequant(recipe, codes, scale, amax, block_len, rows, cols):
    """The recipe's dequantization, fp32 step by step (docs/semantics.md)."""
    sc = np.repeat(scale, block_len, axis=1)[:rows, :cols]
    if recipe == "mxfp8":
        v = e4m3(codes)[:rows, :cols]
    else:
        v = e2m1(codes)[:rows, :cols]
        if recipe == "modelopt":  # its decode table (e2m1_values) has +0 at index 8
            v = np.where(codes[:rows, :cols] == 8, np.float32(0), v).astype(np.float32)
    if recipe in ("te", "te-pyref", "exact"):
        # fp4(q) * (((float)s * amax) * fl(1/2688))
        d = (e4m3(sc) * np.float32(amax)).astype(np.float32) * INV2688
    elif recipe in ("torchao", "modelopt"):
        # fp4(q) * (g * (float)s), g = amax / 2688
        g = np.float32(amax) / np.float32(2688.0)
        d = (g * e4m3(sc)).astype(np.float32)
    else:
        d = ue8m0(sc)  # 2^(e-127), also for mxfp4-floor (torchao to_dtype: 0x00 is 2^-127)
    return (v * d.astype(np.float32)).astype(np.float32)


@unittest.skipIf(np is None, "numpy and safetensors are needed (pip install -r tests/py/requirements.txt)")
@unittest.skipIf(not NVFP4 or not os.path.exists(NVFP4 or ""), "set NVFP4 to the nvfp4 binary")
class DecodeBundles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        global INV2688
        INV2688 = f32(0x39C30C31)
        cls.tmp = tempfile.TemporaryDirectory()
        rng = np.random.default_rng(12)
        rows, cols = 64, 96
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        x *= np.float32(2.0) ** rng.integers(-6, 7, size=(rows, cols // 16, 1)).repeat(16, axis=2).reshape(rows, cols)
        x[0, :16] = np.array([6, .25, .75, 1.25, 1.75, 2.5, 3.5, 5, -6, -.25, -.75, -1.25, -1.75, -2.5, -3.5, -5],
                             dtype=np.float32)
        x[1, :16] = np.float32(-0.0)
        x[2, :16] *= np.float32(1e-7)  # a block that underflows the E4M3 scale
        cls.x = x
        cls.xin = os.path.join(cls.tmp.name, "x.safetensors")
        save_file({"x": x}, cls.xin)
        # a padded input: 40 x 40 (not a multiple of 16 or 32)
        cls.xp = x[:40, :40].copy()
        cls.xpin = os.path.join(cls.tmp.name, "xp.safetensors")
        save_file({"x": cls.xp}, cls.xpin)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def quantize(self, name, src, *args):
        out = os.path.join(self.tmp.name, name + ".safetensors")
        subprocess.run([NVFP4, "quantize", src, "-o", out, "--rowwise", "--columnwise", *args], check=True,
                       capture_output=True)
        return out

    def check_bundle(self, path, rows, cols):
        t = load_file(path)
        from safetensors import safe_open
        with safe_open(path, "np") as f:
            meta = f.metadata()
        recipe, block = meta["recipe"], meta["block"]
        bl = 32 if block == "1x32" else 16
        for sfx, (r, c) in (("", (rows, cols)), ("_t", (cols, rows))):
            data = t["data" + sfx]
            codes = data if recipe == "mxfp8" else unpack(data)
            amax = t["amax" + sfx][0] if ("amax" + sfx) in t else np.float32(0)
            got = dequant(recipe, codes, t["scale" + sfx], amax, bl, r, c)
            want = t["dequant" + sfx]
            self.assertEqual(want.shape, (r, c))
            self.assertTrue(np.array_equal(got.view(np.uint32), want.view(np.uint32)),
                            "%s %s%s: %d of %d values differ" % (recipe, block, sfx,
                                                                int((got.view(np.uint32) != want.view(np.uint32)).sum()),
                                                                want.size))
        return t, meta

    def test_every_recipe_reproduces_dequant(self):
        for recipe in ("te", "te-pyref", "torchao", "modelopt", "exact", "mxfp4-floor", "mxfp4-rceil", "mxfp8"):
            with self.subTest(recipe=recipe):
                self.check_bundle(self.quantize(recipe, self.xin, "--recipe", recipe), 64, 96)

    def test_block_shapes_padding_and_sr(self):
        self.check_bundle(self.quantize("te2d", self.xin, "--block", "16x16"), 64, 96)
        self.check_bundle(self.quantize("te32", self.xin, "--block", "1x32"), 64, 96)
        self.check_bundle(self.quantize("tesr", self.xin, "--round", "sr", "--seed", "3", "--offset", "8"), 64, 96)
        t, _ = self.check_bundle(self.quantize("tepad", self.xpin, "--pad"), 40, 40)
        self.assertEqual(t["data"].shape, (40, 24))  # 40 columns padded to 48 codes
        t, _ = self.check_bundle(self.quantize("mxpad", self.xpin, "--pad", "--recipe", "mxfp4-rceil"), 40, 40)
        self.assertEqual(t["scale"].shape, (40, 2))

    def test_specific_codes(self):
        t, meta = self.check_bundle(self.quantize("te_codes", self.xin), 64, 96)
        self.assertEqual(meta["recipe"], "te")
        codes = unpack(t["data"])
        # row 1 is -0.0: code 0x8 everywhere (the sign of zero is kept)
        self.assertTrue((codes[1, :16] == 8).all())
        # row 2's block scale underflows E4M3 to 0: te codes saturate to +-6, dequant 0
        self.assertEqual(int(t["scale"][2, 0]), 0)
        self.assertTrue(((codes[2, :16] & 7) == 7).all())
        self.assertTrue((t["dequant"][2, :16] == 0).all())

    @unittest.skipIf(ml_dtypes is None, "ml_dtypes not installed")
    def test_decoders_agree_with_ml_dtypes(self):
        b = np.arange(256, dtype=np.uint8)
        ours = e4m3(b)
        theirs = b.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
        self.assertTrue(np.array_equal(np.isnan(ours), np.isnan(theirs)))
        ok = ~np.isnan(ours)
        self.assertTrue(np.array_equal(ours[ok].view(np.uint32), theirs[ok].view(np.uint32)))
        if hasattr(ml_dtypes, "float4_e2m1fn"):
            c = np.arange(16, dtype=np.uint8)
            theirs4 = c.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
            self.assertTrue(np.array_equal(e2m1(c).view(np.uint32), theirs4.view(np.uint32)))

    def test_verify_a_kernel_written_from_python(self):
        ref = self.quantize("te_ref", self.xin)
        t = load_file(ref)
        good = os.path.join(self.tmp.name, "kernel_good.safetensors")
        save_file({"data": t["data"], "scale": t["scale"], "amax": t["amax"]}, good)
        r = subprocess.run([NVFP4, "verify", "--expected", ref, "--actual", good], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("verdict: MATCH", r.stdout)
        bad = os.path.join(self.tmp.name, "kernel_bad.safetensors")
        d = t["data"]
        save_file({"data": ((d << 4) | (d >> 4)).astype(np.uint8)}, bad)
        r = subprocess.run([NVFP4, "verify", "--expected", ref, "--actual", bad, "--json"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        import json
        j = json.loads(r.stdout)
        self.assertEqual(j["outputs"][0]["causes"][0]["cause"], "swapped-nibbles")
        self.assertEqual(j["outputs"][0]["components"]["scale"]["status"], "absent")


if __name__ == "__main__":
    unittest.main()

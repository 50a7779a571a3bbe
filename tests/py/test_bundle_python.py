"""test_bundle_python.py - golden bundles are readable with PyPI's numpy and
safetensors and no custom code, and their bytes mean what docs/file-formats.md
says: decoding `data` (element 2j in the low nibble), `scale` (E4M3 or UE8M0
bytes) and `amax` with our own numpy code reproduces `dequant` exactly for
the te, torchao and mxfp4-rceil suites in reference/; `scale_swizzled` is
the cuBLAS 128x4 layout of `scale` (TE's un-swizzle: reshape to
(R/128, C/4, 32, 4, 4), permute (0, 3, 2, 1, 4)); npy and bin folders hold
the same bytes. Skips cleanly when numpy or safetensors is missing."""
import glob
import json
import os
import subprocess
import tempfile
import unittest

try:
    import numpy as np
    from safetensors.numpy import load_file
except ImportError:  # pragma: no cover
    np = None
try:
    # numpy has no bfloat16: safetensors' numpy loader needs ml_dtypes to
    # register it for bundles whose x is BF16 (the one documented exception).
    import ml_dtypes  # noqa: F401
except ImportError:  # pragma: no cover
    ml_dtypes = None

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "..", "..", "reference")

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def e2m1_decode(codes):
    mag = np.array(E2M1, dtype=np.float32)[codes & 7]
    return np.where(codes & 8, -mag, mag).astype(np.float32)


def e4m3_decode(b):
    """E4M3 (fn) bytes to float32 from the bit fields (independent of ml_dtypes)."""
    b = b.astype(np.int64)
    s = np.where(b & 0x80, -1.0, 1.0)
    e = (b >> 3) & 0xF
    m = b & 7
    v = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7))
    v = np.where((b & 0x7F) == 0x7F, np.nan, v)
    return (s * v).astype(np.float32)


def ue8m0_decode(b):
    b = b.astype(np.int64)
    v = np.ldexp(1.0, b - 127)
    return np.where(b == 255, np.nan, v).astype(np.float32)


def unpack(data, rows, cols):
    """Packed bytes [rows, pcols/2] -> codes [rows, cols] (logical)."""
    lo = data & 0xF
    hi = data >> 4
    codes = np.stack([lo, hi], axis=-1).reshape(data.shape[0], -1)
    return codes[:rows, :cols]


def unswizzle(z, rows, cols):
    R, C = z.shape
    lin = z.reshape(R // 128, C // 4, 32, 4, 4).transpose(0, 3, 2, 1, 4).reshape(R, C)
    return lin[:rows, :cols]


def expand_scales(scale, rows, cols, pcols):
    block = pcols // scale.shape[1]
    return np.repeat(scale, block, axis=1)[:rows, :cols]


def dequant(t, sfx, meta):
    rows, cols = t["dequant" + sfx].shape
    data, scale = t["data" + sfx], t["scale" + sfx]
    pcols = data.shape[1] * 2
    q = e2m1_decode(unpack(data, rows, cols))
    sc = expand_scales(scale, rows, cols, pcols)
    recipe = meta["recipe"]
    f32 = np.float32
    # Inf/NaN products are expected in the amax-inf/huge and NaN cases.
    with np.errstate(over="ignore", invalid="ignore"):
        if meta["scale_format"] == "ue8m0":  # MXFP4: fp4(q) * 2^(e-127)
            return q * ue8m0_decode(sc)
        s = e4m3_decode(sc)
        amax = f32(t["amax" + sfx][0])
        if recipe == "te":  # fp4(q) * (((float)s * amax) * fl(1/2688))
            return q * ((s * amax) * f32(1.0 / 2688.0))
    return None  # other recipes: formulas in docs/semantics.md


@unittest.skipIf(np is None, "numpy and safetensors not installed (pip install numpy safetensors)")
class BundleWithNumpy(unittest.TestCase):
    def bundles(self, suite):
        files = sorted(glob.glob(os.path.join(REF, suite, "*.safetensors")))
        self.assertGreater(len(files), 25, suite)
        return files

    def check_suite(self, suite, need_formula):
        checked = 0
        for f in self.bundles(suite):
            if ml_dtypes is None and "bf16-input" in f:
                continue
            with open(f, "rb") as fh:
                n = int.from_bytes(fh.read(8), "little")
                meta = json.loads(fh.read(n))["__metadata__"]
            t = load_file(f)
            self.assertEqual(meta["format"], "nvfp4kit-golden-bundle")
            for sfx in ("", "_t"):
                if "data" + sfx not in t:
                    continue
                scale, z = t["scale" + sfx], t["scale" + sfx + "_swizzled"]
                self.assertEqual(z.shape[0] % 128, 0)
                self.assertEqual(z.shape[1] % 4, 0)
                np.testing.assert_array_equal(unswizzle(z, *scale.shape), scale, err_msg=f)
                # padding of the swizzled layout is zero
                mask = np.ones(z.shape, bool)
                idx = np.arange(z.size).reshape(z.shape)
                lin_idx = unswizzle(idx, *scale.shape)
                mask.flat[lin_idx.ravel()] = False
                self.assertTrue((z[mask] == 0).all(), f)
                got = dequant(t, sfx, meta)
                if got is None:
                    self.assertFalse(need_formula)
                    continue
                want = t["dequant" + sfx]
                self.assertEqual(want.dtype, np.float32)
                if got.dtype == np.float32:
                    # every dequantized NaN is the canonical 0x7FC00000 (docs/semantics.md, "Dequantized NaNs");
                    # numpy's 0 * Inf is the hardware's default NaN (0xFFC00000 on x86-64)
                    bits = got.view(np.uint32).copy()
                    bits[np.isnan(got)] = 0x7FC00000
                    got = bits
                np.testing.assert_array_equal(got, want.view(np.uint32), err_msg=f"{f} {sfx}")
                checked += 1
        return checked

    def test_te_dequant_reproduced(self):
        self.assertGreater(self.check_suite("te-rn", True), 50)
        self.assertGreater(self.check_suite("te-sr", True), 50)

    def test_mxfp4_dequant_reproduced(self):
        self.assertGreater(self.check_suite("mxfp4-rceil-rn", True), 50)

    def test_torchao_layouts(self):
        self.check_suite("torchao-rn", False)

    @unittest.skipIf(ml_dtypes is None, "ml_dtypes not installed")
    def test_x_round_trips(self):
        t = load_file(os.path.join(REF, "te-rn", "random-bf16-input.safetensors"))
        # BF16 comes back as ml_dtypes bfloat16 (safetensors' numpy mapping) or uint16 bits
        x = t["x"]
        self.assertEqual(x.dtype.itemsize, 2)
        self.assertEqual(x.shape, t["dequant"].shape)

    @unittest.skipIf(not os.environ.get("NVFP4"), "NVFP4 not set")
    def test_folders_hold_the_same_bytes(self):
        src = os.path.join(REF, "te-rn", "edge-outliers.safetensors")
        t = load_file(src)
        with tempfile.TemporaryDirectory() as d:
            for fmt in ("npy", "bin"):
                out = os.path.join(d, fmt)
                subprocess.run([os.environ["NVFP4"], "quantize", src + ":x", "-o", out, "--format", fmt,
                                "--rowwise", "--columnwise", "--pad"], check=True)
                with open(os.path.join(out, "meta.json")) as fh:
                    meta = json.load(fh)
                self.assertEqual(meta["storage"], fmt)
                for e in meta["tensors"]:
                    p = os.path.join(out, e["file"])
                    if fmt == "npy":
                        a = np.load(p)  # plain numpy, no custom code
                    else:
                        dt = {"U8": np.uint8, "F32": np.float32, "BF16": np.uint16}[e["dtype"]]
                        a = np.fromfile(p, dtype=dt).reshape(e["shape"])
                    self.assertEqual(list(a.shape), e["shape"])
                    want = t[e["name"]]
                    np.testing.assert_array_equal(a.view(np.uint8), want.view(np.uint8), err_msg=e["name"])


    @unittest.skipIf(not os.environ.get("NVFP4"), "NVFP4 not set")
    def test_reads_files_written_by_python(self):
        from safetensors.numpy import save_file
        x = ((np.arange(64, dtype=np.float32).reshape(4, 16) - 30) * np.float32(0.37)).astype(np.float32)
        nv = os.environ["NVFP4"]
        with tempfile.TemporaryDirectory() as d:
            j = lambda n: os.path.join(d, n)
            save_file({"x": x, "other": np.zeros((3,), np.uint8)}, j("py.safetensors"), metadata={"a": "b"})
            np.save(j("py.npy"), x)
            np.save(j("pyf.npy"), np.asfortranarray(x))
            subprocess.run([nv, "quantize", j("py.safetensors"), "-o", j("a.safetensors")], check=True)
            subprocess.run([nv, "quantize", j("py.npy"), "-o", j("b.safetensors")], check=True)
            with open(j("a.safetensors"), "rb") as fa, open(j("b.safetensors"), "rb") as fb:
                self.assertEqual(fa.read(), fb.read())
            np.testing.assert_array_equal(load_file(j("a.safetensors"))["x"], x)
            r = subprocess.run([nv, "quantize", j("pyf.npy"), "-o", j("c.safetensors")], capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("fortran_order True is not supported", r.stderr)
            self.assertFalse(os.path.exists(j("c.safetensors")))


if __name__ == "__main__":
    unittest.main()

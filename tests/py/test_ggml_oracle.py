"""test_ggml_oracle.py - the recipe `ggml` and `nvfp4 quantize --ggml-out`
against llama.cpp's NVFP4 (GGML_TYPE_NVFP4): the codes, scale bytes and
block_nvfp4 bytes against tests/oracles/ggml_nvfp4.py (a numpy model of
ggml's quantize_row_nvfp4_ref), that model's UE4M3 rule against gguf-py's
encoder (gguf.quants.NVFP4.fp32_to_ue4m3), and the dequantized tensor
against gguf-py's block_nvfp4 decoder (gguf.quants.dequantize), byte for
byte, on adversarial tensors: E2M1 ties under many scales (ggml keeps the
smaller magnitude), subnormal and zero scales, block amaxes at and above
256*6 (ggml's 0x7E), NaN, Inf and -0 elements.

gguf-py (PyPI `gguf`, 0.19.0) has no NVFP4 quantizer, so the codes are
checked against the model; the parts gguf-py has are checked against it.
Skipped unless numpy and safetensors are importable and $NVFP4 names the
nvfp4 binary; the gguf parts are skipped without gguf."""
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    from safetensors.numpy import load_file
except ImportError:  # pragma: no cover
    np = None

try:
    import gguf
    import gguf.quants as gq
except Exception:  # pragma: no cover
    gguf = None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "oracles"))
if np is not None:
    import ggml_nvfp4 as model

NVFP4 = os.environ.get("NVFP4")
F32 = np.float32 if np is not None else None


def tensors():
    rng = np.random.default_rng(19769)
    out = [("normal", rng.standard_normal((32, 128)).astype(F32)),
           ("weights", (rng.standard_normal((16, 256)) * 0.02).astype(F32))]
    # ties and their neighbours: s * (E2M1 midpoint) for E4M3 scales s (normal and subnormal)
    mids = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], dtype=F32)
    rows = []
    for code in (0x01, 0x03, 0x07, 0x08, 0x0B, 0x30, 0x38, 0x3F, 0x45, 0x5A, 0x66, 0x70, 0x77):
        s = model.ue4m3_value(np.array([code]))[0]
        for k in range(4):
            b = np.zeros(16, dtype=F32)
            b[0] = F32(6) * s
            v = (mids * s).astype(F32)
            if k == 1:
                v = np.nextafter(v, F32(np.inf))
            elif k == 2:
                v = np.nextafter(v, F32(0))
            b[1:8] = v
            b[8:15] = -v if k != 3 else v
            b[15] = -b[0] if k == 3 else 0
            rows.append(b)
    x = np.concatenate(rows).astype(F32)
    x = x[: len(x) // 64 * 64].reshape(-1, 64)
    out.append(("ties", x))
    # scale edges: amax/6 at the UE4M3 subnormal boundaries, around 2^-10, in [240, 256), >= 256 and Inf
    amaxes = [6 * 2.0 ** -10, 6 * 2.0 ** -11, 6 * 7.5 * 2.0 ** -9, 6 * 7.4 * 2.0 ** -9, 6 * 2.0 ** -6, 6 * 239.9,
              6 * 240, 6 * 250, 1536, 1535.9, 3e4, 1e30, 5e-41, 0, 6 * 448]
    x = np.zeros((len(amaxes), 64), dtype=F32)
    for i, a in enumerate(amaxes):
        x[i] = (rng.uniform(-1, 1, 64) * a).astype(F32)
        x[i, ::16] = F32(a)
    x[1, 5] = -0.0
    x[2, 7] = np.inf
    x[3, 9] = np.nan
    x[4, 20] = -np.inf
    x[5, 0:16] = np.nan
    out.append(("scale-edges", x))
    return out


@unittest.skipIf(np is None or not (NVFP4 and os.path.exists(NVFP4)), "needs numpy, safetensors and $NVFP4")
class GgmlNVFP4(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.cases = []
        for name, x in tensors():
            src = os.path.join(cls.tmp.name, name + ".npy")
            np.save(src, x)
            bundle = os.path.join(cls.tmp.name, name + ".safetensors")
            blocks = os.path.join(cls.tmp.name, name + ".ggml")
            r = subprocess.run([NVFP4, "quantize", src, "-o", bundle, "--recipe", "ggml", "--ggml-out", blocks],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
            with open(blocks, "rb") as f:
                cls.cases.append((name, x, load_file(bundle), f.read()))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_codes_scales_and_layout_match_the_model(self):
        for name, x, b, raw in self.cases:
            with self.subTest(tensor=name):
                codes, scales, layout = model.quantize(x)
                packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
                self.assertEqual(int((b["scale"] != scales).sum()), 0, "%s: scale bytes differ" % name)
                self.assertEqual(int((b["data"] != packed).sum()), 0, "%s: code bytes differ" % name)
                self.assertEqual(len(raw), x.size // 64 * 36)
                self.assertEqual(raw, layout, "%s: block_nvfp4 bytes differ" % name)
                self.assertNotIn("amax", b)

    def test_hand_computed_ties(self):
        # s = 2: 0.5 -> 0x0, 1.5 -> 0x1, 3.5 -> 0x3, 5 -> 0x4, 7 -> 0x5 (ties to the smaller magnitude)
        x = np.zeros((1, 64), dtype=F32)
        x[0, :6] = [12, 0.5, 1.5, 3.5, 5, 7]
        codes, scales, _ = model.quantize(x)
        self.assertEqual(list(codes[0, :6]), [7, 0, 1, 3, 4, 5])
        self.assertEqual(scales[0, 0], 0x40)

    @unittest.skipIf(gguf is None, "gguf (gguf-py) is not installed")
    def test_dequantize_matches_gguf(self):
        for name, x, b, raw in self.cases:
            with self.subTest(tensor=name):
                got = gq.dequantize(np.frombuffer(raw, dtype=np.uint8).reshape(-1, 36),
                                    gguf.GGMLQuantizationType.NVFP4).astype(F32).reshape(x.shape)
                ours = b["dequant"]
                diff = int((got.view(np.uint32) != ours.view(np.uint32)).sum())
                self.assertEqual(diff, 0, "%s: %d dequantized values differ from gguf's" % (name, diff))

    @unittest.skipIf(gguf is None, "gguf (gguf-py) is not installed")
    def test_scale_rule_matches_gguf(self):
        rng = np.random.default_rng(7)
        v = np.concatenate([np.exp2(rng.uniform(-16, 10, 200000)), [0, 2.0 ** -10, 1.5 * 2.0 ** -10, 2.0 ** -9,
                            7.5 * 2.0 ** -9, 2.0 ** -6, 239.99, 240, 255.99, 256, 448, 449, 1e30, np.inf]]).astype(F32)
        v = np.concatenate([v, np.nextafter(v, F32(0)), np.nextafter(v, F32(np.inf))]).astype(F32)
        want = gq.NVFP4.fp32_to_ue4m3(v.copy())
        got = model.ue4m3_encode(v)
        self.assertEqual(int((want != got).sum()), 0)


@unittest.skipIf(np is None or not (NVFP4 and os.path.exists(NVFP4)), "needs numpy and $NVFP4")
class GgmlCli(unittest.TestCase):
    def test_refusals(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "x.npy")
            np.save(src, np.ones((2, 96), dtype=F32))
            out, blk = os.path.join(d, "b.safetensors"), os.path.join(d, "b.ggml")
            r = subprocess.run([NVFP4, "quantize", src, "-o", out, "--recipe", "ggml", "--ggml-out", blk],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("64", r.stderr)
            self.assertFalse(os.path.exists(out) or os.path.exists(blk), "nothing is written on a refusal")
            r = subprocess.run([NVFP4, "quantize", src, "-o", out, "--recipe", "te", "--ggml-out", blk],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)
            self.assertIn("ggml", r.stderr)


if __name__ == "__main__":
    unittest.main()

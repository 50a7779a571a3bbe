"""test_ggml_mxfp4_oracle.py - the recipe `ggml-mxfp4` byte for byte against
llama.cpp's MXFP4 as gguf-py (PyPI `gguf` 0.19.0, gguf/quants.py class MXFP4:
quantize_blocks and dequantize_blocks, the numpy port of ggml-quants.c's
quantize_row_mxfp4_ref and dequantize_row_mxfp4) computes it: scale bytes,
codes (taken out of block_mxfp4's layout, byte j of a block holding elements
j and j + 16) and the dequantized tensor (fp32 bits), rowwise and columnwise.

Adversarial inputs: E2M1 ties under many scales (ggml keeps the smaller
magnitude, not the even code), block amaxes one to 16 ulps below a power of
two for every exponent from 2^-124 to 2^127 (where floorf(log2f(amax)) is
one above the exponent field: `mxfp4-floor` differs there), fp32-subnormal
elements, -0.0, zero blocks, shapes whose block count is odd. What gguf-py's
port does differently from the C and is left out of the comparison: a NaN
element (numpy's max propagates it, so the block gets e = 0; the C skips it,
as the recipe does) and the amaxes where the C conversion to uint8_t is
undefined (below 2^-125, +Inf); tests/check_recipes_production.c checks the
recipe there. The same inputs run as `mxfp4-floor` must differ (the test
says how many bytes), so the comparison can fail.

Skipped unless numpy, safetensors and gguf are importable and $NVFP4 names
the nvfp4 binary."""
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
    import gguf.quants as gq
except Exception:  # pragma: no cover
    gq = None

NVFP4 = os.environ.get("NVFP4")
F32 = np.float32 if np is not None else None


def tensors():
    rng = np.random.default_rng(4032)
    out = [("normal", rng.standard_normal((32, 128)).astype(F32)),
           ("weights-96", (rng.standard_normal((64, 96)) * 0.02).astype(F32))]
    # ties s * (E2M1 midpoint) and their neighbours, s = 2^(e-127)
    mids = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], dtype=F32)
    rows = []
    for e in (1, 60, 100, 120, 127, 130, 140, 200, 250):
        s = F32(2.0 ** (e - 127))
        for k in range(3):
            b = np.zeros(32, dtype=F32)
            b[0] = F32(6) * s
            v = (mids * s).astype(F32)
            if k == 1:
                v = np.nextafter(v, F32(np.inf))
            elif k == 2:
                v = np.nextafter(v, F32(0))
            b[1:8], b[8:15], b[16:23], b[23:30] = v, -v, v[::-1], -v[::-1]
            b[31] = -0.0
            rows.append(b)
    rows += [rng.standard_normal(32).astype(F32) for _ in range(32 - len(rows))]
    out.append(("ties", np.stack(rows).astype(F32)))  # 32 x 32: the columnwise blocks need 32 rows
    # amax a few ulps below 2^E (log2f rounds up to E): one block per (E, k)
    amaxes = []
    for E in range(-124, 128):
        p = F32(2.0 ** E)
        a = p
        for k in range(1, 17):
            a = np.nextafter(a, F32(0))
            amaxes.append(a)
    amaxes = np.array(amaxes, dtype=F32)
    n = len(amaxes) // 128 * 128  # rows of 4 blocks, a multiple of 32 rows
    x = (rng.uniform(-1, 1, (n, 32)) * amaxes[:n, None]).astype(F32)
    x[:, 5] = amaxes[:n]
    out.append(("log2-edges", x.reshape(-1, 128)))
    x = rng.standard_normal((32, 64)).astype(F32)
    x[0, :32] = 0
    x[1, :32] = -0.0
    x[2, 32:] = (rng.integers(-9, 10, 32) * 2.0 ** -149).astype(F32)  # fp32 subnormals, amax >= 2^-125 elsewhere
    x[2, 32] = F32(2.0 ** -124)
    x[3, 7] = -0.0
    out.append(("zeros-subnormals", x))
    return out


def gguf_mxfp4(x):
    """(scale bytes [rows, cols/32], codes [rows, cols], dequant [rows, cols]) by gguf-py."""
    rows, cols = x.shape
    blocks = gq.MXFP4.quantize_blocks(x.reshape(-1, 32))  # [nb, 17]: e, then 16 bytes
    e = blocks[:, 0]
    qs = blocks[:, 1:]
    codes = np.concatenate([qs & 0x0F, qs >> 4], axis=1)  # element j and j + 16
    deq = gq.MXFP4.dequantize_blocks(blocks).reshape(rows, cols).astype(F32)
    return e.reshape(rows, cols // 32), codes.reshape(rows, cols), deq


def packed(codes):
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)


@unittest.skipIf(np is None or gq is None or not NVFP4 or not os.path.exists(NVFP4 or ""),
                 "needs numpy, safetensors, gguf (pip install gguf) and $NVFP4")
class GgmlMXFP4(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def nvfp4(self, name, x, recipe):
        src = os.path.join(self.tmp.name, name + ".in.safetensors")
        save_file({"x": x}, src)
        out = os.path.join(self.tmp.name, "%s.%s.safetensors" % (name, recipe))
        r = subprocess.run([NVFP4, "quantize", src, "-o", out, "--recipe", recipe, "--rowwise", "--columnwise"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return load_file(out)

    def compare(self, recipe):
        """Differing bytes per tensor (scale bytes + code bytes + 4 per dequantized value) and the bytes compared."""
        diffs, total = {}, 0
        for name, x in tensors():
            b = self.nvfp4(name, x, recipe)
            n = 0
            for sfx, xx in (("", x), ("_t", np.ascontiguousarray(x.T))):
                e, codes, deq = gguf_mxfp4(xx)
                got_deq = b["dequant" + sfx].view(np.uint32)
                n += int((b["scale" + sfx] != e).sum()) + int((b["data" + sfx] != packed(codes)).sum())
                n += 4 * int((got_deq != deq.view(np.uint32)).sum())
                total += e.size + codes.size // 2 + 4 * deq.size
            diffs[name] = n
        return diffs, total

    def test_ggml_mxfp4_byte_for_byte(self):
        diffs, total = self.compare("ggml-mxfp4")
        self.assertEqual(diffs, {k: 0 for k in diffs})
        print("ggml-mxfp4: %d bytes compared with gguf-py's MXFP4, all identical" % total)

    def test_mxfp4_floor_differs(self):
        """The comparison can fail: torchao's OCP floor and RNE encode are not ggml's."""
        diffs, _ = self.compare("mxfp4-floor")
        self.assertGreater(diffs["log2-edges"], 0)
        self.assertGreater(diffs["ties"], 0)
        print("mxfp4-floor against gguf-py's MXFP4: differing bytes per tensor %s" % diffs)


if __name__ == "__main__":
    unittest.main()

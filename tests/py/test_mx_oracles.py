"""test_mx_oracles.py - the recipes `torchao-1level`, `mxfp4-ceil`,
`mxfp4-even` and `mxfp8-floor` byte for byte against torchao 0.18 on the CPU
(pytorch/ao torchao/prototype/mx_formats/: nvfp4_quantize with
per_tensor_scale None and NVFP4Tensor.dequantize; to_mx with
ScaleCalculationMode CEIL / EVEN / FLOOR and to_dtype), and the UE8M0 casts
`nvfp4 cvt --to ue8m0 --mode rn` / `rn-torch` (nvfp4_ue8m0_from_f32 with
NVFP4_UE8M0_RN / NVFP4_UE8M0_RN_TORCH) against ml_dtypes' and torch's
float8_e8m0fnu casts.

Codes, scale bytes and the dequantized tensor, rowwise and columnwise, on the
adversarial tensors of test_torch_oracles.py plus tensors whose block amaxes
sit on the CEIL/EVEN decision points (powers of two, 1.5 and 1.75 times
them, their fp32 neighbours, fp32 subnormals). The only documented
difference is the NaN code (docs/semantics.md): torchao takes a NaN's code
from its bits and torch keeps a NaN's sign in its E4M3 casts; the recipes
write the canonical codes, and the test canonicalizes torchao's NaNs the
same way (checking that this changes nothing else).

The UE8M0 check covers every fp32 sign and exponent at the fraction values
where the rule can change, every 8191st bit pattern of the whole 2^32 space
(about 524k values) and NaN payloads, through libnvfp4.so (found next to
$NVFP4: <build>/lib/libnvfp4.so) with ctypes.

Comparisons are of bytes, counted per recipe and printed at the end (shared
with test_torch_oracles.py, whose planted-difference check runs here too).

Skipped unless torch with torchao (resp. ml_dtypes) is importable and $NVFP4
names the nvfp4 binary."""
import ctypes as C
import os
import unittest

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None

torch = tao_mx = tao_nvfp4 = None
if np is not None:
    try:
        import torch
        import torchao.prototype.mx_formats.mx_tensor as tao_mx
        import torchao.prototype.mx_formats.nvfp4_tensor as tao_nvfp4
    except Exception:  # pragma: no cover
        tao_mx = tao_nvfp4 = None

if tao_mx is not None:
    from test_torch_oracles import (COMPARED, CanonicalNaNCodes, _Base, assert_plants_fail,  # noqa: F401
                                    assert_same_bytes, e4m3_canon, tensors)
    from test_torch_oracles import tearDownModule  # noqa: F401  (prints the byte counts)
else:  # pragma: no cover
    _Base = unittest.TestCase

NVFP4 = os.environ.get("NVFP4")
HERE = os.path.dirname(os.path.abspath(__file__))


def lib_path():
    if NVFP4:
        p = os.path.join(os.path.dirname(os.path.dirname(NVFP4)), "lib", "libnvfp4.so")
        if os.path.exists(p):
            return p
    p = os.path.join(HERE, "..", "..", "build", "lib", "libnvfp4.so")
    return p if os.path.exists(p) else None


def mx_boundary_tensor():
    """64 x 64 fp32: every 1x32 block (rowwise and columnwise) has its amax on
    a decision point of CEIL (2^k, its successor), EVEN (1.75 * 2^k and its
    predecessor, 1.5 * 2^k) or the clamps (fp32 subnormals, 2^-127 * 6,
    FLT_MAX), with the other elements spread below it."""
    rng = np.random.default_rng(15)
    pts = []
    for k in (-140, -130, -127, -126, -125, -100, -3, -1, 0, 1, 2, 5, 20, 120, 126, 127):
        for m in (1.0, 1.5, 1.75):
            v = np.float32(np.ldexp(m, k))
            pts += [v, np.nextafter(v, np.float32(0)), np.nextafter(v, np.float32(np.inf))]
    pts += [np.float32(np.finfo(np.float32).max), np.float32(1.4e-45), np.float32(6 * 2.0 ** -127)]
    pts = np.array([p for p in pts if np.isfinite(p) and p > 0], dtype=np.float32)
    x = np.zeros((64, 64), dtype=np.float32)
    for i in range(64):
        for b in range(2):
            a = pts[(2 * i + b) % len(pts)]
            blk = (rng.uniform(-1, 1, 32) * a).astype(np.float32)
            blk[rng.integers(32)] = a * (1 if rng.integers(2) else -1)
            x[i, 32 * b:32 * b + 32] = blk
    return x


@unittest.skipIf(tao_mx is None or not (NVFP4 and os.path.exists(NVFP4)), "needs torch, torchao, numpy and $NVFP4")
class TorchaoOneLevelAndMX(_Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.cases = cls.cases + [("mx-boundaries", mx_boundary_tensor(), False),
                                 ("mx-boundaries-bf16", mx_boundary_tensor(), True)]

    def assert_same(self, recipe, name, b, sfx, scale, data, deq):
        assert_same_bytes(self, recipe, name, b, sfx, scale, data, deq)
        self.assertNotIn("amax" + sfx, b, "a recipe without a global scale stores no amax")
        if name == "normal":
            assert_plants_fail(self, b, sfx, scale, data, deq)

    def test_torchao_1level_byte_for_byte(self):
        for name, x, bf16 in self.cases:
            with self.subTest(tensor=name):
                b = self.nvfp4(name, x, bf16, "torchao-1level")
                t = self.torch_input(x, bf16)
                for sfx, tt in (("", t), ("_t", t.t().contiguous())):
                    with CanonicalNaNCodes(tao_nvfp4) as c:
                        scale, data = tao_nvfp4.nvfp4_quantize(tt, 16, None)
                        q = tao_nvfp4.NVFP4Tensor.to_nvfp4(tt, 16)
                        self.assertIsNone(q.per_tensor_scale)
                        deq = q.dequantize(torch.float32)
                    self.assertFalse(c.other_change, "the NaN wrapper changed a non-NaN code")
                    self.assert_same("torchao-1level", name, b, sfx, e4m3_canon(scale.view(torch.uint8)), data, deq)

    def check_mx(self, recipe, elem, mode):
        for name, x, bf16 in self.cases:
            with self.subTest(tensor=name, recipe=recipe):
                b = self.nvfp4(name, x, bf16, recipe)
                t = self.torch_input(x, bf16)
                for sfx, tt in (("", t), ("_t", t.t().contiguous())):
                    with CanonicalNaNCodes(tao_mx) as c:
                        scale, data = tao_mx.to_mx(tt, elem, 32, mode)
                    self.assertFalse(c.other_change, "the NaN wrapper changed a non-NaN code")
                    deq = tao_mx.to_dtype(data if elem == torch.float8_e4m3fn else data.view(torch.uint8), scale,
                                          elem, 32, torch.float32)
                    data = data.view(torch.uint8)
                    if elem == torch.float8_e4m3fn:
                        data = e4m3_canon(data)  # torch keeps a NaN's sign (0xFF); the recipe writes 0x7F
                    self.assert_same(recipe, name, b, sfx, scale.view(torch.uint8), data, deq)

    def test_mxfp4_ceil_byte_for_byte(self):
        self.check_mx("mxfp4-ceil", torch.float4_e2m1fn_x2, tao_mx.ScaleCalculationMode.CEIL)

    def test_mxfp4_even_byte_for_byte(self):
        self.check_mx("mxfp4-even", torch.float4_e2m1fn_x2, tao_mx.ScaleCalculationMode.EVEN)

    def test_mxfp8_floor_byte_for_byte(self):
        self.check_mx("mxfp8-floor", torch.float8_e4m3fn, tao_mx.ScaleCalculationMode.FLOOR)


def ue8m0_inputs():
    """uint32 bit patterns: each sign and exponent field with the fractions at
    which a round-to-nearest-ties-up rule (or its subnormal variants) can
    change, every 8191st pattern of the 2^32 space, NaN payloads."""
    fr = np.array([0, 1, 2, 0x1FFFFF, 0x200000, 0x200001, 0x3FFFFF, 0x400000, 0x400001, 0x5FFFFF,
                   0x600000, 0x600001, 0x7FFFFE, 0x7FFFFF], dtype=np.uint64)
    se = np.arange(512, dtype=np.uint64) << np.uint64(23)
    edges = (se[:, None] | fr[None, :]).ravel()
    strided = np.arange(0, 1 << 32, 8191, dtype=np.uint64)
    return np.unique(np.concatenate([edges, strided]).astype(np.uint32))


@unittest.skipIf(np is None or lib_path() is None, "needs numpy and libnvfp4.so")
class UE8M0RoundToNearest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        lib = C.CDLL(lib_path())
        f = lib.nvfp4_ue8m0_from_f32
        f.restype = C.c_uint8
        f.argtypes = [C.c_float, C.c_int]
        cls.f = staticmethod(f)
        cls.u = ue8m0_inputs()
        cls.x = cls.u.view(np.float32)

    def ours(self, mode):
        f = self.f
        return np.fromiter((f(float(v), mode) for v in self.x.tolist()), dtype=np.uint8, count=len(self.x))

    def report(self, got, want, what):
        bad = np.nonzero(got != want)[0]
        msg = ", ".join("0x%08X: 0x%02X vs 0x%02X" % (self.u[i], got[i], want[i]) for i in bad[:5])
        self.assertEqual(len(bad), 0, "%s: %d of %d differ (%s)" % (what, len(bad), len(got), msg))
        COMPARED[what] = COMPARED.get(what, 0) + len(got)
        planted = want.copy()
        planted[len(planted) // 2] ^= 1
        self.assertGreater(int(np.count_nonzero(got != planted)), 0, "a planted difference went unnoticed")

    def test_hand_computed(self):
        # 1.5 is a tie between 1 and 2: up (0x80); 3 -> 4 (0x81); just below 1.5 -> 1 (0x7F);
        # 1.5*2^127 overflows to NaN; ml_dtypes: 0 and negatives NaN; torch: |x|, 0 -> 0x00;
        # 0x00500000 (1.25*2^-127): nearest is 2^-127 (0x00) for ml_dtypes, torch rounds up (0x01)
        cases = [(0x3FC00000, 0x80, 0x80), (0x40400000, 0x81, 0x81), (0x3FBFFFFF, 0x7F, 0x7F),
                 (0x7F400000, 0xFF, 0xFF), (0x7F3FFFFF, 0xFE, 0xFE), (0x00000000, 0xFF, 0x00),
                 (0x80000000, 0xFF, 0x00), (0xBF800000, 0xFF, 0x7F), (0x00500000, 0x00, 0x01),
                 (0x00600000, 0x01, 0x01), (0x00400000, 0x00, 0x00), (0x00000001, 0x00, 0x00),
                 (0x7F800000, 0xFF, 0xFF), (0x7FC00000, 0xFF, 0xFF)]
        for u, rn, rt in cases:
            x = float(np.array([u], dtype=np.uint32).view(np.float32)[0])
            self.assertEqual(self.f(x, 4), rn, "rn 0x%08X" % u)
            self.assertEqual(self.f(x, 5), rt, "rn-torch 0x%08X" % u)

    @unittest.skipIf(ml_dtypes is None, "ml_dtypes is not installed")
    def test_rn_is_ml_dtypes(self):
        want = self.x.astype(ml_dtypes.float8_e8m0fnu).view(np.uint8)
        self.report(self.ours(4), want, "rn vs ml_dtypes float8_e8m0fnu")

    @unittest.skipIf(torch is None, "torch is not installed")
    def test_rn_torch_is_torch(self):
        want = torch.from_numpy(self.x.copy()).to(torch.float8_e8m0fnu).view(torch.uint8).numpy()
        self.report(self.ours(5), want, "rn-torch vs torch float8_e8m0fnu")


if __name__ == "__main__":
    unittest.main()

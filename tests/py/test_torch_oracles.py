"""test_torch_oracles.py - the recipes `torchao`, `mxfp4-floor` and `modelopt`
byte for byte against the public implementations they reproduce, run on the
CPU: torchao's nvfp4_quantize / NVFP4Tensor.dequantize and to_mx / to_dtype
(pytorch/ao torchao/prototype/mx_formats/), Model Optimizer's
NVFP4QTensor.quantize / dequantize (NVIDIA/Model-Optimizer
modelopt/torch/quantization/qtensor/nvfp4_tensor.py). Codes, scale bytes,
the global amax and the dequantized tensor, rowwise and columnwise, on seeded
random tensors and on adversarial ones (E2M1 ties under non-power-of-two
scales, zero and underflowing blocks, tiny and huge amaxes, 1/g = Inf, NaN
and Inf elements).

The one documented difference (docs/semantics.md): torchao takes a NaN's
code from its bit pattern and its NaN scale byte keeps the NaN's sign, and
which NaN arises depends on the device; the recipes write the canonical
+NaN's code (0x3) and scale 0x7F. The test runs torchao with its
f32_to_f4_unpacked wrapped so that NaN inputs are replaced by 0x7FC00000,
checks that this changes nothing but codes of NaNs, and maps a 0xFF E4M3
scale (a negative NaN) to 0x7F.

Every comparison is of bytes (assert_same_bytes: scale bytes, code bytes,
dequantized fp32 bit patterns, amax bits); the bytes compared per recipe are
printed at the end, and on the "normal" tensor each test plants one
difference in every component and demands that the comparison fail.
Checked with torch 2.15.0 (CPU), torchao 0.18.0 and nvidia-modelopt 0.47.0
(which imports huggingface_hub).

Skipped unless torch with torchao (pip install torchao==0.18.0) or
nvidia-modelopt (pip install nvidia-modelopt==0.47.0 huggingface_hub) is
importable, and $NVFP4 names the nvfp4 binary. Neither is in
requirements.txt while CI does not install torch (it is large)."""
import os
import subprocess
import tempfile
import unittest

try:
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file
except ImportError:  # pragma: no cover
    torch = None

tao_nvfp4 = tao_mx = tao_kernels = None
if torch is not None:
    try:
        import torchao.prototype.mx_formats.kernels as tao_kernels
        import torchao.prototype.mx_formats.mx_tensor as tao_mx
        import torchao.prototype.mx_formats.nvfp4_tensor as tao_nvfp4
    except Exception:  # pragma: no cover
        tao_nvfp4 = None

modelopt_nvfp4 = None
if torch is not None:
    try:
        import modelopt.torch.quantization.qtensor.nvfp4_tensor as modelopt_nvfp4
    except Exception:  # pragma: no cover
        modelopt_nvfp4 = None

NVFP4 = os.environ.get("NVFP4")
HAVE_CLI = bool(NVFP4) and os.path.exists(NVFP4 or "")


def f32(u):
    return np.array([u], dtype=np.uint32).view(np.float32)[0]


def tensors():
    """(name, float32 array, as_bf16) test tensors; both dimensions multiples of 32."""
    rng = np.random.default_rng(2024)
    out = []
    x = rng.standard_normal((64, 128)).astype(np.float32)
    out.append(("normal", x, False))
    x = rng.laplace(size=(64, 96)).astype(np.float32)
    x *= np.float32(2.0) ** rng.integers(-12, 13, size=(64, 6, 1)).repeat(16, axis=2).reshape(64, 96)
    out.append(("laplace-blockscaled", x, False))
    x = rng.standard_normal((32, 64)).astype(np.float32)
    x[:, 5] *= 300
    x[:, 40] *= 1e-3
    out.append(("channel-outliers", x, False))
    x = rng.standard_normal((64, 64)).astype(np.float32) * 4
    out.append(("bf16-input", x, True))
    # ties: g = 1 (one element 2688); blocks with scale s (E4M3 values, many
    # not powers of two) whose elements are s * (E2M1 midpoint) and their
    # fp32 neighbours, where x * ((1/g)/s) and x / (g*s) can round apart
    scales = [1.875, 1.125, 0.8125, 3.25, 13.0, 0.6875, 2.0, 0.01171875, 7.5, 104.0, 1.5, 0.15625,
              5.5, 9.0, 44.0, 0.40625]
    mids = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], dtype=np.float32)
    rows = []
    for s in scales:
        s = np.float32(s)
        for k in range(2):
            blk = np.zeros(16, dtype=np.float32)
            blk[0] = np.float32(6) * s
            v = mids * s
            if k:
                v = np.nextafter(v, np.float32(np.inf)) if s > 1 else np.nextafter(v, np.float32(0))
            blk[1:8] = v
            blk[8:15] = -v
            blk[15] = rng.standard_normal() * s
            rows.append(blk)
    x = np.stack(rows).reshape(-1, 32).astype(np.float32)
    x = np.concatenate([x, -x[:, ::-1]]).copy()  # 32 x 32: columnwise blocks need 32 rows
    x[0, 0] = 2688
    out.append(("e2m1-ties", x, False))
    # zero blocks, -0, underflowing blocks, fp32 subnormals
    x = rng.standard_normal((32, 64)).astype(np.float32)
    x[0, :16] = 0
    x[0, 16:32] = -0.0
    x[1, :16] = np.float32(1e-7) * x[1, :16]
    x[2, :32] = f32(1) * np.arange(32, dtype=np.float32)  # subnormal multiples of 2^-149
    x[3, :16] = -np.float32(0.0)
    x[3, 3] = np.float32(-1e-30)
    out.append(("zeros-underflow", x, False))
    # tiny global amaxes: g <= 2^-128 (1/g = Inf), g = 2^-127 (1/g finite, (1/g)/s
    # overflows in small blocks), amax in the normal range near FLT_MIN
    for name, amax in (("amax-2^-130x2688", np.ldexp(np.float32(2688), -130)),
                       ("amax-2^-127x2688", np.ldexp(np.float32(2688), -127)),
                       ("amax-1e-35", np.float32(1e-35))):
        x = rng.standard_normal((32, 64)).astype(np.float32)
        x /= np.abs(x).max()
        x *= np.float32(amax)
        x[0, 0] = np.float32(amax)
        x[1, :16] = 0
        x[2, 16:32] = x[2, 16:32] * np.float32(1e-4)
        out.append((name, x.astype(np.float32), False))
    # g = amax / 2688 underflows to 0 (amax <= 1344 * 2^-149) or to 2^-149 (1345 * 2^-149)
    for a in (100, 1344, 1345):
        x = np.zeros((32, 64), dtype=np.float32)
        x[0, 0] = f32(a)
        x[0, 17], x[0, 18], x[0, 33], x[1, 5] = f32(1), f32(3), f32(4), -f32(7)
        x[4:8] = f32(1) * rng.integers(-9, 10, size=(4, 64)).astype(np.float32)
        out.append(("g-underflow-%d" % a, x, False))
    x = rng.standard_normal((32, 64)).astype(np.float32) * np.float32(1e37)
    x[0, 0] = np.float32(3.0e38)
    out.append(("amax-huge", x, False))
    # NaN-producing tensors: amax 0, a NaN element, an Inf element
    x = np.zeros((32, 64), dtype=np.float32)
    x[0, 1::2] = -0.0
    out.append(("amax-zero", x, False))
    x = rng.standard_normal((32, 64)).astype(np.float32)
    x[3, 7] = np.nan
    out.append(("nan-element", x, False))
    x = rng.standard_normal((32, 64)).astype(np.float32)
    x[5, 40] = np.inf
    x[6, 2] = -np.inf
    out.append(("inf-element", x, False))
    return out


CANON_NAN = 0x7FC00000


class CanonicalNaNCodes:
    """Wraps f32_to_f4_unpacked in `module`: NaN inputs become the canonical
    +NaN; records whether anything but a NaN's code changed."""

    def __init__(self, module):
        self.module = module
        self.orig = module.f32_to_f4_unpacked
        self.other_change = False

    def __enter__(self):
        orig = self.orig

        def wrapped(x):
            raw = orig(x)
            nan = torch.isnan(x)
            canon = orig(torch.where(nan, torch.tensor(CANON_NAN, dtype=torch.int32).view(torch.float32), x))
            if bool(((raw != canon) & ~nan).any()):
                self.other_change = True
            return canon

        self.module.f32_to_f4_unpacked = wrapped
        return self

    def __exit__(self, *a):
        self.module.f32_to_f4_unpacked = self.orig


def e4m3_canon(b):
    """torch keeps a NaN's sign in the E4M3 cast (0xFF); the recipes write 0x7F."""
    b = b.clone()
    b[b == 0xFF] = 0x7F
    return b


# Bytes compared per recipe (codes + scale bytes + 4 per dequantized value
# and per amax), printed at the end of the module (python -m unittest -v).
COMPARED = {}


def assert_same_bytes(tc, recipe, label, b, sfx, scale, data, deq, amax=None):
    """Our bundle b (orientation sfx) against the oracle's scale bytes, code
    bytes, dequantized values (bit patterns; two NaNs match, which the NaN
    rules of docs/semantics.md need) and, if given, the amax (bits)."""
    tc.assertTrue(torch.equal(b["scale" + sfx], scale), "%s%s: %d scale bytes differ" % (
        label, sfx, int((b["scale" + sfx] != scale).sum()) if b["scale" + sfx].shape == scale.shape else -1))
    tc.assertTrue(torch.equal(b["data" + sfx], data), "%s%s: %d code bytes differ" % (
        label, sfx, int((b["data" + sfx] != data).sum()) if b["data" + sfx].shape == data.shape else -1))
    got = b["dequant" + sfx]
    tc.assertEqual(got.shape, deq.shape, "%s%s: dequant shape" % (label, sfx))
    both_nan = torch.isnan(got) & torch.isnan(deq)
    diff = int(((got.view(torch.int32) != deq.view(torch.int32)) & ~both_nan).sum())
    tc.assertEqual(diff, 0, "%s%s: %d dequantized values differ" % (label, sfx, diff))
    n = scale.numel() + data.numel() * data.element_size() + 4 * deq.numel()
    if amax is not None:
        got_amax = b["amax" + sfx].reshape(())
        if torch.isnan(amax):
            tc.assertTrue(torch.isnan(got_amax), "%s%s amax" % (label, sfx))
        else:
            tc.assertEqual(same_bits(got_amax, amax.float().reshape(())), 0, "%s%s amax" % (label, sfx))
        n += 4
    COMPARED[recipe] = COMPARED.get(recipe, 0) + n


def assert_plants_fail(tc, b, sfx, scale, data, deq, amax=None):
    """The comparison must fail on one planted difference in each component:
    one code bit, one scale bit, one dequantized value's lowest bit (and the
    amax's). Run once per recipe on a case that matched."""
    def planted(key, flip):
        c = dict(b)
        t = b[key + sfx].clone()
        flat = t.reshape(-1).view(torch.int32 if key == "dequant" else torch.uint8)
        flat[len(flat) // 2] ^= flip
        c[key + sfx] = t
        return c
    for key, flip in (("data", 0x10), ("scale", 0x01), ("dequant", 1)) + ((("amax", 1),) if amax is not None else ()):
        with tc.assertRaises(AssertionError, msg="a planted %s difference went unnoticed" % key):
            assert_same_bytes(tc, "(planted)", "planted", planted(key, flip), sfx, scale, data, deq, amax)
    COMPARED.pop("(planted)", None)


def tearDownModule():
    for recipe, n in sorted(COMPARED.items()):
        print("%s: %d bytes compared, all identical" % (recipe, n))


def same_bits(a, b):
    a = a.contiguous().view(torch.int32)
    b = b.contiguous().view(torch.int32)
    return int((a != b).sum())


@unittest.skipIf(torch is None or not HAVE_CLI, "needs torch, numpy, safetensors and $NVFP4")
class _Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.cases = tensors()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def nvfp4(self, name, x, bf16, recipe):
        src = os.path.join(self.tmp.name, name + ".in.safetensors")
        t = torch.from_numpy(x.copy())
        save_file({"x": t.to(torch.bfloat16) if bf16 else t}, src)
        out = os.path.join(self.tmp.name, "%s.%s.safetensors" % (name, recipe))
        r = subprocess.run([NVFP4, "quantize", src, "-o", out, "--recipe", recipe, "--rowwise", "--columnwise"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return load_file(out)

    @staticmethod
    def torch_input(x, bf16):
        t = torch.from_numpy(x.copy())
        return t.to(torch.bfloat16) if bf16 else t


@unittest.skipIf(tao_nvfp4 is None, "torchao is not installed")
class TorchaoNVFP4(_Base):
    def run_torchao(self, t):
        amax = torch.max(torch.abs(t.float()))
        g = tao_nvfp4.per_tensor_amax_to_scale(amax)
        with CanonicalNaNCodes(tao_nvfp4) as c:
            scale, data = tao_nvfp4.nvfp4_quantize(t, 16, g)
            deq = tao_nvfp4.NVFP4Tensor.to_nvfp4(t, 16, per_tensor_scale=g).dequantize(torch.float32)
        return amax, e4m3_canon(scale.view(torch.uint8)), data, deq, c.other_change

    def test_torchao_byte_for_byte(self):
        for name, x, bf16 in self.cases:
            with self.subTest(tensor=name):
                b = self.nvfp4(name, x, bf16, "torchao")
                t = self.torch_input(x, bf16)
                for sfx, tt in (("", t), ("_t", t.t().contiguous())):
                    amax, scale, data, deq, other = self.run_torchao(tt)
                    self.assertFalse(other, "the NaN wrapper changed a non-NaN code")
                    assert_same_bytes(self, "torchao", name, b, sfx, scale, data, deq, amax)
                    if name == "normal":
                        assert_plants_fail(self, b, sfx, scale, data, deq, amax)


@unittest.skipIf(tao_nvfp4 is None, "torchao is not installed")
class TorchaoMXFP4Floor(_Base):
    def test_mxfp4_floor_byte_for_byte(self):
        for name, x, bf16 in self.cases:
            with self.subTest(tensor=name):
                b = self.nvfp4(name, x, bf16, "mxfp4-floor")
                t = self.torch_input(x, bf16)
                for sfx, tt in (("", t), ("_t", t.t().contiguous())):
                    with CanonicalNaNCodes(tao_mx) as c:
                        scale, data = tao_mx.to_mx(tt, torch.float4_e2m1fn_x2, 32,
                                                   tao_mx.ScaleCalculationMode.FLOOR)
                    self.assertFalse(c.other_change, "the NaN wrapper changed a non-NaN code")
                    data = data.view(torch.uint8)
                    deq = tao_mx.to_dtype(data, scale, torch.float4_e2m1fn_x2, 32, torch.float32)
                    scale = scale.view(torch.uint8)
                    assert_same_bytes(self, "mxfp4-floor", name, b, sfx, scale, data, deq)
                    if name == "normal":
                        assert_plants_fail(self, b, sfx, scale, data, deq)


@unittest.skipIf(modelopt_nvfp4 is None, "nvidia-modelopt is not installed")
class ModeloptNVFP4(_Base):
    def test_modelopt_byte_for_byte(self):
        Q = modelopt_nvfp4.NVFP4QTensor
        for name, x, bf16 in self.cases:
            with self.subTest(tensor=name):
                b = self.nvfp4(name, x, bf16, "modelopt")
                t = self.torch_input(x, bf16)
                for sfx, tt in (("", t), ("_t", t.t().contiguous())):
                    tt = tt.float()
                    qt, wsf, wsf2 = Q.quantize(tt.clone(), 16)
                    data = qt._quantized_data.view(torch.uint8)
                    deq = qt.dequantize(dtype=torch.float32, scale=wsf, double_scale=wsf2, block_sizes={-1: 16})
                    scale = e4m3_canon(wsf.view(torch.uint8))
                    assert_same_bytes(self, "modelopt", name, b, sfx, scale, data, deq)
                    if name == "normal":
                        assert_plants_fail(self, b, sfx, scale, data, deq)


if __name__ == "__main__":
    unittest.main()

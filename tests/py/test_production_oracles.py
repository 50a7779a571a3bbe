"""test_production_oracles.py - the recipes `compressed-tensors`, `vllm` and
`flashinfer` byte for byte against the production quantizers they reproduce,
run on this CPU from their PyPI packages:

- compressed-tensors 0.20.1 (what llm-compressor writes NVFP4 checkpoints
  with): generate_gparam, calculate_qparams with the NVFP4 preset's weight
  args (scale_dtype float8_e4m3fn), quantize_and_pack_fp4 (its CPU fallback:
  quantize, then pack_fp4_to_uint8), unpack_fp4_from_uint8 and dequantize.
- vLLM 0.33.0: ref_nvfp4_quant and ref_nvfp4_quant_dequant of
  vllm/model_executor/layers/quantization/utils/nvfp4_emulation_utils.py, with
  the global scale of vLLM's kernel tests, (448 * 6) / amax as torch computes
  it. vLLM's PyPI wheel is built for CUDA and pins torch; installed with
  --no-deps (requirements-vllm.txt) its package tree is present but
  `import vllm.model_executor` pulls in serving dependencies (zmq, ...), so
  this test loads that one file from the installed package with importlib
  (unchanged; its own imports of vllm.platforms, vllm.scalar_type and
  vllm.triton_utils work without them). On a CPU current_platform is not
  CUDA, so ref_nvfp4_quant_dequant takes its torch path, as it does in vLLM's
  NVFP4 emulation on any machine without a GPU.
- FlashInfer 0.7.4 (flashinfer-python): the batch-invariant NVFP4 CPU
  reference flashinfer.batch_invariant.quantization.nvfp4_reference
  .quantize_reference with the global scale of
  flashinfer.quantization.nvfp4_quantization_utils.make_nvfp4_global_scale;
  its scales come 128x4-swizzled and are compared with the bundle's
  scale_swizzled (padding included).

Inputs: the adversarial tensors of test_torch_oracles.py (E2M1 ties, zero and
underflowing blocks, fp32 subnormals, tiny and huge amaxes, amax 0, NaN and
Inf elements, a bf16 input) and these: shapes whose K/16 is not a multiple
of 4 (48 x 80: 5 blocks per row, 3 per column), a subnormal amax, a huge
amax with blocks whose scale underflows, a whole NaN block, and block amaxes
whose unrounded scale is an E4M3 tie under one product order or another
(scale-ties). Rowwise and
columnwise (the transposed tensor). Every comparison is of bytes: scale
bytes, code bytes, dequantized fp32 bit patterns (where the package defines
an fp32 dequantization), amax bits.

What is canonicalised, and checked to change nothing else: torch keeps a
NaN's sign in its float8 cast (0xFF); the recipes write 0x7F. vLLM's
reference returns E2M1 values, not codes: a value's code is its magnitude
index with the value's sign bit, and a NaN value (which has no code) must be
code 0x0 in the recipe. compressed-tensors is fed float32 tensors (a bf16
input widened exactly, as the nvfp4 tool reads it) for the recipe
`compressed-tensors`, and every case rounded to bf16 and kept in bf16 for the
recipe `compressed-tensors-bf16` (on a bf16 tensor torch rounds bamax/6 and
the global scale to bf16, as llm-compressor does on a bf16 model).

Checked with torch 2.15.0 (CPU), compressed-tensors 0.20.1, vllm 0.33.0
(installed with --no-deps) and flashinfer-python 0.7.4. Each class skips,
saying which package is missing, where its package is not importable; the
module skips without torch, numpy, safetensors or $NVFP4."""
import importlib.util
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

if torch is not None:
    from test_torch_oracles import (COMPARED, assert_plants_fail, assert_same_bytes,  # noqa: F401
                                    e4m3_canon, f32, tensors)
    from test_torch_oracles import tearDownModule  # noqa: F401  (prints the byte counts)

NVFP4 = os.environ.get("NVFP4")
HAVE_CLI = bool(NVFP4) and os.path.exists(NVFP4 or "")


def _optional(fn):
    try:
        return fn()
    except Exception:  # pragma: no cover
        return None


def _load_ct():
    from compressed_tensors.compressors.nvfp4.helpers import quantize_and_pack_fp4, unpack_fp4_from_uint8
    from compressed_tensors.quantization.lifecycle.forward import dequantize
    from compressed_tensors.quantization.quant_scheme import PRESET_SCHEMES
    from compressed_tensors.quantization.utils.helpers import calculate_qparams, generate_gparam
    return dict(pack=quantize_and_pack_fp4, unpack=unpack_fp4_from_uint8, dequantize=dequantize,
                args=PRESET_SCHEMES["NVFP4"]["weights"], qparams=calculate_qparams, gparam=generate_gparam)


def _load_vllm():
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "model_executor", "layers", "quantization",
                        "utils", "nvfp4_emulation_utils.py")
    mspec = importlib.util.spec_from_file_location("vllm_nvfp4_emulation_utils", path)
    mod = importlib.util.module_from_spec(mspec)
    mspec.loader.exec_module(mod)
    return mod


def _load_fi():
    from flashinfer.batch_invariant.quantization import nvfp4_reference
    from flashinfer.quantization.nvfp4_quantization_utils import make_nvfp4_global_scale
    return dict(ref=nvfp4_reference, gscale=make_nvfp4_global_scale)


CT = _optional(_load_ct) if torch is not None else None
VLLM = _optional(_load_vllm) if torch is not None else None
FI = _optional(_load_fi) if torch is not None else None

E2M1_MAGS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def more_tensors():
    """(name, float32 array, as_bf16): the cases test_torch_oracles.py lacks."""
    rng = np.random.default_rng(29)
    out = []
    x = rng.standard_normal((48, 80)).astype(np.float32)
    x[3, 16:32] = 0
    x[5, 33] = np.float32(2.5) * np.abs(x[5, 32:48]).max() / np.float32(6)
    out.append(("k80-m48", x, False))
    x = (rng.standard_normal((32, 48)) * 1e-41).astype(np.float32)  # subnormal amax (about 3e-41)
    x[0, 0] = f32(20000)
    out.append(("amax-subnormal", x, False))
    # huge amax: S_enc near 1e-35, blocks of 1e30 underflow their E4M3 scale
    x = (rng.standard_normal((32, 64)) * 1e30).astype(np.float32)
    x[0, 0] = np.float32(3.0e38)
    x[1, 16:32] *= np.float32(1e-8)
    out.append(("amax-huge-underflow", x, False))
    x = rng.standard_normal((32, 64)).astype(np.float32)
    x[2, 16:32] = np.nan
    out.append(("nan-block", x, False))
    out.append(("scale-ties", scale_ties(rng), False))
    return out


def scale_ties(rng):
    """32 x 128, amax 94.9163: block amaxes whose unrounded scale lands on an
    E4M3 midpoint (or one ulp off) under one product order or another
    ((bamax / 6) * S, bamax * (S * fl(1/6)), S * (bamax * fl(1/6))), so that
    recipes that order them differently write different scale bytes; the
    elements are multiples of the scale's E2M1 midpoints, ties of the encode."""
    f = np.float32
    amax = f(94.9163)
    s_enc = f(f(1) / amax) * f(2688)
    mids = np.array([9.0, 17.0, 34.0, 68.0, 136.0, 272.0, 4.5, 2.25, 0.5625, 1.125], dtype=f)
    x = np.zeros((32, 128), dtype=f)
    for i in range(32):
        for j in range(8):
            m = mids[(i * 8 + j) % len(mids)]
            b = f(m / (s_enc / f(6)))
            b = np.nextafter(b, f(np.inf) if (i + j) % 3 == 1 else (f(0) if (i + j) % 3 == 2 else b))
            blk = (rng.uniform(-1, 1, 16) * b).astype(f)
            blk[0] = b if b < amax else amax
            s = f(b / f(6))  # about the block scale: ties of the encode near s * midpoint
            blk[1:8] = (np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], dtype=f) * s).astype(f)
            x[i, 16 * j:16 * j + 16] = blk
    x[0, 0] = amax
    return x


def e2m1_codes_of_values(v):
    """Codes of E2M1 values: magnitude index | sign bit; NaN -> 0xFF (no code)."""
    mags = torch.tensor(E2M1_MAGS, dtype=torch.float32)
    a = v.abs()
    idx = torch.searchsorted(mags, a.contiguous().clamp(max=6.0)).clamp(max=7)
    nan = torch.isnan(v)
    assert bool(((mags[idx] == a) | nan).all()), "not E2M1 values"
    code = idx.to(torch.uint8) | (torch.signbit(v).to(torch.uint8) << 3)
    return torch.where(nan, torch.tensor(0xFF, dtype=torch.uint8), code)


def pack_codes(codes):
    return codes[..., 0::2] | (codes[..., 1::2] << 4)


@unittest.skipIf(torch is None or not HAVE_CLI, "needs torch, numpy, safetensors and $NVFP4")
class _Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.cases = tensors() + more_tensors()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def nvfp4(self, name, x, dtype, recipe):
        """The tool's bundle of x in dtype: None or False float32, True or torch.bfloat16 bf16 (the other
        oracle tests pass a bool), torch.float16 fp16 values."""
        dtype = torch.bfloat16 if dtype is True else None if dtype is False else dtype
        src = os.path.join(self.tmp.name, name + ".in.safetensors")
        t = torch.from_numpy(x.copy())
        # fp16 goes in widened to fp32 (exact; the tool reads F32 and BF16)
        save_file({"x": t.to(dtype).float() if dtype == torch.float16 else t.to(dtype) if dtype else t}, src)
        out = os.path.join(self.tmp.name, "%s.%s.safetensors" % (name, recipe))
        r = subprocess.run([NVFP4, "quantize", src, "-o", out, "--recipe", recipe, "--rowwise", "--columnwise"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return load_file(out)

    def each(self, recipe, run, all_dtype=None):
        """run(t) -> (scale, data, deq, amax, key) for every case and orientation, compared with the bundle.
        all_dtype (torch.bfloat16 or torch.float16): every case rounded to it, the tool given that tensor, and
        run() the same tensor itself."""
        for name, x, bf16 in self.cases:
            dtype = all_dtype or (torch.bfloat16 if bf16 else None)
            with self.subTest(tensor=name):
                b = self.nvfp4(name, x, dtype, recipe)
                t = torch.from_numpy(x.copy())
                if dtype:
                    t = t.to(dtype)
                    if not all_dtype:
                        t = t.float()  # the exact widening the tool does
                for sfx, tt in (("", t), ("_t", t.t().contiguous())):
                    scale, data, deq, amax, key = run(tt)
                    bb = dict(b)
                    bb["scale" + sfx] = b["scale" + sfx + key[len("scale"):]]  # scale_t_swizzled
                    if deq is None:  # no fp32 dequantization to compare: codes, scales and amax only
                        bb["dequant" + sfx] = deq = torch.zeros(0)
                    assert_same_bytes(self, recipe, name, bb, sfx, scale, data, deq, amax)
                    if name == "normal" and deq.numel():
                        assert_plants_fail(self, bb, sfx, scale, data, deq, amax)
                    elif name == "normal":
                        self.plants_fail_codes_scales(bb, sfx, scale, data, deq, amax)

    def plants_fail_codes_scales(self, b, sfx, scale, data, deq, amax):
        for key, flip in (("data", 0x10), ("scale", 0x01)):
            c = dict(b)
            t = b[key + sfx].clone()
            t.reshape(-1)[t.numel() // 2] ^= flip
            c[key + sfx] = t
            with self.assertRaises(AssertionError, msg="a planted %s difference went unnoticed" % key):
                assert_same_bytes(self, "(planted)", "planted", c, sfx, scale, data, deq, amax)
        COMPARED.pop("(planted)", None)


@unittest.skipIf(CT is None, "compressed-tensors is not installed (pip install compressed-tensors==0.20.1)")
class CompressedTensorsNVFP4(_Base):
    def run_ct(self, w):
        m, n = w.shape
        amin, amax = torch.aminmax(w)  # the observer's tensor-wide min and max
        gs = CT["gparam"](amin.reshape(1), amax.reshape(1))
        groups = w.unflatten(-1, (n // 16, 16))
        scale, _ = CT["qparams"](torch.amin(groups, dim=-1), torch.amax(groups, dim=-1), CT["args"], global_scale=gs)
        packed = CT["pack"](w, scale, global_scale=gs, group_size=16)
        unpacked = CT["unpack"](packed, m, n, dtype=torch.float32)
        deq = CT["dequantize"](unpacked, scale, args=CT["args"], global_scale=gs, dtype=torch.float32)
        sbytes = e4m3_canon(scale.to(torch.float8_e4m3fn).view(torch.uint8))  # _compress_scale
        return sbytes, packed, deq, torch.abs(w).amax().float(), "scale"

    def test_compressed_tensors_byte_for_byte(self):
        self.each("compressed-tensors", self.run_ct)

    def test_bf16_weights_byte_for_byte(self):
        """The same functions on bf16 tensors (llm-compressor on a bf16 model):
        the recipe compressed-tensors-bf16."""
        self.each("compressed-tensors-bf16", self.run_ct, all_dtype=torch.bfloat16)

    def test_fp16_weights_byte_for_byte(self):
        """The same functions on fp16 tensors (an fp16 model): the recipe
        compressed-tensors-fp16."""
        self.each("compressed-tensors-fp16", self.run_ct, all_dtype=torch.float16)

    def test_fp16_small_amax_gets_global_scale_one(self):
        """Specific values: on an fp16 weight 2688 / amax is evaluated in fp16,
        which ends at 65504. amax 0.03 (fp16 0.0300140380859375) overflows and
        nan_to_num gives gs = 1: the block scale is E4M3(fp16(amax / 6)) =
        E4M3(0.005001068) = 0x03 (3 * 2^-9), where the fp32 rule gives 0x7E
        (448); amax 0.05 gives gs = fp16(fp16(1/0.05) * 2688) = fp16(20 * 2688)
        = 53760 and scale E4M3(53760 * 0.008331298828125) = 0x7E. Both sides:
        compressed-tensors' functions and the recipe."""
        for amax, gs_want, byte in ((0.03, 1.0, 0x03), (0.05, 53760.0, 0x7E)):
            w = torch.zeros(16, 16, dtype=torch.float16)
            w[0, 0] = amax
            gs = CT["gparam"](torch.zeros(1, dtype=torch.float16), torch.abs(w).amax().reshape(1))
            self.assertEqual(float(gs), gs_want)
            scale, data, _, _, _ = self.run_ct(w)
            b = self.nvfp4("fp16-amax-%g" % amax, w.float().numpy(), torch.float16, "compressed-tensors-fp16")
            self.assertEqual((int(scale[0, 0]), int(b["scale"][0, 0])), (byte, byte))
            self.assertEqual((int(data[0, 0]) & 15, int(b["data"][0, 0]) & 15), (0x7, 0x7))

    def test_bf16_global_scale_is_a_bf16_value(self):
        """Specific values: amax 0.3 in bf16 (0.30078125) gives gs
        bf16(bf16(1/0.30078125) * 2688) = 8960 (fp32 2688/amax: 8936.7), so
        the block's scale byte 0x7E (448) dequantizes its 6 to 6 * (448 /
        8960) with the bf16 recipe and to 6 * (448 / 8936.7...) with the fp32 one."""
        w = torch.zeros(16, 16, dtype=torch.bfloat16)  # 16 rows: the tool also writes the columnwise blocks
        w[0, 0] = 0.3
        gs = CT["gparam"](torch.zeros(1, dtype=torch.bfloat16), torch.abs(w).amax().reshape(1))
        self.assertEqual((gs.dtype, gs.item()), (torch.float32, 8960.0))
        want = {"compressed-tensors-bf16": torch.tensor(8960.0), "compressed-tensors": 2688 / torch.tensor(0.30078125)}
        for recipe, g in want.items():
            b = self.nvfp4("gs-" + recipe, w.float().numpy(), True, recipe)
            self.assertEqual(b["scale"].reshape(-1)[0].item(), 0x7E)
            self.assertEqual(b["dequant"][0, 0].item(), (6 * (torch.tensor(448.0) / g)).item(), recipe)
        self.assertNotEqual(want["compressed-tensors"].item(), 8960.0)


@unittest.skipIf(VLLM is None, "vllm is not installed (pip install --no-deps -r tests/py/requirements-vllm.txt)")
class VllmRefNVFP4(_Base):
    def run_vllm(self, x):
        amax = torch.abs(x).max()
        gs = ((448.0 * 6.0) / amax).to(torch.float32)  # vLLM's kernel tests: (FLOAT8_E4M3_MAX * FLOAT4_E2M1_MAX) / amax
        vals, scale = VLLM.ref_nvfp4_quant(x, gs, 16)
        codes = e2m1_codes_of_values(vals)
        nan = codes == 0xFF
        self.nan_values = int(nan.sum())
        codes = torch.where(nan, torch.tensor(0, dtype=torch.uint8), codes)  # a NaN value has no code: 0x0
        deq = VLLM.ref_nvfp4_quant_dequant(x, gs, 16)
        deq = torch.where(nan, torch.tensor(0.0) * (scale.repeat_interleave(16, dim=-1) / gs), deq)
        sbytes = e4m3_canon(scale.to(torch.float8_e4m3fn).view(torch.uint8))
        return sbytes, pack_codes(codes), deq, amax, "scale"

    def test_vllm_byte_for_byte(self):
        self.each("vllm", self.run_vllm)

    def test_zero_scale_factor_is_1e_minus_8(self):
        """A block whose scale underflows keeps its elements near 0 (factor 1e-8), not +-6 as te."""
        x = torch.zeros(1, 32)
        x[0, 0] = 2688.0
        x[0, 16:] = 1e-4
        vals, scale = VLLM.ref_nvfp4_quant(x, ((448.0 * 6.0) / x.abs().max()).to(torch.float32), 16)
        self.assertEqual(scale[0, 1].item(), 0.0)
        self.assertEqual(vals[0, 16:].abs().max().item(), 0.0)


@unittest.skipIf(FI is None, "flashinfer-python is not installed (pip install flashinfer-python==0.7.4)")
class FlashInferNVFP4(_Base):
    def run_fi(self, x):
        gs = FI["gscale"](x, False)
        packed, sf, _ = FI["ref"].quantize_reference(x, gs)
        return sf, packed, None, torch.abs(x).max(), "scale_swizzled"

    def test_flashinfer_byte_for_byte(self):
        self.each("flashinfer", self.run_fi)


if __name__ == "__main__":
    unittest.main()

"""test_vllm_pertoken_oracle.py - vLLM's per-token NVFP4 (`nvfp4_per_token`)
against the recipe flashinfer-pertoken, byte for byte, on the CPU.

vLLM 0.33.0 has no arithmetic of its own for per-token NVFP4: the online
quantization `nvfp4_per_token` (vllm/config/quantization.py: QUANT_KEY_NAMES,
kNvfp4DynamicToken of model_executor/layers/quantization/utils/quant_utils.py)
quantizes MoE activations with
model_executor/layers/quantization/utils/flashinfer_utils.py
quantize_nvfp4_per_token_input, which is one call:
FlashInfer's nvfp4_quantize(x, NVFP4_PER_TOKEN_BASE_GLOBAL_SCALE = 1/(448*6),
sfLayout=layout_linear, per_token_activation=True) (its callers: the TRT-LLM
and CuTe-DSL MoE experts, fused_moe/experts/trtllm_nvfp4_moe.py and
flashinfer_cutedsl_moe.py). That kernel needs an SM100 GPU; this test runs
vLLM's own function with FlashInfer's nvfp4_quantize replaced by FlashInfer's
CPU reference of the same per-token class,
flashinfer/batch_invariant/quantization/nvfp4_reference.py quantize_reference
(x, gs_inv, per_token=True) (flashinfer-python 0.7.4; its nvfp4_spec.py says
the chain is the kernel's under FLASHINFER_DISABLE_FP4_QUANT_FAST_MATH, every
operation correctly rounded), with the 128x4 scales it returns unswizzled to
the linear layout vLLM asks for. The stand-in also asserts the arguments vLLM
passes. So it checks: what vLLM asks of FlashInfer (global scale, layout,
per-token mode, no 4over6 or backend argument: with FLASHINFER_NVFP4_4OVER6
unset, plain NVFP4), and that the answer equals flashinfer-pertoken's bytes.

Compared: the packed codes (every byte, -0 codes included), the linear E4M3
scale bytes, and the FP32 per-token scales (bits). An all-zero row is the one
place the CPU reference and the kernel differ: the reference divides 1 by
FLT_MAX without flushing and returns the subnormal 2^-128 (0x00200000); the
kernel, compiled with fast math (flush to zero), returns 0, which FlashInfer's
bitwise test (tests/utils/test_fp4_quantize.py, where(amax == 0, 0, ...)) and
flashinfer-pertoken give. The test asserts both numbers.

Not compared (docs/semantics.md, flashinfer-pertoken): vLLM does not set
FLASHINFER_DISABLE_FP4_QUANT_FAST_MATH, and without it the kernel takes
p = amax * fl(1/2688) and approximate reciprocals (rcp.approx.ftz), which no
recipe reproduces. Skips without numpy/torch/safetensors, vllm 0.33.0 or
flashinfer-python (tests/py/requirements-production.txt)."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import types
import unittest
from unittest import mock

try:
    import numpy as np
    import torch
    from safetensors.numpy import load_file
except ImportError:  # pragma: no cover
    np = None

HERE = os.path.dirname(os.path.abspath(__file__))
NVFP4 = os.environ.get("NVFP4", os.path.join(HERE, "..", "..", "build", "bin", "nvfp4"))
ACTIVATION = "vllm.model_executor.layers.fused_moe.activation"


def load_vllm_flashinfer_utils():
    """vLLM's flashinfer_utils.py, loaded as a file: `import vllm.model_executor` pulls in
    serving dependencies (zmq, ...); of its imports only MoEActivation (used in type hints and
    other functions) needs that package, so a stand-in class takes its place while it loads."""
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "model_executor", "layers", "quantization",
                        "utils", "flashinfer_utils.py")
    stub = types.ModuleType(ACTIVATION)
    stub.MoEActivation = type("MoEActivation", (), {})
    saved = sys.modules.get(ACTIVATION)
    sys.modules[ACTIVATION] = stub
    try:
        mspec = importlib.util.spec_from_file_location("vllm_flashinfer_utils", path)
        mod = importlib.util.module_from_spec(mspec)
        mspec.loader.exec_module(mod)
    finally:
        if saved is None:
            del sys.modules[ACTIVATION]
        else:
            sys.modules[ACTIVATION] = saved
    return mod


def _optional(load):
    try:
        return load()
    except Exception:  # a missing or incompatible package: the tests that need it skip
        return None


def _load_fi():
    import flashinfer
    from flashinfer.batch_invariant.quantization import nvfp4_reference
    return flashinfer, nvfp4_reference


if np is not None:
    import importlib.metadata as md
    VLLM = _optional(load_vllm_flashinfer_utils)
    if VLLM is not None and md.version("vllm") != "0.33.0":
        VLLM = None  # the semantics above were read from 0.33.0
    FI = _optional(_load_fi)
else:
    VLLM = FI = None


def inputs():
    """bf16 tensors (vLLM's activations): seeded rows at three magnitudes with a zero row, and
    rows of E2M1 midpoints; M not a multiple of 128 (the 128x4 padding the unswizzle drops)."""
    g = np.random.default_rng(48538)
    xs = []
    for rows, cols, scale in ((5, 64, 1.0), (3, 32, 1e-3), (130, 48, 300.0)):
        x = (g.standard_normal((rows, cols)) * scale).astype(np.float32)
        x[1] = 0
        xs.append(x)
    mid = np.tile(np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0], np.float32), (2, 4))
    mid[1] *= -1
    xs.append(mid)
    return [torch.from_numpy(x).to(torch.bfloat16) for x in xs]


@unittest.skipIf(np is None, "numpy, torch or safetensors not installed")
@unittest.skipIf(VLLM is None, "vllm 0.33.0 not installed (pip install --no-deps vllm==0.33.0)")
@unittest.skipIf(FI is None, "flashinfer-python not installed (tests/py/requirements-production.txt)")
class VllmPertokenOracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(NVFP4, os.X_OK):
            raise unittest.SkipTest("nvfp4 not built")
        cls.flashinfer, cls.ref = FI

    def vllm_quantize(self, x):
        """vLLM's quantize_nvfp4_per_token_input with FlashInfer's kernel replaced by its CPU
        reference; returns vLLM's (codes, linear scales, per-token scales) and the call's arguments."""
        calls = []

        def nvfp4_quantize(a, a_global_sf, **kw):
            calls.append((a_global_sf, kw))
            m, k = a.shape
            packed, sf_swizzled, pts = self.ref.quantize_reference(a, a_global_sf, per_token=True)
            return packed, self.ref.unswizzle_sf_128x4(sf_swizzled, m, k), pts

        with mock.patch.object(self.flashinfer, "nvfp4_quantize", nvfp4_quantize):
            q, s, p = VLLM.quantize_nvfp4_per_token_input(x)
        self.assertEqual(len(calls), 1)
        return q.numpy(), s.numpy(), p.numpy(), calls[0]

    def ours(self, x):
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "x.npy"), x.to(torch.float32).numpy())
            out = os.path.join(d, "b.safetensors")
            subprocess.run([NVFP4, "quantize", os.path.join(d, "x.npy"), "-o", out, "--recipe", "flashinfer-pertoken"],
                           check=True, capture_output=True)
            return load_file(out)

    def test_what_vllm_asks_of_flashinfer(self):
        _, _, _, (gsf, kw) = self.vllm_quantize(inputs()[0])
        self.assertEqual(gsf, 1.0 / (448.0 * 6.0))  # the Python double; the kernel takes float(gsf)
        self.assertEqual(np.float32(gsf).view(np.uint32), 0x39C30C31)  # fl(1/2688), whose inverse is 2688
        self.assertEqual(np.float32(1.0) / np.float32(gsf), np.float32(2688.0))
        self.assertEqual(set(kw), {"sfLayout", "per_token_activation"})  # no backend, 4over6 or batch-invariant
        self.assertEqual(kw["sfLayout"], self.flashinfer.SfLayout.layout_linear)
        self.assertIs(kw["per_token_activation"], True)

    def test_bytes(self):
        n = zero_rows = 0
        for x in inputs():
            q, s, p, _ = self.vllm_quantize(x)
            b = self.ours(x)
            self.assertEqual(b["data"].tobytes(), q.tobytes())
            self.assertEqual(b["scale"].tobytes(), s.tobytes())
            ours_p = b["per_token_scale"].view(np.uint32)
            ref_p = p.view(np.uint32)
            zero = (x.to(torch.float32).abs().amax(dim=1) == 0).numpy()
            self.assertEqual(ours_p[~zero].tolist(), ref_p[~zero].tolist())
            self.assertTrue((ours_p[zero] == 0).all())             # the kernel's flushed 1/FLT_MAX
            self.assertTrue((ref_p[zero] == 0x00200000).all())     # the CPU reference's 2^-128
            zero_rows += int(zero.sum())
            n += x.numel()
        self.assertEqual(n, 5 * 64 + 3 * 32 + 130 * 48 + 64)  # 6720 elements, every one compared
        self.assertEqual(zero_rows, 3)


if __name__ == "__main__":
    unittest.main()

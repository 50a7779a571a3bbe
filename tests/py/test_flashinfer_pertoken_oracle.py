"""test_flashinfer_pertoken_oracle.py - the recipe flashinfer-pertoken against
FlashInfer's own CPU reference, byte for byte: ref_fp4_quant_te(x, amax,
per_token_rowwise=True) and the per-token scales
where(amax == 0, 0, nvfp4_global_decode_scale_te(amax)) that
test_nvfp4_quantize_te_reference (tests/utils/test_fp4_quantize.py) asserts
the CUDA kernel matches bitwise (flashinfer-ai/flashinfer fb28d72,
tests/test_helpers/utils_fp4.py; flashinfer-python 0.7.4 installed for its
imports). That helper ships in FlashInfer's source tree, not in the wheel:
set FLASHINFER_SRC to a checkout; the test skips without it, without torch
or without flashinfer.

Compared: the E4M3 scale bytes, the per-token FP32 scales (bits), and the
codes' values (the reference returns values, not codes: cast_to_fp4 gives
+0 for a scaled -0.0 where the kernel's cvt gives code 0x8, so zeros are
compared by value). The inputs are bf16-representable, as the kernel reads
bf16/fp16: seeded random rows, a zero row, a row of E2M1 midpoints."""
import importlib.util
import os
import subprocess
import tempfile
import unittest

try:
    import numpy as np
    import torch
    from safetensors.numpy import load_file
except ImportError:  # pragma: no cover
    np = None

HERE = os.path.dirname(os.path.abspath(__file__))
NVFP4 = os.environ.get("NVFP4", os.path.join(HERE, "..", "..", "build", "bin", "nvfp4"))
SRC = os.environ.get("FLASHINFER_SRC", "")
HELPER = os.path.join(SRC, "tests", "test_helpers", "utils_fp4.py")
E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], np.float32) if np else None


def load_helper():
    spec = importlib.util.spec_from_file_location("fi_utils_fp4", HELPER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def inputs():
    g = np.random.default_rng(32)
    xs = []
    for rows, cols, scale in ((4, 64, 1.0), (7, 32, 1e-3), (3, 128, 300.0)):
        x = (g.standard_normal((rows, cols)) * scale).astype(np.float32)
        x[1] = 0  # a zero row: per-token scale 0
        xs.append(x)
    mid = np.tile(np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0], np.float32), (2, 4))
    mid[1] *= -1
    xs.append(mid)
    # bf16-representable, as the kernel reads bf16
    return [torch.from_numpy(x).to(torch.bfloat16).to(torch.float32).numpy() for x in xs]


@unittest.skipIf(np is None, "numpy, torch or safetensors not installed")
@unittest.skipUnless(os.path.isfile(HELPER), "FLASHINFER_SRC (a FlashInfer checkout) not set")
class FlashinferPertokenOracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(NVFP4, os.X_OK):
            raise unittest.SkipTest("nvfp4 not built")
        try:
            cls.fi = load_helper()
        except ImportError as e:  # flashinfer itself missing
            raise unittest.SkipTest(f"flashinfer not importable: {e}")

    def ours(self, x):
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "x.npy"), x)
            out = os.path.join(d, "b.safetensors")
            subprocess.run([NVFP4, "quantize", os.path.join(d, "x.npy"), "-o", out, "--recipe",
                            "flashinfer-pertoken"], check=True, capture_output=True)
            return load_file(out)

    def test_bytes(self):
        n = 0
        for x in inputs():
            b = self.ours(x)
            xt = torch.from_numpy(x)
            amax = xt.abs().amax(dim=1).to(torch.float32)
            q_ref, s_ref = self.fi.ref_fp4_quant_te(xt, amax, per_token_rowwise=True)
            p_ref = torch.where(amax == 0, torch.zeros_like(amax), self.fi.nvfp4_global_decode_scale_te(amax))
            self.assertEqual(b["scale"].tobytes(), s_ref.view(torch.uint8).numpy().tobytes())
            self.assertEqual(b["per_token_scale"].view(np.uint32).tolist(),
                             p_ref.numpy().view(np.uint32).tolist())
            d = b["data"]
            codes = np.stack([d & 0xF, d >> 4], axis=-1).reshape(x.shape)
            np.testing.assert_array_equal(E2M1[codes], q_ref.numpy())
            n += x.size
        self.assertEqual(n, 928)  # every element of the four tensors was compared


if __name__ == "__main__":
    unittest.main()

"""test_kv_layout_oracle.py - the NVFP4 KV-cache scale layouts of `nvfp4 quantize
--scale-layout kv-v|kv-k` (docs/semantics.md, "Scale layouts") byte for byte
against FlashInfer's own nvfp4_quantize_paged_kv_cache (flashinfer-python 0.7.4,
flashinfer/quantization/fp4_quantization.py; FlashInfer #3042), run on this CPU.

That function quantizes the flattened [tokens, head_dim] K and V caches with
fp4_quantize (a CUDA kernel, linear scale layout) and then permutes the V
scales in Python (the 4-token interleave); the K scales stay linear. Here its
fp4_quantize is replaced by a stub that returns our bundle's linear scales for
the same flattened matrix, so every byte of the V scales FlashInfer returns
comes out of its own reshape/permute code; they must equal our scale_swizzled
in layout kv-v, and its K scales our kv-k (linear) bytes, on every shape of
SHAPES (HND with one and two heads, NHD with one head: FlashInfer's NHD
permutation interleaves each head's strided [page_size, head_dim/16] tile,
which is the kv-v layout of that head's own matrix).

Skipped unless numpy, safetensors, torch, flashinfer and $NVFP4 are there."""
import os
import shutil
import subprocess
import tempfile
import unittest

try:
    import numpy as np
    import torch
    from safetensors import safe_open
    from safetensors.numpy import load_file
    import flashinfer.quantization.fp4_quantization as fq
except ImportError:  # pragma: no cover
    np = None

NVFP4 = os.environ.get("NVFP4")
# (num_pages, num_kv_heads, page_size, head_dim, kv_layout)
SHAPES = [(1, 1, 4, 64, "HND"), (3, 1, 8, 64, "HND"), (2, 2, 16, 128, "HND"), (2, 1, 4, 128, "NHD"),
          (3, 1, 16, 64, "NHD")]


@unittest.skipIf(np is None or not NVFP4, "needs numpy, safetensors, torch, flashinfer, $NVFP4")
class FlashInferKvCacheLayoutOracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.real_fp4_quantize = fq.fp4_quantize

    @classmethod
    def tearDownClass(cls):
        fq.fp4_quantize = cls.real_fp4_quantize
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def bundle(self, x2d, layout):
        inp, out = os.path.join(self.tmp, "x.npy"), os.path.join(self.tmp, "b_%s.safetensors" % layout)
        np.save(inp, x2d.astype("<f4"))
        subprocess.run([NVFP4, "quantize", inp, "-o", out, "--scale-layout", layout], check=True, capture_output=True)
        with safe_open(out, "np") as f:
            self.assertEqual(f.metadata()["scale_swizzle"], {"kv-k": "linear", "kv-v": "trtllm-kv-v"}[layout])
        return load_file(out)

    def flashinfer_scales(self, k, v, kv_layout, k_lin, v_lin):
        """FlashInfer's (k_scales, v_scales) bytes, its fp4_quantize answering with our linear scales."""
        answers = {}

        def fp4_quantize_stub(x, global_sf, sf_vec_size=16, is_sf_swizzled_layout=True):
            self.assertEqual(sf_vec_size, 16)
            self.assertFalse(is_sf_swizzled_layout)  # FlashInfer asks for linear scales, then permutes V's
            lin = answers["k"] if "k" not in answers["done"] else answers["v"]
            answers["done"].add("k")
            self.assertEqual(lin.shape[0], x.shape[0])
            return torch.zeros(x.shape[0], x.shape[1] // 2, dtype=torch.uint8), torch.from_numpy(lin.reshape(-1).copy())

        answers.update(k=k_lin, v=v_lin, done=set())
        fq.fp4_quantize = fp4_quantize_stub
        try:
            _, (k_sf, v_sf), _, _ = fq.nvfp4_quantize_paged_kv_cache(torch.from_numpy(k), torch.from_numpy(v),
                                                                     kv_layout)
        finally:
            fq.fp4_quantize = self.real_fp4_quantize
        return k_sf.view(torch.uint8).numpy().reshape(-1), v_sf.view(torch.uint8).numpy().reshape(-1)

    def check(self, pages, heads, page_size, head_dim, kv_layout):
        rng = np.random.default_rng(pages * 1000 + heads * 100 + page_size + head_dim)
        shape = (pages, heads, page_size, head_dim) if kv_layout == "HND" else (pages, page_size, heads, head_dim)
        # block magnitudes spread over 2^-6..2^6 so that neighbouring scale bytes differ
        mag = np.exp2(rng.integers(-6, 7, shape[:-1] + (head_dim // 16,))).repeat(16, -1)
        k = (rng.standard_normal(shape) * mag).astype(np.float32)
        v = (rng.standard_normal(shape) * mag[..., ::-1]).astype(np.float32)
        bk, bv = self.bundle(k.reshape(-1, head_dim), "kv-k"), self.bundle(v.reshape(-1, head_dim), "kv-v")
        k_fi, v_fi = self.flashinfer_scales(k, v, kv_layout, bk["scale"], bv["scale"])
        self.assertGreater(len(set(bv["scale"].reshape(-1).tolist())), 8)  # the permutation is visible
        np.testing.assert_array_equal(k_fi, bk["scale_swizzled"].reshape(-1))
        np.testing.assert_array_equal(v_fi, bv["scale_swizzled"].reshape(-1))
        if page_size * pages * heads > 4:  # V's interleave is not the identity here
            self.assertFalse(np.array_equal(v_fi, bv["scale"].reshape(-1)))

    def test_v_interleave_and_k_linear_against_nvfp4_quantize_paged_kv_cache(self):
        for pages, heads, page_size, head_dim, kv_layout in SHAPES:
            with self.subTest(pages=pages, heads=heads, page_size=page_size, head_dim=head_dim, kv_layout=kv_layout):
                self.check(pages, heads, page_size, head_dim, kv_layout)

    def test_hand_computed_position(self):
        # V scale (token 9, block 5) of a [16, 128]-element head (S = 8): 2 * 32 + 5 * 4 + 1 = 85
        lin = np.arange(16 * 8, dtype=np.uint8).reshape(16, 8)
        v = np.zeros((1, 1, 16, 128), dtype=np.float32)
        _, v_fi = self.flashinfer_scales(v, v, "HND", lin, lin)
        self.assertEqual(int(v_fi[85]), 9 * 8 + 5)


if __name__ == "__main__":
    unittest.main()

"""test_ct_triton_oracle.py - compressed-tensors' Triton NVFP4 path byte for byte
against the recipe `compressed-tensors`: compressed-tensors 0.20.1
compressors/nvfp4/helpers.py `quantize_and_pack_fp4_triton` (the fused
`_quantize_and_pack_fp4_kernel` that the GPU path of `quantize_and_pack_fp4` runs),
under the Triton interpreter (TRITON_INTERPRET=1) on this CPU, with the scales and
global scale computed as test_production_oracles.py's run_ct does.

The kernel computes x / div_rn(s, gs) in fp32, clamps to [-6, 6] and rounds by
threshold comparisons (ties to the even code, -0.0 written 0x0 as the CPU path
does), then packs two codes a byte. Its only conversions are exact ones (the
fp8 scale widened to fp32, small integers to int8), so the interpreter computes
what the GPU does, except where the quotient is NaN (a NaN element, or a NaN
scale from an Inf amax): the kernel converts NaN to int8, which PTX's cvt.rzi
defines as 0 (code 0x0, as the recipe writes) and numpy leaves undefined, so
the bytes holding such an element are left out of the comparison (and
counted). Runs in a child process because the interpreter must be switched on
before triton is imported. Skipped where torch, compressed-tensors or triton is
missing."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
NVFP4 = os.environ.get("NVFP4")


def child():
    import numpy as np
    import torch
    import test_production_oracles as P
    if P.CT is None:
        print("SKIP_CT")
        return 0
    try:
        from compressed_tensors.compressors.nvfp4.helpers import quantize_and_pack_fp4_triton
        import triton  # noqa: F401
    except Exception:
        print("SKIP_CT")
        return 0

    class Runner(P._Base):
        def runTest(self):
            pass

    Runner.setUpClass()
    r = Runner()
    total = compared = skipped = 0
    for name, x, bf16 in r.cases:
        b = r.nvfp4(name, x, bf16, "compressed-tensors")
        t = torch.from_numpy(x.copy())
        if bf16:
            t = t.to(torch.bfloat16).float()
        for sfx, w in (("", t), ("_t", t.t().contiguous())):
            m, n = w.shape
            amin, amax = torch.aminmax(w)
            gs = P.CT["gparam"](amin.reshape(1), amax.reshape(1))
            groups = w.unflatten(-1, (n // 16, 16))
            scale, _ = P.CT["qparams"](torch.amin(groups, dim=-1), torch.amax(groups, dim=-1), P.CT["args"],
                                       global_scale=gs)
            packed = quantize_and_pack_fp4_triton(w, scale, global_scale=gs, group_size=16)
            want = b["data" + sfx]
            # the kernel's quotient x / div_rn(s, gs), to find the bytes holding a NaN one
            q = w / (scale.float() / gs.float()).repeat_interleave(16, dim=-1)
            nan = torch.isnan(q).reshape(m, n // 2, 2).any(dim=-1)
            skipped += int(nan.sum())
            diff = int(((packed != want) & ~nan).sum())
            assert diff == 0, "%s%s: %d code bytes differ from the recipe" % (name, sfx, diff)
            total += want.numel() - int(nan.sum())
        compared += 1
    Runner.tearDownClass()
    assert compared >= 10 and total > 50000, (compared, total)
    print("compressed-tensors Triton path: %d tensors, %d code bytes, all identical to the recipe (%d bytes with a "
          "NaN quotient left out)" % (compared, total, skipped))
    return 0


class CompressedTensorsTriton(unittest.TestCase):
    def test_triton_path_byte_for_byte(self):
        if not NVFP4:
            self.skipTest("$NVFP4 not set")
        env = dict(os.environ, CT_TRITON_CHILD="1", TRITON_INTERPRET="1")
        p = subprocess.run([sys.executable, os.path.abspath(__file__)], env=env, capture_output=True, text=True,
                           cwd=HERE)
        if "SKIP_CT" in p.stdout:
            self.skipTest("compressed-tensors 0.20.1 or triton not installed")
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        print(p.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    if os.environ.get("CT_TRITON_CHILD") == "1":
        sys.exit(child())
    unittest.main()

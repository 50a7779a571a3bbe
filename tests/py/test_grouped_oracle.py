"""test_grouped_oracle.py - `nvfp4 quantize --groups` (grouped / MoE
quantization, docs/semantics.md "Grouped (MoE) quantization") byte for byte
against mslk's Triton nvfp4_quantize_stacked (mslk-cuda 1.1.0,
mslk/quantize/triton/fp4_quantize.py: nvfp4_quantize_stacked line 2315,
_nvfp4_quantize_stacked_kernel line 2189), executed on this CPU by the Triton
interpreter (TRITON_INTERPRET=1) with the GPU's casts
(triton_gpu_casts.gpu_casts(), as test_triton_oracles.py does), on stacked
bf16 tensors of a few experts with odd sizes, an empty expert first, in the
middle and last, experts longer than 128 rows, K/16 not a multiple of 4.

mslk takes the per-expert global scales from its caller. The test passes the
recipe `mslk`'s S_enc of each expert, 1 / (amax / 2688) in fp32 (torchao's
convention), so the oracle of expert i is `--recipe mslk` on expert i's rows;
it checks that mslk's own calculate_group_max (2688 / amax, one division)
gives the same S_enc or one ulp from it, and that mslk's whole pipeline
(calculate_group_max, then nvfp4_quantize_stacked with its scales) is the
recipe `mslk-stacked` byte for byte, where `mslk` differs in a few codes.

Compared: every code byte; every scale byte mslk writes, at the offsets of the
per-expert padded 128x4 layout computed here from its formula (segment i
starts at sum_{j<i} roundup(m_j,128) * roundup(K/16,4)); mslk allocates the
scale buffer with torch.empty and never writes the padding, so the padding
is checked only on our side (zero bytes). Inputs hold no zero block, so no
block scale rounds to E4M3 0 (where mslk's factor would be +Inf, the defect
the `mslk` recipe documents). Skipped unless torch, triton, mslk-cuda (see
test_triton_oracles.py for how it is found) and $NVFP4 are there."""
import os
import subprocess
import sys
import tempfile
import unittest

# Each Triton module runs in a process of its own (NVFP4_TRITON_CHILD=1, which RerunInterpreted sets):
# the interpreter has to be on before triton is first imported, and two modules that load Triton kernels
# into one process (unittest discover imports them all first) break each other's interpreted launches.
NEEDS_FRESH_PROCESS = os.environ.get("NVFP4_TRITON_CHILD") != "1"
os.environ.setdefault("TRITON_INTERPRET", "1")

try:
    import numpy as np
    import torch
    from safetensors.numpy import load_file
except ImportError:  # pragma: no cover
    torch = None

MSLK = gpu_casts = None
if torch is not None and not NEEDS_FRESH_PROCESS:
    try:
        from triton_gpu_casts import gpu_casts
        from test_triton_oracles import _load_mslk
        MSLK = _load_mslk()
    except Exception:  # pragma: no cover
        MSLK = None

NVFP4 = os.environ.get("NVFP4")

# (m_sizes, K): an empty expert first, in the middle and last; 130 rows (two
# 128-row tiles in its segment); K/16 = 5 (two 4-column scale tiles)
CASES = [([3, 0, 130, 1, 17, 0], 80), ([0, 5, 2], 32), ([1], 16), ([129, 0, 64], 48)]


def padded_offsets(m_sizes, sc):
    """(expert, row, col) -> byte offset in the per-expert padded 128x4 layout, written from the formula
    (docs/semantics.md, "Tensor layout" and "Grouped (MoE) quantization"), not from our code."""
    zc = (sc + 3) // 4
    out, start = [], 0
    for i, m in enumerate(m_sizes):
        for r in range(m):
            for c in range(sc):
                off = ((r // 128) * zc + c // 4) * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + c % 4
                out.append((i, r, c, start + off))
        start += -(-m // 128) * 128 * zc * 4
    return out, start


def stacked_input(m_sizes, k, seed):
    """bf16 [sum(m), k], each expert at its own magnitude, no zero block (every element is nonzero)."""
    g = torch.Generator().manual_seed(seed)
    parts = []
    for i, m in enumerate(m_sizes):
        x = torch.randn((m, k), generator=g) * (10.0 ** (i % 4 - 1))
        x = torch.where(x == 0, torch.full_like(x, 0.5), x)
        parts.append(x)
    return torch.cat(parts).to(torch.bfloat16)


def ours(x, m_sizes, recipe="mslk"):
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "x.npy"), x.float().numpy())
        out = os.path.join(d, "g.safetensors")
        subprocess.run([NVFP4, "quantize", os.path.join(d, "x.npy"), "-o", out, "--recipe", recipe, "--groups",
                        ",".join(map(str, m_sizes))], check=True, capture_output=True)
        return load_file(out)


def s_enc_mslk(x, m_sizes):
    """The recipe mslk's S_enc per expert: 1 / (amax / 2688) in fp32 (1.0 for an empty expert: never read)."""
    out, r = [], 0
    for m in m_sizes:
        amax = x[r:r + m].float().abs().max() if m else torch.tensor(2688.0)
        out.append((amax / (448.0 * 6.0)).reciprocal())
        r += m
    return torch.stack(out).to(torch.float32)


@unittest.skipIf(MSLK is None or NVFP4 is None,
                 "runs in a fresh process" if NEEDS_FRESH_PROCESS else "mslk-cuda, triton or $NVFP4 missing")
class MslkStackedOracle(unittest.TestCase):
    def run_mslk(self, x, m_sizes, scales):
        with gpu_casts() as used:
            q, s = MSLK.nvfp4_quantize_stacked(torch.tensor(m_sizes, dtype=torch.int64), x, scales)
        self.assertGreater(used["e4m3"], 0)
        self.assertGreater(used["e2m1x2"], 0)
        return q.view(torch.uint8).numpy(), s.view(torch.uint8).reshape(-1).numpy()

    def test_stacked_byte_for_byte(self):
        compared = 0
        for n, (m_sizes, k) in enumerate(CASES):
            with self.subTest(m_sizes=m_sizes, k=k):
                x = stacked_input(m_sizes, k, n)
                b = ours(x, m_sizes)
                q, s = self.run_mslk(x, m_sizes, s_enc_mslk(x, m_sizes))
                self.assertTrue(np.array_equal(b["data"], q), "codes")
                offs, total = padded_offsets(m_sizes, k // 16)
                swz = b["scale_swizzled"].reshape(-1)
                self.assertEqual(swz.size, total)
                written = np.zeros(total, dtype=bool)
                for i, r, c, off in offs:
                    written[off] = True
                idx = np.array([o[3] for o in offs])
                self.assertTrue(np.array_equal(swz[idx], s[idx]), "scales at the per-expert padded offsets")
                self.assertFalse(swz[~written].any(), "our padding bytes are zero")
                # the linear scales are the same bytes: scale[row, c] at its offset
                lin = b["scale"]
                row_of = np.cumsum([0] + m_sizes)
                for i, r, c, off in offs[:: max(1, len(offs) // 64)]:
                    self.assertEqual(lin[row_of[i] + r, c], swz[off])
                # amax per expert: the amax of its rows (0 for an empty one)
                for i, m in enumerate(m_sizes):
                    want = x[row_of[i]:row_of[i] + m].float().abs().max().item() if m else 0.0
                    self.assertEqual(float(b["amax"][i]), want)
                compared += q.size + idx.size
        print("mslk nvfp4_quantize_stacked: %d code and scale bytes identical over %d stacked tensors" %
              (compared, len(CASES)))

    def test_mslk_pipeline_is_mslk_stacked(self):
        """mslk's own pipeline (calculate_group_max, then nvfp4_quantize_stacked with its scales) is the recipe
        mslk-stacked byte for byte; the recipe mslk (torchao's S_enc, one ulp away for some amaxes) is not."""
        m_sizes, k = [37, 0, 130, 5, 64], 64
        same = other = 0
        for seed in range(10, 13):
            x = stacked_input(m_sizes, k, seed)
            gs, _ = MSLK.calculate_group_max(x, torch.tensor(m_sizes, dtype=torch.int64))
            q, s = self.run_mslk(x, m_sizes, gs)
            b = ours(x, m_sizes, recipe="mslk-stacked")
            offs, _ = padded_offsets(m_sizes, k // 16)
            idx = np.array([o[3] for o in offs])
            self.assertTrue(np.array_equal(b["data"], q), "codes, seed %d" % seed)
            self.assertTrue(np.array_equal(b["scale_swizzled"].reshape(-1)[idx], s[idx]), "scales, seed %d" % seed)
            same += q.size + idx.size
            other += int((ours(x, m_sizes, recipe="mslk")["data"] != q).sum())
        print("mslk calculate_group_max + nvfp4_quantize_stacked: %d bytes identical to mslk-stacked; the recipe "
              "mslk differs in %d code bytes" % (same, other))
        self.assertGreater(other, 0)

    def test_one_shared_scale_is_not_what_mslk_writes(self):
        """The catalogued mistake (one global scale for every expert): the tensor's S_enc for all experts
        gives other scale bytes than the per-expert run, so the comparison above can fail."""
        m_sizes, k = CASES[0]
        x = stacked_input(m_sizes, k, 0)
        shared = (x.float().abs().max() / 2688.0).reciprocal()
        _, s_shared = self.run_mslk(x, m_sizes, torch.full((len(m_sizes),), float(shared)))
        b = ours(x, m_sizes)
        offs, _ = padded_offsets(m_sizes, k // 16)
        idx = np.array([o[3] for o in offs])
        differ = int((b["scale_swizzled"].reshape(-1)[idx] != s_shared[idx]).sum())
        self.assertGreater(differ, 0)

    def test_calculate_group_max_convention(self):
        """mslk's calculate_group_max: S_enc = 2688 / amax (one division, IEEE under the interpreter; a GPU's
        Triton fp32 `/` is not checked here); torchao's 1 / (amax / 2688) is that or one ulp from it; an empty
        expert keeps FLT_MAX."""
        m_sizes, k = [3, 0, 130, 1], 64
        x = stacked_input(m_sizes, k, 5)
        gs, _ = MSLK.calculate_group_max(x, torch.tensor(m_sizes, dtype=torch.int64))
        r = 0
        for i, m in enumerate(m_sizes):
            if not m:
                self.assertEqual(float(gs[i]), float(torch.finfo(torch.float32).max))
                continue
            amax = x[r:r + m].float().abs().max()
            # one IEEE fp32 division (the interpreter's numpy one; not torch's 2688 / t, which is reciprocal(t) * 2688)
            want = np.float32(2688.0) / np.float32(amax.item())
            self.assertEqual(int(gs[i].view(torch.int32)), int(np.array(want).view(np.int32)))
            ulps = abs(int(gs[i].view(torch.int32)) - int(s_enc_mslk(x[r:r + m], [m])[0].view(torch.int32)))
            self.assertLessEqual(ulps, 1)
            r += m


@unittest.skipUnless(NEEDS_FRESH_PROCESS, "this is the child process: the tests above run here")
class RerunInterpreted(unittest.TestCase):
    def test_in_a_fresh_process(self):
        env = dict(os.environ, TRITON_INTERPRET="1", NVFP4_TRITON_CHILD="1")
        r = subprocess.run([sys.executable, "-m", "unittest", "-v", "test_grouped_oracle"], env=env,
                           cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True, text=True)
        print("\n".join(l for l in (r.stdout + r.stderr).splitlines()
                        if l.startswith(("test_", "mslk", "Ran", "OK", "FAILED", "AssertionError"))))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()

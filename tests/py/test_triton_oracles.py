"""test_triton_oracles.py - the recipe `mslk` byte for byte against the Triton
NVFP4 quantize kernel of mslk-cuda 1.1.0 (mslk/quantize/triton/fp4_quantize.py
triton_quantize_nvfp4, the kernel torchao 0.18's mslk_quantize_nvfp4 runs),
executed on this CPU by the Triton interpreter (TRITON_INTERPRET=1) with the
global scale torchao passes it (1 / (amax / 2688)).

The interpreter's own fp32 -> fp8e4nv and fp32 -> bf16 casts are not what the
GPU computes (ties away from zero, no saturation, truncated subnormals; bf16
truncated), and it cannot run inline PTX: triton_gpu_casts.gpu_casts()
replaces exactly those casts and mslk's one inline asm
(cvt.rn.satfinite.e2m1x2.f32) with the GPU's semantics (round to nearest
even, satfinite) and changes nothing else; the test checks that each
replacement was used. mslk-cuda's package __init__ loads its CUDA library,
which fails without a GPU, so the test loads fp4_quantize.py (which imports
only torch and triton) from the installed package with importlib, unchanged.

Compared: the code bytes, the 128x4-swizzled scale bytes with their zero
padding (the bundle's scale_swizzled; 48 x 80 has K/16 = 5, not a multiple
of 4), rowwise and columnwise, on the tensors of test_torch_oracles.py and
test_production_oracles.py whose computation raises no NaN (the interpreter
propagates NaN through tl.max and tl.clamp where a GPU's max.f32 does not, so
no claim is made about NaN): E2M1 ties, zero and underflowing blocks, fp32
subnormals, tiny and huge amaxes, a bf16 input.

mslk's defect, not reproduced by the recipe (docs/semantics.md): a block
whose scale rounds to E4M3 0 gets the factor global_scale / 0 = +Inf, so its
zero elements are 0 * Inf = NaN and come out as code 0x7 (+6) and its
nonzero elements +-6; the recipe clamps the factor to FLT_MAX. The test
demands identical bytes everywhere else and, in those blocks, exactly mslk's
0x7 for every zero element (and counts them).

Skipped unless torch, triton, safetensors, mslk-cuda and $NVFP4 are there.
Install mslk-cuda apart, `pip install --no-deps --target DIR mslk-cuda==1.1.0`,
and set MSLK_DIR=DIR: installed into site-packages its package, whose import
fails without a GPU, is found by torchao and nvidia-modelopt, which then fail
to import and test_torch_oracles.py skips. Checked with torch 2.15.0, triton
3.9.0, mslk-cuda 1.1.0."""
import importlib.util
import os
import subprocess
import sys
import unittest

# The interpreter has to be on before triton is first imported (triton.language's
# own jit helpers, tl.cdiv for one, are built then). Where another test module
# imported triton first (unittest discover: flashinfer and torchao do), this
# module runs itself again in a fresh process (RerunInterpreted below).
# Each Triton module runs in a process of its own (NVFP4_TRITON_CHILD=1, which RerunInterpreted sets):
# the interpreter has to be on before triton is first imported, and two modules that load Triton kernels
# into one process (unittest discover imports them all first) break each other's interpreted launches.
NEEDS_FRESH_PROCESS = os.environ.get("NVFP4_TRITON_CHILD") != "1"
os.environ.setdefault("TRITON_INTERPRET", "1")

try:
    import numpy as np
    import torch
except ImportError:  # pragma: no cover
    torch = None


def _mslk_package_dir():
    """$MSLK_DIR/mslk (pip install --no-deps --target $MSLK_DIR mslk-cuda==1.1.0), else build/third-party/mslk
    of this checkout (where .ci/run installs it), else an installed mslk."""
    target = os.environ.get("MSLK_DIR")
    if target:
        return os.path.join(target, "mslk")
    local = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "third-party", "mslk")
    if os.path.isdir(local):
        return local
    spec = importlib.util.find_spec("mslk")
    return list(spec.submodule_search_locations)[0] if spec and spec.submodule_search_locations else None


def _load_mslk():
    pkg = _mslk_package_dir()
    path = os.path.join(pkg, "quantize", "triton", "fp4_quantize.py") if pkg else None
    if path is None or not os.path.exists(path):
        return None
    mspec = importlib.util.spec_from_file_location("mslk_fp4_quantize", path)
    mod = importlib.util.module_from_spec(mspec)
    mspec.loader.exec_module(mod)
    return mod


MSLK = gpu_casts = None
if torch is not None and not NEEDS_FRESH_PROCESS:
    try:
        from triton_gpu_casts import gpu_casts
        MSLK = _load_mslk()
    except Exception:  # pragma: no cover
        MSLK = None
    from test_production_oracles import COMPARED, _Base, more_tensors  # noqa: F401
    from test_torch_oracles import tearDownModule, tensors  # noqa: F401  (prints the byte counts)
else:  # pragma: no cover
    _Base = unittest.TestCase

# tensors whose computation would raise a NaN (NaN inputs; amax 0 or +Inf, or
# g = amax/2688 at or below 2^-128, give S_enc = +Inf or 0 and 0 * Inf)
NAN_RAISING = {"nan-element", "nan-block", "inf-element", "amax-zero", "g-underflow-100", "g-underflow-1344",
               "g-underflow-1345", "amax-2^-130x2688"}  # the last two: 1/g = +Inf, so (0/6) * Inf


def per_tensor_scale_of(x):
    """torchao per_tensor_amax_to_scale: amax / (448 * 6), a division."""
    return torch.abs(x).max().to(torch.float32) / (448.0 * 6.0)


@unittest.skipIf(MSLK is None, "runs in a fresh process (RerunInterpreted)" if NEEDS_FRESH_PROCESS else
                 "mslk-cuda not found (pip install --no-deps --target DIR mslk-cuda==1.1.0; MSLK_DIR=DIR) "
                 "or triton is missing")
class MslkTritonNVFP4(_Base):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.cases = [c for c in tensors() + more_tensors() if c[0] not in NAN_RAISING]

    def run_mslk(self, x):
        amax = torch.abs(x).max()
        per_tensor_scale = per_tensor_scale_of(x)
        with gpu_casts() as used:
            q, s = MSLK.triton_quantize_nvfp4(x.contiguous(), per_tensor_scale.reciprocal())
        self.assertGreater(used["e4m3"], 0)
        self.assertGreater(used["e2m1x2"], 0)
        return q.view(torch.uint8), s.view(torch.uint8), amax

    def test_mslk_byte_for_byte_but_zero_scale_blocks(self):
        defect_bytes = 0
        for name, x, bf16 in self.cases:
            with self.subTest(tensor=name):
                b = self.nvfp4(name, x, bf16, "mslk")
                t = torch.from_numpy(x.copy())
                if bf16:
                    t = t.to(torch.bfloat16)
                for sfx, tt in (("", t), ("_t", t.t().contiguous())):
                    data, sw, amax = self.run_mslk(tt)
                    self.assertTrue(torch.equal(b["scale" + sfx + "_swizzled"], sw), "%s%s scales" % (name, sfx))
                    got_amax = b["amax" + sfx].reshape(())
                    self.assertEqual(int(got_amax.view(torch.int32)), int(amax.float().view(torch.int32)))
                    # codes: equal outside the blocks whose factor S_enc / s is +Inf in fp32
                    # (s = 0, or the quotient overflows), where the recipe has FLT_MAX
                    s_val = b["scale" + sfx].view(torch.float8_e4m3fn).float()
                    inf_blk = torch.isinf(per_tensor_scale_of(tt).reciprocal() / s_val)
                    inf_blk = inf_blk.repeat_interleave(8, dim=1)  # 8 code bytes per block
                    ours = b["data" + sfx]
                    self.assertTrue(torch.equal(ours[~inf_blk], data[~inf_blk]), "%s%s codes" % (name, sfx))
                    # in them, mslk's x * Inf: +-6 (0x7 | sign) for nonzero x, 0 * Inf = NaN -> 0x7 for zeros
                    xs = tt.float().reshape(ours.shape[0], -1)
                    for half, th in ((xs[:, 0::2], data & 0xF), (xs[:, 1::2], data >> 4)):
                        want = torch.where((half != 0) & (half < 0), 0xF, 0x7).to(torch.uint8)
                        self.assertTrue(torch.equal(th[inf_blk], want[inf_blk]), "%s%s: an Inf-factor block" % (name, sfx))
                        defect_bytes += int((inf_blk & (ours != data)).sum())
                    COMPARED["mslk"] = COMPARED.get("mslk", 0) + sw.numel() + int((~inf_blk).sum()) + 4
        print("mslk: %d code bytes of blocks whose factor S_enc / s is +Inf differ from the recipe's (x * Inf: +-6, "
              "and 0 * Inf = NaN -> 0x7), the defect the recipe does not copy" % defect_bytes)
        self.assertGreater(defect_bytes, 0)

    def test_interpreter_casts_replaced(self):
        """The replacement matters: the interpreter's own fp8 cast rounds 0x1.1p+0 (a tie) up, the GPU down."""
        from triton_gpu_casts import e4m3_rn_satfinite
        self.assertEqual(int(e4m3_rn_satfinite(np.array([1.0625], dtype=np.float32))[0]), 0x38)
        self.assertEqual(int(e4m3_rn_satfinite(np.array([1000.0], dtype=np.float32))[0]), 0x7E)


@unittest.skipUnless(NEEDS_FRESH_PROCESS, "this is the child process: the tests above run here")
class RerunInterpreted(unittest.TestCase):
    def test_in_a_fresh_process(self):
        env = dict(os.environ, TRITON_INTERPRET="1", NVFP4_TRITON_CHILD="1")
        r = subprocess.run([sys.executable, "-m", "unittest", "-v", "test_triton_oracles"], env=env,
                           cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True, text=True)
        report = "\n".join(l for l in (r.stdout + r.stderr).splitlines()
                           if l.startswith(("test_", "mslk", "Ran", "OK", "FAILED", "AssertionError")))
        print(report)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()

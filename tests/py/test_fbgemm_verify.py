"""test_fbgemm_verify.py - what `nvfp4 verify` and `nvfp4 identify` say about
fbgemm-gpu-genai 1.9.0's Triton NVFP4 quantize kernel, run on this CPU.

The kernel: fbgemm_gpu/experimental/gemm/triton_gemm/fp4_quantize.py
(fbgemm-gpu-genai 1.9.0 from PyPI), triton_scale_nvfp4_quant (line 1498)
launching _kernel_nvfp4_quantize (line 1291), with the global scale fbgemm's
own callers pass: (448.0 * 6.0) / torch.amax(torch.abs(x.flatten()))
(experimental/gen_ai/bench/quantize_ops.py:2372, and fp4_quantize.py:5618
get_nvfp4_global_scales_naive), i.e. torch's Tensor.__rtruediv__,
fl(fl(1/amax) * 2688) with no FLT_MAX clamp and no amax-0 guard. What the
source computes (line numbers in fp4_quantize.py):
  - s = e4m3_satfinite((bamax / 6.0) * gs)                 (1405)
  - y = div_rn(x, s / gs), codes by cvt.rn.satfinite.e2m1x2  (1412-1415, 1437)
  - the 128x4 swizzle offset decodes the linear group index with the padded
    group count SCALE_K = round_up(K/16, 4) as the row length (1463-1474):
    wrong whenever K/16 is not a multiple of 4;
  - the outputs come from torch.empty (1547, 1560): padding cells of the
    swizzled scales (and, with the swizzle bug, the cells it misses) are
    never written.
So its true chain in the catalog's terms is te + global-torch-rdiv +
scale-div6-then-senc + encode-s-over-senc + layout-swizzle-padded-stride,
plus two rules the catalog does not have: S_enc = +Inf (amax subnormal) or
0 (amax +Inf) kept as they are (te clamps and replaces), and, from them,
0 * Inf scales (0x7F) and 0 / 0 codes (0x7).

How it runs here: the Triton interpreter (TRITON_INTERPRET=1) with
triton_gpu_casts.gpu_casts(): the GPU's fp32 -> e4m3 (RN, satfinite),
bf16 -> fp32 (exact; the interpreter's is wrong on bf16 subnormals) and the
kernel's inline cvt.rn.satfinite.e2m1x2 / mov.b32 asm; nothing else is
changed. fbgemm's package __init__ loads its CUDA library, so the package is
bypassed (an empty `fbgemm_gpu` module whose path is the installed folder)
and fp4_quantize.py is loaded from the wheel, unchanged. The wrapper accepts
bf16/fp16 input only (line 1541): every tensor of test_production_oracles.py
(P.tensors() + P.more_tensors()) is rounded to bf16 and the verifier is given
the same values widened to fp32 (exactly the kernel's input). NaN inputs are
left out (the interpreter's max propagates NaN, a GPU's max.f32 does not).
torch.empty is filled with 0x00 before the kernel runs (its content is
unspecified; zero is te's padding, so the comparison sees the cells the
kernel writes); test_padding_never_written fills it with 0xA5 instead.

IEEE model, not the GPU's bytes: both plain `/` of the kernel (bamax / 6.0
and s / gs) are, on an NVIDIA GPU, Triton's default fp32 division
(div.full.f32, about 2 ulp, not correctly rounded); the interpreter divides
exactly (numpy). The bytes asserted here are those of the kernel with
IEEE-rounded divisions. A GPU can differ from them in: scale bytes whose
(bamax / 6.0) * gs lies within a few ulp of an E4M3 rounding boundary, and
codes whose divisor s / gs is off by an ulp and whose x / (s / gs) lies near
an E2M1 boundary (in particular the exact ties of e2m1-ties and scale-ties).
Zero, NaN and Inf outcomes (0/0, x/0, 0*Inf) do not depend on the rounding.

Measured (this test asserts each; update it with the verifier):
  - the recipe `fbgemm` (src/recipes/fbgemm.c: the chain above without its
    bugs) gives every code, scale byte and amax of 18 of the 19 tensors
    (29,016 bytes; scales read back through the kernel's own index); the one
    left out is amax +Inf (S_enc = 0, every code 0 / 0 or x / 0: the
    interpreter's NaN handling, not a GPU's, decides those bytes).
  - identify lists `fbgemm rn 1x16` (with layout-swizzle-padded-stride where
    K/16 is not a multiple of 4: k80-m48, laplace-blockscaled, amax-subnormal,
    e2m1-ties) among the variants that reproduce every byte of each of those
    18 tensors; its chain is fbgemm + layout-swizzle-padded-stride (proven
    layout) on the K/16 = 3, 5, 6 shapes. Where another recipe gives the same
    bytes (te on random data, modelopt where amax is 0 or g underflows) the
    chain may start there; no step is then stated proven that is false of
    fbgemm.
  - verify against the golden of `fbgemm` reports a match where K/16 is a
    multiple of 4 and otherwise proves the swizzle bug; against te's it
    states as proven only the scale placement (scale-permuted), that the
    output is recipe fbgemm's (different-recipe), and, where fbgemm's S_enc
    is not te's, global-scale: each is checked true.

Skipped unless torch, triton, safetensors, $NVFP4 and fbgemm-gpu-genai are
there. Install it apart (it is 34 MB, 181 MB unpacked, and its package
import needs a GPU): `pip install --no-deps --target DIR
fbgemm-gpu-genai==1.9.0` and set FBGEMM_DIR=DIR (default:
build/third-party-fbgemm of this checkout). Checked with torch 2.15.0,
triton 3.9.0, fbgemm-gpu-genai 1.9.0."""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
NVFP4 = os.environ.get("NVFP4")
CHILD = os.environ.get("FBGEMM_CHILD") == "1"

try:
    import numpy as np
    import torch
    from safetensors.torch import save_file
except ImportError:  # pragma: no cover
    torch = None

SWIZZLE_BUG = "layout-swizzle-padded-stride"
# fbgemm's rule per identify step, in the catalog's names (None: te's own rule); see the module doc
FBGEMM_RULES = {"amax": {None}, "global-scale": {"global-torch-rdiv"}, "rht": {None},
                "block-scale": {"scale-div6-then-senc"}, "encode-factor": {"encode-s-over-senc"},
                "element-rounding": {None}, "special-values": {None}}
# measured: identify finds no exact variant or chain (fbgemm keeps S_enc = 0 for amax +Inf; its codes then come
# from 0 / 0 and x / 0, which no catalogued special-value rule composes with). amax-subnormal (S_enc = +Inf) is
# explained since global-unguarded is catalogued.
NOT_EXPLAINED = {"inf-element"}
# measured: fbgemm's S_enc is +Inf there, so no scale byte equals te's: verify cannot read the placement of the
# scales from their values (identify names the swizzle bug in the chain)
PLACEMENT_UNREADABLE = {"amax-subnormal"}
def fbgemm_senc(xp):
    """The global scale fbgemm's callers pass: (448.0 * 6.0) / amax as torch computes it, on the input verify saw."""
    x = torch.from_numpy(np.load(xp))
    return ((448.0 * 6.0) / torch.amax(torch.abs(x.flatten()))).item()


def fbgemm_linear_scales(sw, m, g):
    """The [m, g] scales the kernel wrote, read through its own 128x4 index (fp4_quantize.py:1463-1474): the
    linear group index e decoded with SCALE_K = round_up(g, 4) groups per row."""
    n_col = (g + 3) // 4
    e = np.arange(m * g)
    first, second = e // (512 * n_col), (e % (512 * n_col)) // (128 * n_col)
    third, fourth, fifth = (e % (128 * n_col)) // (4 * n_col), (e % (4 * n_col)) // 4, e % 4
    return sw[first * 512 * n_col + fourth * 512 + third * 16 + second * 4 + fifth]


def _fbgemm_dir():
    d = os.environ.get("FBGEMM_DIR") or os.path.join(HERE, "..", "..", "build", "third-party-fbgemm")
    return os.path.join(d, "fbgemm_gpu")


def _load_fbgemm():
    """fp4_quantize.py, unchanged, without running fbgemm_gpu/__init__.py (it loads the CUDA library)."""
    root = _fbgemm_dir()
    path = os.path.join(root, "experimental", "gemm", "triton_gemm", "fp4_quantize.py")
    if not os.path.exists(path):
        return None
    pkg = types.ModuleType("fbgemm_gpu")
    pkg.__path__ = [root]
    sys.modules.setdefault("fbgemm_gpu", pkg)
    spec = importlib.util.spec_from_file_location("fbgemm_fp4_quantize", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_fbgemm(fb, xb, fill):
    """fbgemm's triton_scale_nvfp4_quant on bf16 xb with its callers' global scale; torch.empty filled with
    `fill`. Returns (codes [M, K/2] uint8, swizzled scales uint8, amax fp32)."""
    from triton_gpu_casts import gpu_casts
    gs = (448.0 * 6.0) / torch.amax(torch.abs(xb.flatten()), dim=-1).to(torch.float32)
    empty = torch.empty

    def filled_empty(*a, **k):
        t = empty(*a, **k)
        t.view(torch.uint8).fill_(fill)
        return t

    torch.empty = filled_empty
    try:
        with gpu_casts() as used:
            q, s = fb.triton_scale_nvfp4_quant(xb, gs)
    finally:
        torch.empty = empty
    assert used["e4m3"] > 0 and used["e2m1x2"] > 0 and used["bf16_to_f32"] > 0, used
    return q.contiguous(), s.contiguous(), torch.amax(torch.abs(xb.float())).reshape(1)


def _nv(args):
    r = subprocess.run([NVFP4] + [str(a) for a in args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def cases():
    import test_production_oracles as P
    out = []
    for name, x, _ in P.tensors() + P.more_tensors():
        if np.isnan(x).any():
            continue
        xb = torch.from_numpy(x.copy()).to(torch.bfloat16)
        out.append((name, xb))
    return out


class FbgemmVerified(unittest.TestCase):
    """Runs in a fresh process with the interpreter on (FBGEMM_CHILD=1)."""

    def child(self, test):
        if torch is None or NVFP4 is None:
            self.skipTest("numpy, torch, safetensors or $NVFP4 missing")
        if not os.path.exists(os.path.join(_fbgemm_dir(), "experimental", "gemm", "triton_gemm",
                                           "fp4_quantize.py")):
            self.skipTest("fbgemm-gpu-genai not found (pip install --no-deps --target DIR "
                          "fbgemm-gpu-genai==1.9.0; FBGEMM_DIR=DIR)")
        env = dict(os.environ, FBGEMM_CHILD="1", TRITON_INTERPRET="1")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "FbgemmVerified." + test], env=env,
                           capture_output=True, text=True, cwd=HERE)
        if "SKIP_FBGEMM" in r.stdout:
            self.skipTest("triton missing or fbgemm's fp4_quantize.py does not load")
        self.assertEqual(r.returncode, 0, r.stdout[-4000:] + r.stderr[-4000:])
        print(r.stdout.strip())

    def fb(self):
        try:
            return _load_fbgemm()
        except Exception as e:  # pragma: no cover
            print("SKIP_FBGEMM", e)
            return None

    def test_verify_and_identify(self):
        if not CHILD:
            return self.child("test_verify_and_identify")
        fb = self.fb()
        if fb is None:
            return
        said = []
        with tempfile.TemporaryDirectory() as tmp:
            xp, ap, gp = (os.path.join(tmp, f) for f in ("x.npy", "act.safetensors", "te.safetensors"))
            for name, xb in cases():
                with self.subTest(tensor=name):
                    q, sw, amax = run_fbgemm(fb, xb, 0x00)
                    np.save(xp, xb.float().numpy())
                    save_file({"data": q, "scale_swizzled": sw, "amax": amax}, ap)
                    said.append(self.check(name, xb.shape, xp, ap, gp))
        for s in said:
            print("fbgemm %-20s identify rc %d chain %s; proven %s; verify %s, causes %s" % s)

    def check(self, name, shape, xp, ap, gp):
        swizzle_wrong = (shape[1] // 16) % 4 != 0
        fbgemm_variant = "fbgemm rn 1x16" + (" [mutant %s]" % SWIZZLE_BUG if swizzle_wrong else "")
        rc, out, err = _nv(["identify", "--expected-input", xp, "--actual", ap, "--rowwise", "--json", "--top", 1000])
        self.assertIn(rc, (0, 1), err)
        identify_rc = rc
        d = json.loads(out)
        chain = d.get("chain") or {}
        exact = [r["variant"] for r in d["ranking"] if r["fraction"] == 1.0]
        self.assertEqual(rc != 0, name in NOT_EXPLAINED, "%s: identify exit %d, chain %s" %
                         (name, rc, chain.get("statement")))
        base = (chain.get("base") or "").split(" ")[0]
        proven = []
        if rc == 0:  # the recipe fbgemm (with the swizzle bug where it bites) is among the exact variants
            self.assertIn(fbgemm_variant, exact, "%s: %s" % (name, exact[:6]))
        named = SWIZZLE_BUG in chain.get("deviations", []) or any(SWIZZLE_BUG in v for v in exact)
        if rc == 0 and swizzle_wrong:  # the swizzle bug is named where fbgemm's swizzle differs from cuBLAS's
            self.assertTrue(named, "%s (K/16 = %d): %s" % (name, shape[1] // 16, exact[:4]))
        elif rc == 0:  # and only there (elsewhere the mutant gives the same bytes: no deviation needed)
            self.assertNotIn(SWIZZLE_BUG, chain.get("deviations", []), name)
        if chain.get("exact"):
            # every proven step of an exact chain is fbgemm's rule: on the base fbgemm its own rule (or the swizzle
            # bug), on another base a catalogued mutant named in FBGEMM_RULES or the base's own rule where that rule
            # is te's (rule_recipes lists the recipes sharing it; steps without one are the same for every base)
            layout = {SWIZZLE_BUG} if swizzle_wrong else {None, SWIZZLE_BUG}
            rules = {st: {None} for st in FBGEMM_RULES} if base == "fbgemm" else dict(FBGEMM_RULES)
            rules["layout"] = layout
            for st in chain["steps"]:
                if st["status"] != "proven":
                    continue
                te_rule = base == "fbgemm" or "te" in st.get("rule_recipes", "te").split(",")
                true = st["rule"] in rules[st["step"]] and (st["rule"] is not None or te_rule)
                self.assertTrue(true, "%s: chain %s states proven %s = %s (%s), false of fbgemm" %
                                (name, chain.get("base"), st["step"], st["rule"] or "the recipe's rule",
                                 st["evidence"]))
                proven.append(st["step"])
        te_causes, te_verdict = self.verify_against(name, "te", xp, ap, gp, swizzle_wrong)
        fb_causes, fb_verdict = self.verify_against(name, "fbgemm", xp, ap, gp, swizzle_wrong)
        if name not in NOT_EXPLAINED:  # against its own recipe: a match, or exactly the swizzle bug, proven
            self.assertEqual(fb_verdict == "match", not swizzle_wrong, "%s: %s %s" % (name, fb_verdict, fb_causes))
            if swizzle_wrong:
                self.assertTrue(any(c["status"] == "proven" and SWIZZLE_BUG in c["line"] for c in fb_causes), name)
        if swizzle_wrong and identify_rc == 0 and name not in PLACEMENT_UNREADABLE:
            # verify against te names the swizzle bug by the placement of the scale bytes
            self.assertTrue(any(c["cause"] == "scale-permuted" and SWIZZLE_BUG in c["line"] and c["step"] == "layout"
                                for c in te_causes), "%s: %s" % (name, [c["line"][:60] for c in te_causes]))
        return (name, identify_rc, chain.get("statement", "")[:70], ",".join(proven) or "-", te_verdict,
                [c["line"][:40] for c in te_causes])

    def verify_against(self, name, recipe, xp, ap, gp, swizzle_wrong):
        """verify against the recipe's golden; every cause it states as proven must be true of fbgemm: the
        placement of its scales (fp4_quantize.py's padded-stride swizzle index, which fbgemm really has), that
        the output is recipe fbgemm's, and that its block scales were not computed with the golden's S_enc (true
        where fbgemm's (448*6)/amax is not that value)."""
        rc, _, err = _nv(["quantize", xp, "-o", gp, "--recipe", recipe])
        self.assertEqual(rc, 0, err)
        rc, out, err = _nv(["verify", "--expected", gp, "--actual", ap, "--json"])
        self.assertIn(rc, (0, 1), err)
        v = json.loads(out)
        causes = [c for o in v["outputs"] for c in o["causes"]]
        gscale = [o["global_scale"] for o in v["outputs"] if "global_scale" in o]
        for c in causes:
            if c["status"] != "proven":
                continue
            if c["cause"] == "global-scale":
                self.assertNotEqual(gscale[0]["expected"], fbgemm_senc(xp), "%s: verify states as proven %r" %
                                    (name, c["line"][:100]))
            elif c["cause"] == "different-recipe":
                self.assertIn("matches recipe fbgemm ", c["line"], "%s: verify states as proven %r" % (name, c["line"]))
            else:
                self.assertTrue(c["cause"] in ("scale-permuted", "known-bug") and SWIZZLE_BUG in c["line"] and
                                swizzle_wrong, "%s: verify against %s states as proven %r" %
                                (name, recipe, c["line"][:100]))
        return causes, v["verdict"]

    def test_recipe_fbgemm_bytes(self):
        """The recipe `fbgemm` gives every code, every scale byte and the amax of the kernel on every tensor but
        amax +Inf (S_enc = 0: the interpreter's NaN handling, not a GPU's, decides those bytes; the module doc),
        the scales read back through the kernel's own index (its padded-stride 128x4 formula, lines 1463-1474)."""
        if not CHILD:
            return self.child("test_recipe_fbgemm_bytes")
        fb = self.fb()
        if fb is None:
            return
        from safetensors.numpy import load_file
        compared = tensors = 0
        with tempfile.TemporaryDirectory() as tmp:
            xp, op = os.path.join(tmp, "x.npy"), os.path.join(tmp, "fbgemm.safetensors")
            for name, xb in cases():
                if name in NOT_EXPLAINED:
                    continue
                with self.subTest(tensor=name):
                    q, sw, amax = run_fbgemm(fb, xb, 0x00)
                    np.save(xp, xb.float().numpy())
                    rc, _, err = _nv(["quantize", xp, "-o", op, "--recipe", "fbgemm", "--scale-layout", "linear"])
                    self.assertEqual(rc, 0, err)
                    ours = load_file(op)
                    m, k = xb.shape
                    got = fbgemm_linear_scales(sw.numpy().reshape(-1), m, k // 16)
                    self.assertEqual(ours["data"].tobytes(), q.numpy().tobytes(), name + ": codes")
                    self.assertEqual(ours["scale_swizzled"].reshape(-1).tobytes(), got.tobytes(), name + ": scales")
                    self.assertEqual(ours["amax"].tobytes(), amax.numpy().tobytes(), name + ": amax")
                    compared += q.numel() + got.size + 4
                    tensors += 1
        print("fbgemm recipe: %d bytes identical (codes, scales, amax) on %d tensors" % (compared, tensors))

    def test_padding_never_written(self):
        """k80-m48 (K/16 = 5): with torch.empty filled with 0xA5, every swizzled cell that fbgemm's padded-stride
        index never reaches still holds 0xA5 (the catalog's mutant writes 0 there, te's padding), and the cells it
        reaches hold the mutant's bytes: 48 rows x 5 scales written, 128 x 8 - 240 = 784 cells left."""
        if not CHILD:
            return self.child("test_padding_never_written")
        fb = self.fb()
        if fb is None:
            return
        xb = dict(cases())["k80-m48"]
        _, poisoned, _ = run_fbgemm(fb, xb, 0xA5)
        _, zeroed, _ = run_fbgemm(fb, xb, 0x00)
        untouched = poisoned != zeroed
        self.assertEqual(int(untouched.sum()), 128 * 8 - 48 * 5)
        self.assertTrue(bool((poisoned[untouched] == 0xA5).all()))
        self.assertTrue(bool((zeroed[untouched] == 0).all()))
        print("fbgemm k80-m48: %d of %d swizzled scale cells never written" % (int(untouched.sum()),
                                                                              poisoned.numel()))


if __name__ == "__main__":
    unittest.main()

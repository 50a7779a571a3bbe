"""test_real_verify.py - what `nvfp4 verify` and `nvfp4 identify` say about
the outputs of REAL production quantizers, run on this CPU: the claims the
verifier states as proven must be true of them.

The quantizers and the adversarial tensors are those of
test_production_oracles.py (compressed-tensors 0.20.1, vLLM 0.33.0's
ref_nvfp4_quant, FlashInfer 0.7.4's batch-invariant reference) and
test_triton_oracles.py (mslk-cuda 1.1.0's Triton kernel under the Triton
interpreter, with the GPU's casts). For every float32 tensor, the rowwise
output of the quantizer (codes, scales, amax) is saved as a kernel output
and checked:

- identify exits 0 and the quantizer's recipe is among the variants that
  reproduce every byte (for mslk: its recipe, or its recipe with the
  catalogued defect `encode-senc-over-s-no-clamp` on the inputs where mslk's
  unclamped encode factor shows);
- verify against te's golden: where the bytes differ from te, a
  `different-recipe` cause names the quantizer's recipe, as the match or
  among its alternatives (unless the quantizer's defect shows: recipe plus
  defect is no candidate of te's golden); every cause verify states as `proven` names the
  recipe (or, against mslk's own golden, the defect), never another
  candidate: a proven claim that is false fails the test; a `global-scale`
  cause stated as proven must bracket the quantizer's real S_enc (computed
  here by the quantizer's own code) and exclude te's;
- verify against the recipe's own golden: a match, except mslk where it
  differs, and there the defect is named.

Each class skips where its package is missing, as the oracle tests do."""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
NVFP4 = os.environ.get("NVFP4")

try:
    import numpy as np
    import torch
    from safetensors.torch import save_file
    import test_production_oracles as P
except ImportError:  # pragma: no cover - the module skips below
    P = None

MSLK_DEFECT = "encode-senc-over-s-no-clamp"


def _run(args):
    r = subprocess.run([NVFP4] + [str(a) for a in args], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


class _Checker:
    """Runs verify and identify on one kernel output and checks their claims."""

    def __init__(self, test, tmp):
        self.t, self.tmp = test, tmp
        self.said = []  # (tensor, what identify and verify said), for the summary
        self.gscale_proven = 0
        self.last_gscale = []

    def save(self, x, data, scale_key, scale, amax):
        xp, ap = os.path.join(self.tmp, "x.npy"), os.path.join(self.tmp, "act.safetensors")
        np.save(xp, x)
        save_file({"data": data.contiguous(), scale_key: scale.contiguous(), "amax": amax.reshape(1).float()}, ap)
        return xp, ap

    def golden(self, xp, recipe):
        out = os.path.join(self.tmp, "golden-%s.safetensors" % recipe)
        rc, _, err = _run(["quantize", xp, "-o", out, "--recipe", recipe])
        self.t.assertEqual(rc, 0, err)
        return out

    def identify(self, xp, ap):
        rc, out, err = _run(["identify", "--expected-input", xp, "--actual", ap, "--rowwise", "--json", "--top", 1000])
        self.t.assertIn(rc, (0, 1), err)
        d = json.loads(out)
        exact = [r["variant"] for r in d["ranking"] if r["fraction"] == 1.0]
        return rc, exact, d.get("chain") or {}

    def verify(self, golden, ap):
        rc, out, err = _run(["verify", "--expected", golden, "--actual", ap, "--json"])
        self.t.assertIn(rc, (0, 1), err)
        d = json.loads(out)
        self.last_gscale = [o.get("global_scale") for o in d["outputs"] if o["causes"]]
        return d["verdict"], [c for o in d["outputs"] for c in o["causes"]]

    def check_gscale(self, name, causes, senc):
        """A proven global-scale cause: the S_enc interval it reports holds the quantizer's real S_enc, and
        the golden recipe's own value is not that S_enc."""
        for c in causes:
            if c["cause"] != "global-scale" or c["status"] != "proven":
                continue
            self.gscale_proven += 1
            g = [g for g in self.last_gscale if g][0]
            self.t.assertIsNotNone(senc, "%s: a proven global-scale claim on a quantizer without a known S_enc" % name)
            self.t.assertTrue(g["lo"] <= senc <= g["hi"], "%s: S_enc %r outside the proven interval %r" % (name, senc, g))
            self.t.assertNotEqual(g["expected"], senc, "%s: proven global-scale, but the kernel's S_enc is te's" % name)

    def check(self, name, x, data, scale_key, scale, amax, recipe, defect=None, senc=None):
        """defect: the catalogued bug the quantizer may add to its recipe (mslk); senc: its S_enc."""
        xp, ap = self.save(x, data, scale_key, scale, amax)
        variant = "%s rn 1x16" % recipe
        allowed = {variant} | ({"%s [mutant %s]" % (variant, defect)} if defect else set())
        rc, exact, chain = self.identify(xp, ap)
        self.t.assertEqual(rc, 0, "%s: identify finds no exact variant" % name)
        self.t.assertTrue(allowed & set(exact), "%s: %s not among the %d exact variants %s" %
                          (name, sorted(allowed), len(exact), exact[:8]))
        own_verdict, own_causes = self.verify(self.golden(xp, recipe), ap)
        if own_verdict != "match":
            self.t.assertIsNotNone(defect, "%s: differs from its own recipe %s" % (name, recipe))
            bugs = [c for c in own_causes if c["cause"] == "known-bug"]
            self.t.assertTrue(any(c["line"].startswith(defect + ":") or defect in c["alternatives"] for c in bugs),
                              "%s: the defect %s is not named: %s" % (name, defect, [c["line"][:60] for c in bugs]))
            for c in own_causes:
                if c["status"] == "proven" and c["cause"] in ("known-bug", "different-recipe"):
                    self.t.assertTrue(c["line"].startswith(defect + ":"), "%s: false proven claim %s" %
                                      (name, c["line"][:80]))
        te_verdict, te_causes = self.verify(self.golden(xp, "te"), ap)
        self.check_gscale(name, te_causes, senc)
        if te_verdict != "match":
            rec = [c for c in te_causes if c["cause"] in ("different-recipe", "known-bug")]
            named = any(variant in c["line"] or variant in c["alternatives"] or "..." in c["alternatives"] or
                        (defect and (defect in c["line"] or defect in c["alternatives"])) for c in rec)
            # recipe + defect is no candidate of te's golden (te's candidates are the other recipes and te's own
            # deviations): there verify can only give its nearest guess, which must not be stated as proven
            if own_verdict == "match":
                self.t.assertTrue(named, "%s: verify against te does not name %s: %s" %
                                  (name, recipe, [c["line"][:70] for c in rec]))
            for c in te_causes:
                if c["status"] != "proven" or c["cause"] not in ("known-bug", "different-recipe"):
                    continue
                ok = ("matches recipe %s exactly" % variant) in c["line"] or (defect and c["line"].startswith(defect))
                m = re.search(r"matches recipe (\S+) rn 1x16 exactly", c["line"])
                if not ok and m:  # another recipe: true only if its golden's bytes are the kernel's on this input
                    ok = self.verify(self.golden(xp, m.group(1)), ap)[0] == "match"
                self.t.assertTrue(ok, "%s: verify states as proven %r, but the kernel is %s" %
                                  (name, c["line"][:90], recipe))
        proven = [c["line"][:60] for c in te_causes if c["status"] == "proven"]
        self.said.append((name, te_verdict, own_verdict, len(exact), chain.get("statement", "")[:80], proven))


@unittest.skipIf(P is None or NVFP4 is None, "numpy, torch, safetensors or $NVFP4 missing")
class RealQuantizersVerified(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.cases = [c for c in P.tensors() + P.more_tensors() if not c[2]]

    def each(self, recipe, run, senc_of):
        chk = _Checker(self, self.tmp.name)
        for name, x, _ in self.cases:
            with self.subTest(tensor=name):
                t = torch.from_numpy(x.copy())
                scale, data, _, amax, key = run(t)
                chk.check(name, x, data, key, scale, amax, recipe, senc=float(senc_of(t)))
        differing = [s for s in chk.said if s[1] != "match"]
        print("%s: %d tensors; %d differ from te, each identified and named as %s; proven claims: %d "
              "(global-scale: %d)" % (recipe, len(chk.said), len(differing), recipe, sum(len(s[5]) for s in chk.said),
                                     chk.gscale_proven))
        return chk

    @unittest.skipIf(P is None or P.CT is None, "compressed-tensors is not installed")
    def test_compressed_tensors(self):
        # S_enc as run_ct computes it: generate_gparam of the observer's min and max
        self.each("compressed-tensors", lambda t: P.CompressedTensorsNVFP4.run_ct(None, t),
                  lambda t: P.CT["gparam"](*(v.reshape(1) for v in torch.aminmax(t))).item())

    @unittest.skipIf(P is None or P.VLLM is None, "vllm is not installed")
    def test_vllm(self):
        self.each("vllm", lambda t: P.VllmRefNVFP4.run_vllm(type("holder", (), {})(), t),
                  lambda t: ((448.0 * 6.0) / torch.abs(t).max()).to(torch.float32).item())

    @unittest.skipIf(P is None or P.FI is None, "flashinfer-python is not installed")
    def test_flashinfer(self):
        self.each("flashinfer", lambda t: P.FlashInferNVFP4.run_fi(None, t), lambda t: float(P.FI["gscale"](t, False)))


class MslkVerified(unittest.TestCase):
    """mslk's Triton kernel needs the interpreter switched on before triton is
    imported: this runs the check in a fresh process (MSLK_CHILD=1)."""

    def test_mslk(self):
        if os.environ.get("MSLK_CHILD") != "1":
            if P is None or NVFP4 is None:
                self.skipTest("numpy, torch, safetensors or $NVFP4 missing")
            env = dict(os.environ, MSLK_CHILD="1", TRITON_INTERPRET="1", NVFP4_TRITON_CHILD="1")
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "MslkVerified.test_mslk"], env=env,
                               capture_output=True, text=True, cwd=HERE)
            if "SKIP_MSLK" in r.stdout + r.stderr:
                self.skipTest("mslk-cuda or triton not found (see tests/py/requirements-production.txt)")
            self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
            print(r.stdout.strip())
            return
        import test_triton_oracles as T
        if T.MSLK is None:
            print("SKIP_MSLK")
            return
        runner = T.MslkTritonNVFP4("test_interpreter_casts_replaced")
        with tempfile.TemporaryDirectory() as tmp:
            chk = _Checker(self, tmp)
            cases = [c for c in T.tensors() + T.more_tensors() if not c[2] and c[0] not in T.NAN_RAISING]
            for name, x, _ in cases:
                t = torch.from_numpy(x.copy())
                data, sw, amax = runner.run_mslk(t)
                senc = T.per_tensor_scale_of(t).reciprocal().item()  # what run_mslk passes the kernel
                chk.check(name, x, data, "scale_swizzled", sw, amax, "mslk", defect=MSLK_DEFECT, senc=senc)
        defect = [s[0] for s in chk.said if s[2] != "match"]
        self.assertTrue(defect, "no tensor shows mslk's unclamped encode factor")
        print("mslk: %d tensors; %d show its defect %s, named by verify against the mslk golden (%s); proven "
              "global-scale claims: %d" % (len(chk.said), len(defect), MSLK_DEFECT, ", ".join(defect),
                                           chk.gscale_proven))


if __name__ == "__main__":
    unittest.main()

"""test_global_inverted_oracle.py - FlashInfer's `is_global_scale_inversed` flag
(docs/semantics.md, "Scale layouts") against recipe `flashinfer` and the
catalogued mistake `global-passed-inverted`, with FlashInfer's own code on this
CPU: flashinfer-python 0.7.4 flashinfer/batch_invariant/quantization/
nvfp4_api.py fp4_quantize_batch_invariant (the entry point behind
fp4_quantize(..., batch_invariant=True), whose `gs = 1.0 / global_scale` is
the flag) with its CUDA class nvfp4_quantize_batch_invariant replaced by the
class's CPU specification nvfp4_reference.quantize_reference (the one
test_production_oracles.py holds recipe `flashinfer` to).

* the global scale of the convention the flag names (S_enc, flag False) gives
  the bytes of `nvfp4 quantize --recipe flashinfer`;
* S_enc handed with the flag True (the kernel inverts a scale that was not
  inverted) gives other bytes, and `nvfp4 verify` names them: cause known-bug
  `global-passed-inverted`, "global scale passed inverted", proven;
* the flag used as meant, handed `1.0 / S_enc` (a torch fp32 division), gives
  the bytes of `nvfp4 quantize --recipe flashinfer --global-scale-inverted`,
  on a tensor (amax 6, S_enc 448, handed back as 447.99997) whose block of
  amax 0.015904017 sits on the E4M3 tie 1.1875: scale byte 0x39 there, where
  the plain recipe writes 0x3A (tests/check_global_inverted.c).

Skipped unless numpy, safetensors, torch, flashinfer and $NVFP4 are there."""
import os
import shutil
import subprocess
import tempfile
import unittest

try:
    import numpy as np
    import torch
    from safetensors.numpy import load_file, save_file
    from flashinfer.batch_invariant.quantization import nvfp4_api, nvfp4_reference
    from flashinfer.quantization.nvfp4_quantization_utils import make_nvfp4_global_scale
except ImportError:  # pragma: no cover
    np = None

NVFP4 = os.environ.get("NVFP4")


@unittest.skipIf(np is None or not NVFP4, "needs numpy, safetensors, torch, flashinfer, $NVFP4")
class GlobalScaleInversedFlag(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        rng = np.random.default_rng(11)
        cls.x = (rng.standard_normal((32, 64)) * np.exp2(rng.integers(-4, 5, (32, 4))).repeat(16, 1)).astype("<f4")
        inp, cls.expected = os.path.join(cls.tmp, "x.npy"), os.path.join(cls.tmp, "exp.safetensors")
        np.save(inp, cls.x)
        subprocess.run([NVFP4, "quantize", inp, "-o", cls.expected, "--recipe", "flashinfer"], check=True,
                       capture_output=True)
        cls.b = load_file(cls.expected)
        cls.real_class = nvfp4_api.nvfp4_quantize_batch_invariant

    @classmethod
    def tearDownClass(cls):
        nvfp4_api.nvfp4_quantize_batch_invariant = cls.real_class
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def flashinfer(self, global_scale, inversed):
        """fp4_quantize_batch_invariant's (codes, 128x4 scales) on the CPU."""
        def cpu_class(x, gs, layout, enable_pdl=False):
            self.assertEqual(layout, "128x4")
            packed, sf, _ = nvfp4_reference.quantize_reference(x, gs)
            return packed, sf

        nvfp4_api.nvfp4_quantize_batch_invariant = cpu_class
        try:
            codes, sf = nvfp4_api.fp4_quantize_batch_invariant(torch.from_numpy(self.x), global_scale, 16, False, True,
                                                               False, inversed, False, None)
        finally:
            nvfp4_api.nvfp4_quantize_batch_invariant = self.real_class
        return codes.numpy(), sf.numpy()

    def test_the_flags_own_convention_is_recipe_flashinfer(self):
        codes, sf = self.flashinfer(make_nvfp4_global_scale(torch.from_numpy(self.x), False), False)
        np.testing.assert_array_equal(codes, self.b["data"])
        np.testing.assert_array_equal(sf.reshape(-1), self.b["scale_swizzled"].reshape(-1))

    def test_the_flag_used_as_meant_is_option_global_scale_inverted(self):
        x = np.zeros((16, 64), np.float32)
        x[0, 0], x[0, 16], x[5, 32] = 6.0, np.float32(0.015904017), np.float32(-0.015904017)
        x[9] = np.linspace(-3, 5, 64, dtype=np.float32)
        inp = os.path.join(self.tmp, "tie.npy")
        np.save(inp, x)
        ours = {}
        for flag in (False, True):
            out = os.path.join(self.tmp, "tie-%d.safetensors" % flag)
            subprocess.run([NVFP4, "quantize", inp, "-o", out, "--recipe", "flashinfer"] +
                           (["--global-scale-inverted"] if flag else []), check=True, capture_output=True)
            ours[flag] = load_file(out)
        xt = torch.from_numpy(x)
        saved, self.x = self.x, x
        try:
            codes, sf = self.flashinfer(1.0 / make_nvfp4_global_scale(xt, False), True)
        finally:
            self.x = saved
        np.testing.assert_array_equal(codes, ours[True]["data"])
        np.testing.assert_array_equal(sf.reshape(-1), ours[True]["scale_swizzled"].reshape(-1))
        self.assertEqual(int(ours[True]["scale"][0, 1]), 0x39)
        self.assertEqual(int(ours[False]["scale"][0, 1]), 0x3A)
        self.assertEqual(int((ours[True]["scale"] != ours[False]["scale"]).sum()), 2)

    def test_verify_names_the_other_convention(self):
        """A golden in one convention, FlashInfer's bytes in the other (the tie tensor): global-convention-swapped."""
        x = np.zeros((16, 64), np.float32)
        x[0, 0], x[0, 16] = 6.0, np.float32(0.015904017)
        inp = os.path.join(self.tmp, "conv.npy")
        np.save(inp, x)
        saved, self.x = self.x, x
        try:
            gs = make_nvfp4_global_scale(torch.from_numpy(x), False)
            fi = {False: self.flashinfer(gs, False), True: self.flashinfer(1.0 / gs, True)}
        finally:
            self.x = saved
        for golden_inverted in (False, True):
            exp = os.path.join(self.tmp, "conv-%d.safetensors" % golden_inverted)
            subprocess.run([NVFP4, "quantize", inp, "-o", exp, "--recipe", "flashinfer"] +
                           (["--global-scale-inverted"] if golden_inverted else []), check=True, capture_output=True)
            codes, sf = fi[not golden_inverted]
            out = os.path.join(self.tmp, "conv-kernel.safetensors")
            save_file({"data": codes.copy(), "scale_swizzled": sf.reshape(-1, 4).copy()}, out)
            r = subprocess.run([NVFP4, "verify", "--expected", exp, "--actual", out, "--json"], capture_output=True,
                               text=True)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            import json
            bugs = [c for o in json.loads(r.stdout)["outputs"] for c in o["causes"] if c["cause"] == "known-bug"]
            self.assertTrue(bugs and bugs[0]["line"].startswith("global-convention-swapped:"), r.stdout)

    def test_the_flag_used_as_meant_on_a_zero_tensor(self):
        # amax 0: S_enc = FLT_MAX, handed as fl(1/FLT_MAX) (subnormal), inverted back to +Inf: scale bytes 0x7F
        x = np.zeros((16, 64), np.float32)
        inp, out = os.path.join(self.tmp, "zero.npy"), os.path.join(self.tmp, "zero.safetensors")
        np.save(inp, x)
        subprocess.run([NVFP4, "quantize", inp, "-o", out, "--recipe", "flashinfer", "--global-scale-inverted"],
                       check=True, capture_output=True)
        ours = load_file(out)
        saved, self.x = self.x, x
        try:
            codes, sf = self.flashinfer(1.0 / make_nvfp4_global_scale(torch.from_numpy(x), False), True)
        finally:
            self.x = saved
        np.testing.assert_array_equal(codes, ours["data"])
        np.testing.assert_array_equal(sf.reshape(-1), ours["scale_swizzled"].reshape(-1))
        self.assertEqual(set(ours["scale"].reshape(-1).tolist()), {0x7F})

    def test_verify_names_the_global_scale_passed_inverted(self):
        codes, sf = self.flashinfer(make_nvfp4_global_scale(torch.from_numpy(self.x), False), True)
        self.assertGreater(int((codes != self.b["data"]).sum()), codes.size // 4)
        out = os.path.join(self.tmp, "kernel.safetensors")
        save_file({"data": codes.copy(), "scale_swizzled": sf.reshape(self.b["scale_swizzled"].shape).copy()}, out)
        r = subprocess.run([NVFP4, "verify", "--expected", self.expected, "--actual", out, "--json"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        import json
        causes = [c for o in json.loads(r.stdout)["outputs"] for c in o["causes"]]
        bug = [c for c in causes if c["cause"] == "known-bug"]
        self.assertTrue(bug, causes)
        self.assertIn("global-passed-inverted", bug[0]["line"])
        self.assertIn("global scale passed inverted", bug[0]["line"])
        self.assertEqual(bug[0]["status"], "proven")


if __name__ == "__main__":
    unittest.main()

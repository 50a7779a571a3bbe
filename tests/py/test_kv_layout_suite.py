"""test_kv_layout_suite.py - the catalogued KV-cache mistake `layout-kv-v-as-k`
(vLLM #50336: the V scales written linear like K's) against a whole golden
suite in the V layout (`nvfp4 golden --suite all --scale-layout kv-v`,
docs/semantics.md, "Scale layouts"; docs/verify.md, "Mutants").

For every case, a "kernel" output holding the golden's codes with its linear
scales in the V buffer (zero after them) is verified with `verify --suite`:
each case where that buffer differs from the golden's is reported differing and
names known-bug layout-kv-v-as-k, proven (the goldens kill it and verify names
it); the cases where the two placements coincide (one token or one block) match.
Controls: the golden's own bytes match on every case, and the same mistake
against the suite in the cuBLAS layout is never called layout-kv-v-as-k (a
KV-cache mistake only applies to goldens in the KV layout). The mutation
report (`golden --mutants --scale-layout kv-v`) counts the mistake in the
KV layout and the cuBLAS swizzle mistakes only in 128x4.

Skipped unless numpy, safetensors and $NVFP4 are there."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

try:
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import save_file
except ImportError:  # pragma: no cover
    np = None

NVFP4 = os.environ.get("NVFP4")
KEYS = (("data", "scale", "scale_swizzled"), ("data_t", "scale_t", "scale_t_swizzled"))


def kernel_outputs(suite, out, linear_in_slot):
    """One output per case: the golden's codes and either its scale_swizzled or its linear scales in that slot.
    Returns {case: whether the output's scale buffers equal the golden's}."""
    os.makedirs(out)
    same = {}
    for name in sorted(os.listdir(suite)):
        if not name.endswith(".safetensors"):
            continue
        tensors, equal = {}, True
        with safe_open(os.path.join(suite, name), "np") as f:
            keys = set(f.keys())
            for data, scale, swz in KEYS:
                if swz not in keys:
                    continue
                z = f.get_tensor(swz)
                if linear_in_slot:
                    lin = f.get_tensor(scale).reshape(-1)
                    buf = np.zeros(z.size, np.uint8)
                    buf[:lin.size] = lin
                    equal = equal and np.array_equal(buf, z.reshape(-1))
                    z = buf.reshape(z.shape)
                tensors[data], tensors[swz] = f.get_tensor(data), z
        save_file(tensors, os.path.join(out, name))
        same[name[:-len(".safetensors")]] = equal
    return same


@unittest.skipIf(np is None or not NVFP4, "needs numpy, safetensors, $NVFP4")
class KvLayoutMutantOverASuite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def suite(self, layout):
        d = os.path.join(self.tmp, "suite-" + layout)
        if not os.path.isdir(d):
            subprocess.run([NVFP4, "golden", "--suite", "all", "--recipe", "te", "--out", d, "--scale-layout", layout],
                           check=True, capture_output=True)
        return d

    def verify(self, suite, outs):
        r = subprocess.run([NVFP4, "verify", "--suite", suite, "--actual-dir", outs, "--json"], capture_output=True,
                           text=True)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        return json.loads(r.stdout)

    def test_every_differing_case_names_layout_kv_v_as_k(self):
        suite = self.suite("kv-v")
        same = kernel_outputs(suite, os.path.join(self.tmp, "v-as-k"), True)
        rep = self.verify(suite, os.path.join(self.tmp, "v-as-k"))
        killed = [c for c in rep["cases"] if c["status"] == "mismatch"]
        self.assertEqual(sorted(c["case"] for c in killed), sorted(k for k, eq in same.items() if not eq))
        self.assertGreaterEqual(len(killed), 30)  # 38 cases; only one-token or one-block cases coincide
        for c in killed:
            bugs = [x for o in c["outputs"] for x in o["causes"] if x["cause"] == "known-bug"]
            self.assertTrue(bugs and bugs[0]["line"].startswith("layout-kv-v-as-k:"), c["case"])
            self.assertEqual(bugs[0]["status"], "proven", c["case"])
        self.assertEqual(rep["matched"], sum(same.values()))

    def test_the_goldens_own_bytes_match(self):
        suite = self.suite("kv-v")
        kernel_outputs(suite, os.path.join(self.tmp, "right"), False)
        rep = self.verify(suite, os.path.join(self.tmp, "right"))
        self.assertEqual(rep["differing"], 0)
        self.assertEqual(rep["matched"], len(rep["cases"]))

    def mutation_report(self, layout):
        r = subprocess.run([NVFP4, "golden", "--mutants", "--recipe", "te", "--scale-layout", layout, "--json"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_mutation_report_counts_each_layout_mistake_in_its_layout(self):
        """kv-v: layout-kv-v-as-k killed by a case, named and proven; no cuBLAS
        swizzle mutant counted; every mutant killed and named, no cause
        blamed on the layout but the mistake's own. 128x4: the reverse."""
        kv = self.mutation_report("kv-v")
        by = {m["mutant"]: m for m in kv["mutants"]}
        self.assertTrue(by["layout-kv-v-as-k"]["killed_by"] and by["layout-kv-v-as-k"]["proven"])
        self.assertEqual([n for n in by if n.startswith("layout-swizzle")], [])
        self.assertEqual((kv["killed"], kv["named"]), (kv["relevant"], kv["relevant"]))
        self.assertEqual([n for n, m in by.items() if "scale-layout" in m["causes"]], [])
        cub = {m["mutant"] for m in self.mutation_report("128x4")["mutants"]}
        self.assertNotIn("layout-kv-v-as-k", cub)
        self.assertIn("layout-swizzle-padded-stride", cub)
        self.assertEqual(kv["relevant"], len(cub) - len([n for n in cub if n.startswith("layout-swizzle")]) + 1)

    def test_not_a_kv_mistake_against_the_cublas_layout(self):
        suite = self.suite("128x4")
        kernel_outputs(suite, os.path.join(self.tmp, "lin-128"), True)
        rep = self.verify(suite, os.path.join(self.tmp, "lin-128"))
        self.assertGreater(rep["differing"], 30)
        self.assertNotIn("layout-kv-v-as-k", json.dumps(rep))


if __name__ == "__main__":
    unittest.main()

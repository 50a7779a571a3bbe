"""test_ckpt_numpy.py - `nvfp4 ckpt inspect` and `nvfp4 ckpt check` on tiny
modelopt and compressed-tensors checkpoints computed with numpy alone, by the
conventions' rules (docs/checkpoints.md section 2), so that the C reader is
tested where torch, nvidia-modelopt and compressed-tensors are absent
(tests/py/test_ckpt.py writes checkpoints with those packages and skips
without them).

The rules, as the writers apply them:
  modelopt 0.47 (modelopt/torch/quantization/qtensor/nvfp4_tensor.py):
    weight_scale_2 = amax/2688 (F32, shape []); block scale = block amax/6 /
    weight_scale_2, clamped to [2^-9, 448] and cast to E4M3; codes =
    E2M1(x / (scale * weight_scale_2)), element 2i in the low nibble.
  compressed-tensors 0.20 (quantization/utils/helpers.py generate_gparam,
  compressors/nvfp4): weight_global_scale = 2688/amax (F32, shape [1], as
    torch divides a number by a tensor: fp32(fp32(1/amax) * 2688)); block
    scale = block amax/6 * global scale cast to E4M3; codes = E2M1(x / (scale
    / global scale)).
E4M3 and E2M1 casts round to nearest, ties to even. Safetensors files are
written here byte by byte (an 8-byte little-endian header length, the JSON
header, the data), as the format's specification says; no package beyond
numpy is needed. Fused groups (q/k/v, gate/up) share one amax, as both
writers make them. Where torch, nvidia-modelopt and compressed-tensors are
installed, WriterBytesTest checks that these rules give the writers' bytes
(codes, block scales and global scale of every layer)."""
import json
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

HERE = os.path.dirname(os.path.abspath(__file__))
NVFP4 = os.environ.get("NVFP4", os.path.join(HERE, "..", "..", "build", "bin", "nvfp4"))

HIDDEN, KV, INTER = 64, 32, 128
SHAPES = {"self_attn.q_proj": (HIDDEN, HIDDEN), "self_attn.k_proj": (KV, HIDDEN), "self_attn.v_proj": (KV, HIDDEN),
          "self_attn.o_proj": (HIDDEN, HIDDEN), "mlp.gate_proj": (INTER, HIDDEN), "mlp.up_proj": (INTER, HIDDEN),
          "mlp.down_proj": (HIDDEN, INTER)}
FUSED = [("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"), ("mlp.gate_proj", "mlp.up_proj")]
LAYER = "model.layers.0."
E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def e4m3_table():
    """The 127 non-negative finite E4M3 values, indexed by code 0x00..0x7E (increasing)."""
    codes = np.arange(0x7F)
    e, m = codes >> 3, codes & 7
    return np.where(e == 0, m * 2.0 ** -9, (1 + m / 8.0) * 2.0 ** (e - 7.0))


def round_to_table(x, table):
    """Index of the nearest table value to each x >= 0 (table increasing), ties to the even index;
    values beyond the last entry take the last."""
    x = np.asarray(x, dtype=np.float64)
    hi = np.clip(np.searchsorted(table, x), 1, len(table) - 1)
    lo = hi - 1
    dlo, dhi = x - table[lo], table[hi] - x
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (hi % 2 == 0))
    return np.where(pick_hi, hi, lo)


def e4m3_bytes(s):
    """E4M3 bytes of positive float32 scales (round to nearest even, clamped at 448)."""
    return round_to_table(np.minimum(s, 448.0), e4m3_table()).astype(np.uint8)


def e2m1_codes(x):
    """4-bit E2M1 codes (sign in bit 3) of x, round to nearest even, saturating at 6; a negative value that
    rounds to zero keeps its sign (0x8), as both writers' casts do."""
    mag = round_to_table(np.minimum(np.abs(x), 6.0), np.array(E2M1_VALUES)).astype(np.uint8)
    return np.where(np.signbit(x), mag | 8, mag).astype(np.uint8)


def pack(codes):
    """Two codes per byte, element 2i in the low nibble (both writers)."""
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)


def quantize(w, amax, convention):
    """(packed codes, E4M3 scale bytes, stored global scale) of a float32 weight [n, k] whose group amax is amax."""
    n, k = w.shape
    blocks = w.reshape(n, k // 16, 16)
    bmax = np.abs(blocks).max(-1)
    if convention == "modelopt":
        g = np.float32(amax) / np.float32(2688.0)
        sb = e4m3_bytes(np.clip(bmax / np.float32(6.0) / g, 2.0 ** -9, 448.0).astype(np.float32))
        d = e4m3_table()[sb].astype(np.float32) * g
    else:
        g = (np.float32(1.0) / np.float32(amax)) * np.float32(2688.0)  # torch's 2688 / t: reciprocal, then times
        sb = e4m3_bytes((bmax / np.float32(6.0) * g).astype(np.float32))
        d = e4m3_table()[sb].astype(np.float32) / g
    d = np.where(d == 0, np.float32(1.0), d)  # an all-zero block: codes 0 whatever the divisor
    codes = e2m1_codes(blocks / d[..., None]).reshape(n, k)
    return pack(codes), sb, np.float32(g)


def make_weights(seed=7):
    rng = np.random.default_rng(seed)
    return {LAYER + m: (rng.standard_normal(s) * 0.05).astype(np.float32) for m, s in SHAPES.items()}


def group_amax(weights, name):
    mod = name[len(LAYER):]
    for grp in FUSED:
        if mod in grp:
            return max(float(np.abs(weights[LAYER + m]).max()) for m in grp)
    return float(np.abs(weights[name]).max())


# convention -> (codes, global scale, input scale) tensor suffixes
NAMES = {"modelopt": ("weight", "weight_scale_2", "input_scale"),
         "compressed-tensors": ("weight_packed", "weight_global_scale", "input_global_scale")}


def ckpt_tensors(weights, convention, w4a4=True):
    """name -> (safetensors dtype, shape, bytes) of a checkpoint's quantized linears (and a bf16 lm_head)."""
    wname, gname, iname = NAMES[convention]
    gshape = [] if convention == "modelopt" else [1]
    t = {"lm_head.weight": ("BF16", [48, HIDDEN], np.zeros(48 * HIDDEN, np.uint16).tobytes())}
    for name, w in weights.items():
        q, s, g = quantize(w, group_amax(weights, name), convention)
        t[f"{name}.{wname}"] = ("U8", list(q.shape), q.tobytes())
        t[f"{name}.weight_scale"] = ("F8_E4M3", list(s.shape), s.tobytes())
        t[f"{name}.{gname}"] = ("F32", gshape, np.float32(g).tobytes())
        if w4a4:  # activation amax 3: modelopt stores 3/2688, compressed-tensors 2688/3
            v = 3.0 / 2688.0 if convention == "modelopt" else 2688.0 / 3.0
            t[f"{name}.{iname}"] = ("F32", gshape, np.float32(v).tobytes())
    return t


def plant(weights, conv, defect):
    """The tensors of a checkpoint with one defect, and the (category, tensor) check must report."""
    gname = NAMES[conv][1]
    t = ckpt_tensors(weights, conv)
    if defect == "reciprocal":
        n = f"{LAYER}self_attn.o_proj.{gname}"
        dt, shape, raw = t[n]
        t[n] = (dt, shape, (np.float32(1.0) / np.frombuffer(raw, np.float32)).tobytes())
        want = ("global-scale-reciprocal", n)
    elif defect == "missing":
        n = f"{LAYER}mlp.down_proj.{gname}"
        del t[n]
        want = ("global-scale-missing", n)
    elif defect == "nan-scale":  # E4M3 NaN bytes 0x7F and 0xFF
        n = f"{LAYER}self_attn.k_proj.weight_scale"
        s = bytearray(t[n][2])
        s[5], s[17] = 0x7F, 0xFF
        t[n] = (t[n][0], t[n][1], bytes(s))
        want = ("scale-nonfinite", n)
    elif defect == "scale-shape":  # [128, 4] cut to [128, 2]
        n = f"{LAYER}mlp.up_proj.weight_scale"
        s = np.frombuffer(t[n][2], np.uint8).reshape(t[n][1])[:, :2]
        t[n] = ("F8_E4M3", list(s.shape), s.tobytes())
        want = ("scale-shape", n)
    else:
        raise AssertionError(defect)
    return t, want


def write_safetensors(path, tensors):
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name in sorted(tensors):
        dtype, shape, raw = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def ct_scheme(w4a4):
    weights = {"num_bits": 4, "type": "float", "symmetric": True, "group_size": 16, "strategy": "tensor_group",
               "dynamic": False, "scale_dtype": "torch.float8_e4m3fn"}
    acts = dict(weights, dynamic="local", observer="static_minmax") if w4a4 else None
    return {"targets": ["Linear"], "weights": weights, "input_activations": acts, "output_activations": None}


def write_ckpt(folder, tensors, convention, w4a4=True):
    """A checkpoint folder with the configuration files each writer leaves (hf_quant_config.json of modelopt's
    quant_utils.py; compressed-tensors' QuantizationConfig in config.json)."""
    os.makedirs(folder)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
    if convention == "modelopt":
        with open(os.path.join(folder, "hf_quant_config.json"), "w") as f:
            json.dump({"producer": {"name": "modelopt", "version": "0.47.0"},
                       "quantization": {"quant_algo": "NVFP4" if w4a4 else "W4A16_NVFP4", "group_size": 16,
                                        "kv_cache_quant_algo": None, "exclude_modules": ["lm_head"]}}, f)
    else:
        cfg["quantization_config"] = {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized",
                                      "quantization_status": "compressed", "ignore": ["lm_head"],
                                      "config_groups": {"group_0": ct_scheme(w4a4)}}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors)


def ckpt(*args):
    p = subprocess.run([NVFP4, "ckpt", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def findings(folder, *extra):
    rc, out, err = ckpt("check", folder, "--json", *extra)
    rep = json.loads(out) if out.strip() else None
    return rc, rep, err


@unittest.skipUnless(np is not None, "numpy missing")
@unittest.skipUnless(os.path.exists(NVFP4), "nvfp4 binary not built")
class CkptNumpyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="nvfp4-ckpt-np-")
        cls.weights = make_weights()
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def write(self, convention, tensors=None, w4a4=True):
        CkptNumpyTest.n += 1
        d = os.path.join(self.tmp, "ck%d" % CkptNumpyTest.n)
        write_ckpt(d, tensors if tensors is not None else ckpt_tensors(self.weights, convention, w4a4),
                   convention, w4a4)
        return d

    def test_e4m3_and_e2m1_rounding(self):
        """The casts the checkpoints are built with: ties to even, saturation, subnormals."""
        self.assertEqual(list(e4m3_bytes(np.array([448.0, 1e9, 1.0, 1.0625, 1.1875, 2.0 ** -9, 2.0 ** -10]))),
                         [0x7E, 0x7E, 0x38, 0x38, 0x3A, 0x01, 0x00])
        self.assertEqual(list(e2m1_codes(np.array([0.25, 0.75, 2.5, 5.0, 7.0, -1.0, -0.1]))),
                         [0, 2, 4, 6, 7, 0xA, 0x8])

    def test_clean_checkpoints_are_silent(self):
        for conv in NAMES:
            for w4a4 in (True, False):
                with self.subTest(conv=conv, w4a4=w4a4):
                    d = self.write(conv, w4a4=w4a4)
                    rc, rep, err = findings(d, "--strict")
                    self.assertEqual(rc, 0, err)
                    self.assertEqual(rep["convention"], conv)
                    self.assertEqual(rep["findings"], [])
                    self.assertEqual(len(rep["layers"]), len(SHAPES))
                    rc, out, err = ckpt("check", d)
                    self.assertEqual((rc, err), (0, ""))
                    self.assertIn("7 layers in 1 file: 0 errors, 0 hazards", out)

    def test_inspect_gives_the_numbers_written(self):
        """Implied amax = the group amax (relative 1e-6: the fp32 rounding of amax/2688 and back); the code
        histogram equals numpy's count of the nibbles written; the largest block scale is 448 on the member that
        owns its group's amax; |w|max is max |fp4(code)| * scale * D as numpy computes it."""
        table = e4m3_table()
        for conv in NAMES:
            with self.subTest(conv=conv):
                t = ckpt_tensors(self.weights, conv)
                rc, out, err = ckpt("inspect", self.write(conv, t), "--json")
                self.assertEqual(rc, 0, err)
                by = {l["name"]: l for l in json.loads(out)["layers"]}
                for name, w in self.weights.items():
                    l, amax = by[name], group_amax(self.weights, name)
                    q = np.frombuffer(t[f"{name}.{NAMES[conv][0]}"][2], np.uint8)
                    s = np.frombuffer(t[f"{name}.weight_scale"][2], np.uint8)
                    self.assertEqual(l["shape"], list(w.shape))
                    self.assertLess(abs(l["amax_implied"] / amax - 1), 1e-6, name)
                    hist = np.bincount(np.concatenate([q & 15, q >> 4]), minlength=16)
                    self.assertEqual(l["code_hist"], hist.tolist(), name)
                    self.assertEqual(l["scale_count"], w.size // 16)
                    self.assertEqual(l["scale_max"], float(table[s.max()]), name)
                    if float(np.abs(w).max()) == amax:
                        self.assertEqual(l["scale_max"], 448.0, name)
                    codes = np.stack([q & 15, q >> 4], -1).reshape(w.shape[0], -1, 16)
                    mag = np.array(E2M1_VALUES)[codes & 7].max(-1) * table[s].reshape(w.shape[0], -1)
                    g = float(np.frombuffer(t[f"{name}.{NAMES[conv][1]}"][2], np.float32)[0])
                    want = mag.max() * (g if conv == "modelopt" else 1.0 / g)
                    self.assertLess(abs(l["amax_decoded"] / want - 1), 1e-9, name)

    def planted(self, conv, defect):
        """A checkpoint folder with one defect, and the (category, tensor) check must report."""
        t, want = plant(self.weights, conv, defect)
        return self.write(conv, t), want

    def test_each_planted_defect_is_named_with_exit_1(self):
        for conv in NAMES:
            for defect in ("reciprocal", "missing", "nan-scale", "scale-shape"):
                with self.subTest(conv=conv, defect=defect):
                    d, want = self.planted(conv, defect)
                    rc, rep, err = findings(d)
                    self.assertEqual(rc, 1, err)
                    self.assertEqual([(f["category"], f["tensor"]) for f in rep["findings"]], [want])
                    f = rep["findings"][0]
                    self.assertEqual(f["severity"], "error")
                    self.assertIn(want[1], f["message"])
                    rc, out, _ = ckpt("check", d)
                    self.assertEqual(rc, 1)
                    self.assertIn("error %s %s: " % want, out)

    def test_reciprocal_message_gives_the_true_amax(self):
        d, _ = self.planted("compressed-tensors", "reciprocal")
        amax = float(np.abs(self.weights[f"{LAYER}self_attn.o_proj"]).max())
        _, rep, _ = findings(d)
        self.assertIn("implies amax %g" % amax, rep["findings"][0]["message"])

    def test_unreadable_checkpoints_exit_2(self):
        good = self.write("modelopt")
        cut = good + "-cut"
        shutil.copytree(good, cut)
        path = os.path.join(cut, "model.safetensors")
        with open(path, "r+b") as f:  # data area shorter than the header says
            f.truncate(os.path.getsize(path) - 1)
        for d, name in ((cut, "model.safetensors"), (os.path.join(self.tmp, "absent"), "absent")):
            for action in ("inspect", "check"):
                with self.subTest(d=d, action=action):
                    rc, out, err = ckpt(action, d)
                    self.assertEqual(rc, 2, out + err)
                    self.assertIn(name, err)


def writers():
    """modelopt's and compressed-tensors' quantizers, or None when a package is missing."""
    try:
        import warnings
        warnings.filterwarnings("ignore")
        import torch
        from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor
        from compressed_tensors.compressors.nvfp4.base import NVFP4PackedCompressor
        from compressed_tensors.quantization import QuantizationScheme
        from compressed_tensors.quantization.quant_scheme import NVFP4 as CT_NVFP4
        from compressed_tensors.quantization.utils import calculate_qparams, generate_gparam
    except Exception:
        return None

    def modelopt(w, amax):
        g2 = NVFP4QTensor.get_weights_scaling_factor_2(torch.tensor(amax, dtype=torch.float32).reshape(1, 1))
        q, s, g = NVFP4QTensor.quantize(torch.from_numpy(w), 16, weights_scaling_factor_2=g2)
        return q._quantized_data.numpy(), s.view(torch.uint8).numpy(), np.float32(g.reshape(()).item())

    def ct(w, amax):
        scheme = QuantizationScheme(targets=["Linear"], **CT_NVFP4)
        a = torch.tensor([amax], dtype=torch.float32)
        gs = generate_gparam(-a, a)
        t = torch.from_numpy(w)
        blocks = t.reshape(w.shape[0], -1, 16)
        scale, _ = calculate_qparams(blocks.amin(-1), blocks.amax(-1), scheme.weights, global_scale=gs)
        sd = NVFP4PackedCompressor.compress({"weight": t, "weight_scale": scale, "weight_global_scale": gs}, scheme)
        return (sd["weight_packed"].numpy(), sd["weight_scale"].view(torch.uint8).numpy(),
                np.float32(sd["weight_global_scale"].item()))

    return {"modelopt": modelopt, "compressed-tensors": ct}


@unittest.skipUnless(np is not None, "numpy missing")
class WriterBytesTest(unittest.TestCase):
    def test_numpy_rules_give_the_writers_bytes(self):
        w = writers()
        if w is None:
            self.skipTest("torch, nvidia-modelopt or compressed-tensors missing")
        weights = make_weights()
        for conv in NAMES:
            for name, x in weights.items():
                with self.subTest(conv=conv, name=name):
                    amax = group_amax(weights, name)
                    q, s, g = quantize(x, amax, conv)
                    wq, ws, wg = w[conv](x, amax)
                    self.assertEqual(q.tobytes(), wq.tobytes())
                    self.assertEqual(s.tobytes(), ws.tobytes())
                    self.assertEqual(g.tobytes(), wg.tobytes())


if __name__ == "__main__":
    unittest.main()

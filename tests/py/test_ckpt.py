"""test_ckpt.py - `nvfp4 ckpt inspect` and `nvfp4 ckpt check` on tiny
checkpoints written here, in temporary folders, with the writers' own
functions on the CPU:
  modelopt 0.47 (nvidia-modelopt): NVFP4QTensor.get_weights_scaling_factor_2
    (amax/2688) and NVFP4QTensor.quantize (E4M3 block scales, codes packed
    element 2i low), the tensor names of torch/export/unified_export_hf.py
    and the hf_quant_config.json of quant_utils.py process_layer_quant_config;
  compressed-tensors 0.20.1: generate_gparam (2688/amax), calculate_qparams,
    NVFP4PackedCompressor.compress and the QuantizationConfig of the NVFP4 /
    NVFP4A16 presets.
Fused groups (q/k/v, gate/up) share one amax, as both writers make them.
Checkpoints written by the tools themselves: modelopt 0.47's
export_hf_checkpoint and llm-compressor 0.14's oneshot (in a child process,
tests/py/llmc_oneshot.py, from the folder requirements-llmcompressor.txt
installs into; skipped without it).
Each clean checkpoint must give no finding and exit 0; each copy with one
planted defect must give exactly the planted findings (category and tensor)
and exit 1 (an error) or 0 (a hazard; 1 with --strict); unreadable input
exits 2 with a message naming the file. Skips cleanly where torch, modelopt,
compressed-tensors or safetensors is missing."""
import json
import math
import os
import shutil
import struct
import subprocess
import tempfile
import unittest
import warnings

try:
    import torch
    from safetensors.torch import save_file

    warnings.filterwarnings("ignore")
    from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor
    from compressed_tensors.compressors.nvfp4.base import NVFP4PackedCompressor
    from compressed_tensors.quantization import QuantizationConfig, QuantizationScheme
    from compressed_tensors.quantization.quant_scheme import NVFP4 as CT_NVFP4, NVFP4A16 as CT_NVFP4A16
    from compressed_tensors.quantization.utils import calculate_qparams, generate_gparam

    HAVE_WRITERS = True
except Exception:  # pragma: no cover - any missing writer skips the suite
    HAVE_WRITERS = False

HERE = os.path.dirname(os.path.abspath(__file__))
NVFP4 = os.environ.get("NVFP4", os.path.join(HERE, "..", "..", "build", "bin", "nvfp4"))

HIDDEN, KV, INTER, LAYERS = 64, 32, 128, 2
# module -> (rows, cols) of its weight
SHAPES = {"self_attn.q_proj": (HIDDEN, HIDDEN), "self_attn.k_proj": (KV, HIDDEN), "self_attn.v_proj": (KV, HIDDEN),
          "self_attn.o_proj": (HIDDEN, HIDDEN), "mlp.gate_proj": (INTER, HIDDEN), "mlp.up_proj": (INTER, HIDDEN),
          "mlp.down_proj": (HIDDEN, INTER)}
FUSED = [("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"), ("mlp.gate_proj", "mlp.up_proj")]


def linears():
    return [f"model.layers.{i}.{m}" for i in range(LAYERS) for m in SHAPES]


def make_weights(seed=0, unfused=()):
    """Random bf16-representable float32 weights of a 2-layer decoder, with
    the module names of Hugging Face's Llama."""
    g = torch.Generator().manual_seed(seed)
    w = {}
    for name in linears():
        r, c = SHAPES[name.split(".", 3)[3]]
        w[name] = (torch.randn(r, c, generator=g) * 0.05).bfloat16().float()
    for name in unfused:  # make the member's amax differ clearly from its group's
        w[name] = w[name] * 0.5
    return w


def group_amax(weights, name, unfused=()):
    """The amax a fused group shares (both writers unify to the max); a name
    in `unfused` keeps its own amax."""
    if name in unfused:
        return weights[name].abs().max()
    prefix, mod = name.rsplit(".", 2)[0], ".".join(name.rsplit(".", 2)[1:])
    for grp in FUSED:
        if mod in grp:
            return torch.stack([weights[f"{prefix}.{m}"].abs().max() for m in grp]).max()
    return weights[name].abs().max()


def dense_tensors():
    g = torch.Generator().manual_seed(99)
    t = {"model.embed_tokens.weight": torch.randn(48, HIDDEN, generator=g).bfloat16(),
         "lm_head.weight": torch.randn(48, HIDDEN, generator=g).bfloat16(),
         "model.norm.weight": torch.ones(HIDDEN).bfloat16()}
    for i in range(LAYERS):
        t[f"model.layers.{i}.input_layernorm.weight"] = torch.ones(HIDDEN).bfloat16()
        t[f"model.layers.{i}.post_attention_layernorm.weight"] = torch.ones(HIDDEN).bfloat16()
    return t


def modelopt_tensors(weights, w4a4=True, unfused=()):
    """What modelopt 0.47's unified HF export writes for NVFP4 (W4A16_NVFP4 without input_scale)."""
    t = dense_tensors()
    for name, w in weights.items():
        g2 = NVFP4QTensor.get_weights_scaling_factor_2(group_amax(weights, name, unfused).reshape(1, 1))
        q, s, g2 = NVFP4QTensor.quantize(w, 16, weights_scaling_factor_2=g2)
        t[f"{name}.weight"] = q._quantized_data.contiguous()
        t[f"{name}.weight_scale"] = s.contiguous()
        t[f"{name}.weight_scale_2"] = g2.reshape(()).float()
        if w4a4:
            t[f"{name}.input_scale"] = torch.tensor(3.0 / 2688.0, dtype=torch.float32)
    return t


def modelopt_config(w4a4=True, exclude=("lm_head",)):
    return {"producer": {"name": "modelopt", "version": "0.47.0"},
            "quantization": {"quant_algo": "NVFP4" if w4a4 else "W4A16_NVFP4", "kv_cache_quant_algo": None,
                             "group_size": 16, "exclude_modules": list(exclude)}}


def ct_tensors(weights, w4a4=True, unfused=()):
    """What compressed-tensors 0.20.1's NVFP4 compressor writes (llm-compressor's flow:
    generate_gparam, calculate_qparams per 16-element block, compress)."""
    scheme = QuantizationScheme(targets=["Linear"], **(CT_NVFP4 if w4a4 else CT_NVFP4A16))
    t = dense_tensors()
    for name, w in weights.items():
        amax = group_amax(weights, name, unfused).reshape(1)
        gs = generate_gparam(-amax, amax)
        r, c = w.shape
        blocks = w.reshape(r, c // 16, 16)
        scale, _ = calculate_qparams(blocks.amin(-1), blocks.amax(-1), scheme.weights, global_scale=gs)
        sd = NVFP4PackedCompressor.compress({"weight": w, "weight_scale": scale, "weight_global_scale": gs}, scheme)
        for k, v in sd.items():
            t[f"{name}.{k}"] = v.contiguous()
        if w4a4:
            t[f"{name}.input_global_scale"] = torch.tensor([2688.0 / 3.0], dtype=torch.float32)
    return t


def ct_config(w4a4=True, ignore=("lm_head",)):
    scheme = QuantizationScheme(targets=["Linear"], **(CT_NVFP4 if w4a4 else CT_NVFP4A16))
    q = QuantizationConfig(config_groups={"group_0": scheme}, format="nvfp4-pack-quantized", ignore=list(ignore),
                           quantization_status="compressed").model_dump(mode="json")
    q["quant_method"] = "compressed-tensors"
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "quantization_config": q}


def write_ckpt(folder, tensors, convention, qconfig, shards=1):
    os.makedirs(folder)
    if convention == "modelopt":
        with open(os.path.join(folder, "hf_quant_config.json"), "w") as f:
            json.dump(qconfig, f)
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}, f)
    else:
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(qconfig, f)
    names = sorted(tensors)
    if shards == 1:
        save_file(tensors, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
        return
    wm = {}
    for s in range(shards):
        fn = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: tensors[n] for n in names[s::shards]}
        save_file(part, os.path.join(folder, fn), metadata={"format": "pt"})
        wm.update({n: fn for n in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": wm}, f)


# GGUF as llama.cpp's converter writes it: its own ModelBase._repack_nvfp4 (the
# 36-byte block packing _nvfp4_pack, the .scale / .input_scale tensors that
# _write_scale_tensor omits when about 1, _tag_prec_a4) and its gguf-py writer,
# from a llama.cpp source tree (LLAMA_CPP_SRC: e.g. the vendor/llama.cpp folder
# of the llama-cpp-python 0.3.36 sdist); the HF -> GGUF names of its Llama
# tensor map. Running convert_hf_to_gguf.py itself needs a tokenizer it knows.
LLMC_DIR = os.environ.get("LLMCOMPRESSOR_DIR", os.path.join(HERE, "..", "..", "build", "third-party-llmc"))
LLAMA_CPP_SRC = os.environ.get("LLAMA_CPP_SRC", "") or next(iter(sorted(__import__("glob").glob(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "third-party-llama", "*", "vendor", "llama.cpp")))), "")
GGUF_NAMES = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
              "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
              "mlp.down_proj": "ffn_down"}


def llama_cpp_converter():
    """(ModelBase, gguf) from LLAMA_CPP_SRC, or None."""
    if not LLAMA_CPP_SRC or not HAVE_WRITERS:
        return None
    import sys
    for p in (LLAMA_CPP_SRC, os.path.join(LLAMA_CPP_SRC, "gguf-py")):
        if p not in sys.path:
            sys.path.insert(0, p)
    # the converter needs the gguf-py of its own tree: a gguf imported before from site-packages (another
    # test module of the same run) is dropped from sys.modules, so that this import finds the tree's
    src = os.path.realpath(LLAMA_CPP_SRC)
    for k in [k for k in sys.modules if k == "gguf" or k.startswith("gguf.")]:
        if not os.path.realpath(getattr(sys.modules[k], "__file__", None) or "").startswith(src):
            del sys.modules[k]
    try:
        import gguf
        from conversion.base import ModelBase
        return ModelBase, gguf
    except Exception:  # pragma: no cover
        return None


def gguf_name(hf):
    i, mod = hf.split(".")[2], ".".join(hf.split(".")[3:])
    return f"blk.{i}.{GGUF_NAMES[mod]}.weight"


def write_gguf(path, tensors, w4a4=True, edit=None):
    """A GGUF of the modelopt tensors through the converter's own _repack_nvfp4;
    edit(name, weight, scale, scale2, input_scale) may change what it is given."""
    ModelBase, gguf = llama_cpp_converter()

    class Writer:  # the converter's methods on the state they use
        _repack_nvfp4 = ModelBase._repack_nvfp4
        _nvfp4_pack = staticmethod(ModelBase._nvfp4_pack)
        _write_scale_tensor = ModelBase._write_scale_tensor
        _scale_is_trivial = staticmethod(ModelBase._scale_is_trivial)
        _tag_prec_a4 = ModelBase._tag_prec_a4

        def map_tensor_name(self, name):
            return gguf_name(name.removesuffix(".weight"))

    wr = Writer()
    wr.gguf_writer = gguf.GGUFWriter(path, "llama")
    wr._nvfp4_global_algo = "NVFP4" if w4a4 else "W4A16_NVFP4"
    wr._nvfp4_layer_algo, wr._prec_a4 = {}, {}
    wr.gguf_writer.add_file_type(int(gguf.LlamaFileType.MOSTLY_NVFP4))
    for name in linears():
        args = [tensors[f"{name}.weight"], tensors[f"{name}.weight_scale"], tensors[f"{name}.weight_scale_2"],
                tensors.get(f"{name}.input_scale", torch.tensor(1.0))]
        if edit:
            args = edit(name, *args)
        wr._repack_nvfp4(f"{name}.weight", *args)
    wr.gguf_writer.add_tensor("token_embd.weight", tensors["model.embed_tokens.weight"].float().numpy())
    if wr._prec_a4:
        names = sorted(wr._prec_a4)
        wr.gguf_writer.add_tensor_extra_prec_a4(names, [wr._prec_a4[n] for n in names])
    wr.gguf_writer.write_header_to_file()
    wr.gguf_writer.write_kv_data_to_file()
    wr.gguf_writer.write_tensors_to_file()
    wr.gguf_writer.close()
    return path


def modelopt_export(folder, arch, cfg_name):
    """A tiny random model quantized by modelopt 0.47 (mtq.quantize with the
    named config, two random calibration batches) and written by its own
    export_hf_checkpoint; its float weights, saved before quantization, in
    folder + "-orig". None without transformers."""
    try:
        from transformers import LlamaConfig, LlamaForCausalLM, MixtralConfig, MixtralForCausalLM
        import modelopt.torch.quantization as mtq
        from modelopt.torch.export import export_hf_checkpoint
    except Exception:  # pragma: no cover
        return None
    torch.manual_seed(0)
    if arch == "llama":
        cfg = LlamaConfig(vocab_size=64, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
        cfg.architectures = ["LlamaForCausalLM"]  # export needs it
        m = LlamaForCausalLM(cfg).eval()
    else:
        cfg = MixtralConfig(vocab_size=64, hidden_size=64, intermediate_size=64, num_hidden_layers=1,
                            num_attention_heads=4, num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2,
                            max_position_embeddings=64)
        cfg.architectures = ["MixtralForCausalLM"]
        m = MixtralForCausalLM(cfg).eval()
    os.makedirs(folder + "-orig")
    save_file({k: v.contiguous() for k, v in m.state_dict().items() if k.endswith(".weight") and v.ndim >= 2},
              os.path.join(folder + "-orig", "w.safetensors"))
    g = torch.Generator().manual_seed(1)
    mtq.quantize(m, getattr(mtq, cfg_name),
                 lambda model: [model(torch.randint(0, 64, (4, 16), generator=g)) for _ in range(2)])
    export_hf_checkpoint(m, export_dir=folder)
    return folder


def read_json(path):
    with open(path) as f:
        return json.load(f)


def run(*args, env=None):
    p = subprocess.run([NVFP4, "ckpt", *args], capture_output=True, text=True,
                       env=dict(os.environ, **env) if env else None)
    return p.returncode, p.stdout, p.stderr


def check_json(folder, *extra):
    rc, out, err = run("check", folder, "--json", *extra)
    return rc, json.loads(out) if out.strip() else None, err


L0 = "model.layers.0."
L1 = "model.layers.1."

# convention -> names of the global scale, input scale and weight codes
NAMES = {"modelopt": ("weight_scale_2", "input_scale", "weight"),
         "compressed-tensors": ("weight_global_scale", "input_global_scale", "weight_packed")}


def plant(conv, t, cfg, defect):
    """Plants one defect into the tensors t and configuration cfg; returns
    the set of (category, tensor) the check must report."""
    gname, iname, wname = NAMES[conv]
    if defect == "global-scale-reciprocal":
        n = f"{L0}self_attn.o_proj.{gname}"
        t[n] = 1.0 / t[n]
        return {(defect, n)}
    if defect == "global-scale-missing":
        n = f"{L1}mlp.down_proj.{gname}"
        del t[n]
        return {(defect, n)}
    if defect == "global-scale-nonfinite":
        n = f"{L0}mlp.down_proj.{gname}"
        t[n] = torch.full_like(t[n], float("nan"))
        return {(defect, n)}
    if defect == "global-scale-garbage":
        n = f"{L1}self_attn.o_proj.{gname}"
        t[n] = torch.zeros_like(t[n])
        return {(defect, n)}
    if defect == "scale-shape":
        n = f"{L1}mlp.up_proj.weight_scale"
        t[n] = t[n][:, : t[n].shape[1] // 2].contiguous()
        return {(defect, n)}
    if defect == "scale-layout":  # padded to cuBLAS's 128x4 tiles: [32, 4] -> [128, 4]
        n = f"{L0}self_attn.k_proj.weight_scale"
        pad = torch.zeros(128, 4, dtype=torch.uint8)
        pad[:32] = t[n].view(torch.uint8)
        t[n] = pad.view(torch.float8_e4m3fn)
        return {(defect, n)}
    if defect == "scale-nonfinite":
        n = f"{L1}self_attn.q_proj.weight_scale"
        b = t[n].view(torch.uint8).clone()
        b[3, 1] = 0x7F
        t[n] = b.view(torch.float8_e4m3fn)
        return {(defect, n)}
    if defect == "dtype-mismatch":  # listed quantized, stored bf16 ...
        m = f"{L1}self_attn.v_proj"
        for k in [k for k in t if k.startswith(m + ".")]:
            del t[k]
        t[f"{m}.weight"] = torch.zeros(KV, HIDDEN, dtype=torch.bfloat16)
        return {(defect, f"{m}.weight")}
    if defect == "dtype-mismatch-excluded":  # ... and stored quantized, listed as excluded
        m = f"{L1}mlp.down_proj"
        key = "exclude_modules" if conv == "modelopt" else "ignore"
        (cfg["quantization"] if conv == "modelopt" else cfg["quantization_config"])[key].append(m)
        return {("dtype-mismatch", f"{m}.{wname}")}
    if defect == "input-scale-missing":
        n = f"{L0}mlp.up_proj.{iname}"
        del t[n]
        return {(defect, n)}
    raise AssertionError(defect)


E2M1 = torch.tensor([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6]) if HAVE_WRITERS else None

ERROR_DEFECTS = ["global-scale-reciprocal", "global-scale-missing", "global-scale-nonfinite", "global-scale-garbage",
                 "scale-shape", "scale-layout", "scale-nonfinite", "dtype-mismatch", "dtype-mismatch-excluded",
                 "input-scale-missing"]


@unittest.skipUnless(HAVE_WRITERS, "torch, safetensors, nvidia-modelopt or compressed-tensors missing")
@unittest.skipUnless(os.path.exists(NVFP4), "nvfp4 binary not built")
class CkptTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="nvfp4-ckpt-")
        cls.weights = make_weights()
        cls.tensors = {("modelopt", True): modelopt_tensors(cls.weights, True),
                       ("modelopt", False): modelopt_tensors(cls.weights, False),
                       ("compressed-tensors", True): ct_tensors(cls.weights, True),
                       ("compressed-tensors", False): ct_tensors(cls.weights, False)}
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def folder(self):
        CkptTest.n += 1
        return os.path.join(self.tmp, f"ck{CkptTest.n}")

    def config(self, conv, w4a4=True):
        return modelopt_config(w4a4) if conv == "modelopt" else ct_config(w4a4)

    def write(self, conv, w4a4=True, tensors=None, cfg=None, shards=1):
        d = self.folder()
        write_ckpt(d, dict(tensors if tensors is not None else self.tensors[(conv, w4a4)]), conv,
                   cfg if cfg is not None else self.config(conv, w4a4), shards)
        return d

    def test_clean_checkpoints_give_no_finding(self):
        for conv in NAMES:
            for w4a4 in (True, False):
                for shards in (1, 3):
                    with self.subTest(conv=conv, w4a4=w4a4, shards=shards):
                        d = self.write(conv, w4a4, shards=shards)
                        rc, rep, err = check_json(d)
                        self.assertEqual(rc, 0, err)
                        self.assertEqual(rep["convention"], conv)
                        self.assertEqual(rep["findings"], [])
                        self.assertEqual(len(rep["layers"]), len(linears()))
                        rc, out, err = run("check", d, "--strict")
                        self.assertEqual(rc, 0, out + err)
                        self.assertIn("0 errors, 0 hazards", out)

    def test_inspect_reports_the_writers_numbers(self):
        """The implied amax is the group amax the writer used, to fp32 rounding;
        the largest block scale of the member holding it is 448; the decoded
        |w| max is 6 * 448 * D there; codes count every element."""
        for conv in NAMES:
            with self.subTest(conv=conv):
                d = self.write(conv)
                rc, out, err = run("inspect", d, "--json")
                self.assertEqual(rc, 0, err)
                rep = json.loads(out)
                self.assertEqual(rep["scheme"], "NVFP4" if conv == "modelopt" else "nvfp4-pack-quantized")
                by = {l["name"]: l for l in rep["layers"]}
                for name, w in self.weights.items():
                    l = by[name]
                    amax = float(group_amax(self.weights, name))
                    self.assertLess(abs(l["amax_implied"] / amax - 1), 1e-6, name)
                    self.assertEqual(l["shape"], list(w.shape))
                    self.assertEqual(sum(l["code_hist"]), w.numel())
                    self.assertEqual(l["scale_count"], w.numel() // 16)
                    self.assertEqual(l["scale_nan"], 0)
                    self.assertEqual(l["activations"], "nvfp4 (W4A4)")
                    self.assertIsNotNone(l["input_scale"])
                    if float(w.abs().max()) == amax:  # the member that owns the group amax
                        self.assertEqual(l["scale_max"], 448.0, name)
                        self.assertLess(abs(l["amax_decoded"] / amax - 1), 1e-6, name)
                    else:
                        self.assertLess(l["scale_max"], 448.0, name)
                rc, text, err = run("inspect", d)
                self.assertEqual(rc, 0, err)
                self.assertIn(f"convention: {conv}", text)
                self.assertIn(f"{L0}self_attn.q_proj ", text)

    def test_each_planted_defect_is_named(self):
        for conv in NAMES:
            for defect in ERROR_DEFECTS:
                with self.subTest(conv=conv, defect=defect):
                    t = dict(self.tensors[(conv, True)])
                    cfg = self.config(conv)
                    want = plant(conv, t, cfg, defect)
                    d = self.write(conv, tensors=t, cfg=cfg)
                    rc, rep, err = check_json(d)
                    self.assertEqual(rc, 1, err)
                    got = {(f["category"], f["tensor"]) for f in rep["findings"]}
                    self.assertEqual(got, want)
                    for f in rep["findings"]:
                        self.assertEqual(f["severity"], "error")
                        self.assertIn(f["tensor"], f["message"])
                        self.assertIn("Fix:", f["message"])

    def test_reciprocal_message_gives_both_readings(self):
        t = dict(self.tensors[("modelopt", True)])
        plant("modelopt", t, None, "global-scale-reciprocal")
        rc, rep, _ = check_json(self.write("modelopt", tensors=t))
        amax = float(self.weights[f"{L0}self_attn.o_proj"].abs().max())
        msg = rep["findings"][0]["message"]
        self.assertIn(f"implies amax {amax:g}", msg)

    def test_unfused_group_is_a_hazard(self):
        """q/k/v and gate/up of layer 0 quantized each with its own amax: k, v
        (amax halved) and up differ from the group's max; with --strict the
        hazard is an error."""
        unfused = (f"{L0}self_attn.k_proj", f"{L0}self_attn.v_proj", f"{L0}mlp.up_proj")
        w = make_weights(unfused=unfused)
        for conv in NAMES:
            with self.subTest(conv=conv):
                gname = NAMES[conv][0]
                t = modelopt_tensors(w, True, unfused) if conv == "modelopt" else ct_tensors(w, True, unfused)
                d = self.write(conv, tensors=t)
                rc, rep, err = check_json(d)
                self.assertEqual(rc, 0, err)
                got = {(f["category"], f["tensor"], f["severity"]) for f in rep["findings"]}
                self.assertEqual(got, {("fused-global-scale-mismatch", f"{m}.{gname}", "hazard") for m in unfused})
                rc, _, _ = check_json(d, "--strict")
                self.assertEqual(rc, 1)
                rc, out, _ = run("check", d)
                self.assertIn("hazard fused-global-scale-mismatch", out)

    def test_unreadable_inputs_exit_2_naming_the_file(self):
        good = self.write("modelopt")
        cases = []
        d = self.folder()
        cases.append((d, d))  # does not exist
        d = self.folder()
        shutil.copytree(good, d)
        with open(os.path.join(d, "model.safetensors"), "r+b") as f:  # header length past the end
            f.write(struct.pack("<Q", 1 << 40))
        cases.append((d, "model.safetensors"))
        d = self.folder()
        shutil.copytree(good, d)
        with open(os.path.join(d, "hf_quant_config.json"), "w") as f:
            f.write("{not json")
        cases.append((d, "hf_quant_config.json"))
        d = self.write("compressed-tensors", shards=2)
        os.remove(os.path.join(d, "model-00002-of-00002.safetensors"))
        cases.append((d, "model-00002-of-00002.safetensors"))
        d = self.folder()
        shutil.copytree(good, d)
        os.remove(os.path.join(d, "model.safetensors"))
        cases.append((d, "no *.safetensors"))
        for path, name in cases:
            for action in ("inspect", "check"):
                with self.subTest(path=path, action=action):
                    rc, out, err = run(action, path)
                    self.assertEqual(rc, 2, out + err)
                    self.assertIn(name, err)

    def test_ignore_regex_as_python_reads_it(self):
        """compressed-tensors' ignore entries "re:..." match as Python's re.match
        (utils/match.py match_name), \\d and (?:) included: down_proj stored in
        bf16 and ignored is clean; stored in NVFP4 and ignored is a dtype-mismatch."""
        pattern = r"re:.*layers\.\d+\.mlp\.(?:down)_proj$"
        t = dict(self.tensors[("compressed-tensors", True)])
        cfg = ct_config(ignore=("lm_head", pattern))
        rc, rep, err = check_json(self.write("compressed-tensors", tensors=t, cfg=cfg))
        self.assertEqual(rc, 1, err)
        self.assertEqual({(f["category"], f["tensor"]) for f in rep["findings"]},
                         {("dtype-mismatch", f"model.layers.{i}.mlp.down_proj.weight_packed") for i in range(LAYERS)})
        for i in range(LAYERS):
            m = f"model.layers.{i}.mlp.down_proj"
            for k in [k for k in t if k.startswith(m + ".")]:
                del t[k]
            t[f"{m}.weight"] = self.weights[m].bfloat16()
        rc, rep, err = check_json(self.write("compressed-tensors", tensors=t, cfg=cfg))
        self.assertEqual((rc, rep["findings"]), (0, []), err)
        # not ignored, and layer 0's down_proj is NVFP4: layer 1's bf16 one must be too
        del t[f"{L0}mlp.down_proj.weight"]
        t.update({k: v for k, v in self.tensors[("compressed-tensors", True)].items()
                  if k.startswith(f"{L0}mlp.down_proj.")})
        rc, rep, err = check_json(self.write("compressed-tensors", tensors=t))
        self.assertEqual(rc, 1, err)
        self.assertEqual({(f["category"], f["tensor"]) for f in rep["findings"]},
                         {("dtype-mismatch", f"{L1}mlp.down_proj.weight")})

    # ---- --original ---------------------------------------------------
    def original(self, weights=None, folder=False):
        """The unquantized weights, P.weight in bf16 (exact: make_weights gives
        bf16-representable values), as one file or a folder of two shards."""
        w = weights if weights is not None else self.weights
        t = {f"{k}.weight": v.bfloat16() for k, v in w.items()}
        d = self.folder()
        os.makedirs(d)
        if not folder:
            save_file(t, os.path.join(d, "orig.safetensors"))
            return os.path.join(d, "orig.safetensors")
        names = sorted(t)
        for s in range(2):
            save_file({n: t[n] for n in names[s::2]}, os.path.join(d, f"part{s}.safetensors"))
        return d

    def test_original_names_the_writer_of_each_layer(self):
        """Clean checkpoints against their original: no finding; every layer's
        bytes are its writer's rule, with the fused group's amax exactly where
        the layer's own amax is below its group's; the error equals the
        reference error (relative 1e-6: decoded in double against fp32) where the own amax was used; swapped nibbles decode
        at least 8x worse (measured: 1.40-1.44 against 0.094-0.098)."""
        writer = {"modelopt": "modelopt 0.47", "compressed-tensors": "compressed-tensors 0.20.1"}
        for conv in NAMES:
            for as_folder in (False, True):
                with self.subTest(conv=conv, folder=as_folder):
                    d = self.write(conv)
                    rc, rep, err = check_json(d, "--original", self.original(folder=as_folder))
                    self.assertEqual((rc, rep["findings"]), (0, []), err)
                    for l in rep["layers"]:
                        o, name = l["original"], l["name"]
                        own = float(self.weights[name].abs().max()) == float(group_amax(self.weights, name))
                        self.assertEqual(o["written_by"], writer[conv], name)
                        self.assertEqual(o["written_amax"], "own" if own else "fused group", name)
                        if own:  # the same bytes; decoded in double here, by the recipe's fp32 rule there
                            self.assertLess(abs(o["rel_rms_error"] / o["reference_rel_rms_error"] - 1), 1e-6, name)
                        self.assertLess(o["rel_rms_error"], 0.11, name)
                        self.assertGreater(o["swapped_nibbles_rel_rms_error"], 8 * o["rel_rms_error"], name)
                        self.assertGreater(o["max_abs_error"], 0)

    def planted_with_original(self, conv, defect):
        gname, iname, wname = NAMES[conv]
        t = dict(self.tensors[(conv, True)])
        if defect == "nibble-order":
            n = f"{L1}self_attn.o_proj.{wname}"
            b = t[n]
            t[n] = ((b << 4) | (b >> 4)).contiguous()
            return t, {(defect, n)}
        if defect == "decode-error":  # o_proj's codes in q_proj's place (same shape)
            n = f"{L0}self_attn.q_proj.{wname}"
            t[n] = t[f"{L0}self_attn.o_proj.{wname}"].clone()
            return t, {(defect, n)}
        if defect == "scale-layout":  # gate_proj [128, 64]: 128x4 tiles need no padding
            n = f"{L0}mlp.gate_proj.weight_scale"
            lin = t[n].view(torch.uint8)
            swz = torch.empty_like(lin).reshape(-1)
            rows, kb = lin.shape  # cuBLAS 128x4 tile: offset (r%32)*16 + (r//32)*4 + c%4 within a tile
            for r in range(rows):
                for c in range(kb):
                    swz[(r // 128) * 128 * kb + (c // 4) * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + c % 4] = lin[r, c]
            t[n] = swz.reshape(rows, kb).view(torch.float8_e4m3fn)
            return t, {(defect, n)}
        raise AssertionError(defect)

    def test_original_names_planted_decode_defects(self):
        """Swapped nibbles, another layer's codes and swizzled scales of the
        linear shape: each named with its category and tensor (exit 1) with
        --original; without it the first and last are invisible (the block
        statistics do not change) and the second too (codes of a plausible
        layer)."""
        orig = self.original()
        for conv in NAMES:
            for defect in ("nibble-order", "decode-error", "scale-layout"):
                with self.subTest(conv=conv, defect=defect):
                    t, want = self.planted_with_original(conv, defect)
                    d = self.write(conv, tensors=t)
                    rc, rep, err = check_json(d, "--original", orig)
                    self.assertEqual(rc, 1, err)
                    self.assertEqual({(f["category"], f["tensor"]) for f in rep["findings"]}, want)
                    for f in rep["findings"]:
                        self.assertIn("Fix:", f["message"])
                    rc, rep, err = check_json(d)
                    self.assertEqual((rc, rep["findings"]), (0, []), err)

    def test_original_leaves_other_findings_alone(self):
        """A reciprocal global scale decodes far off, but its finding already
        says why: --original adds no decode-error for that layer."""
        t = dict(self.tensors[("modelopt", True)])
        want = plant("modelopt", t, None, "global-scale-reciprocal")
        rc, rep, err = check_json(self.write("modelopt", tensors=t), "--original", self.original())
        self.assertEqual((rc, {(f["category"], f["tensor"]) for f in rep["findings"]}), (1, want), err)

    def test_original_unreadable_or_wrong_shape_exits_2(self):
        d = self.write("modelopt")
        rc, out, err = run("check", d, "--original", os.path.join(self.tmp, "nowhere.safetensors"))
        self.assertEqual(rc, 2)
        self.assertIn("nowhere.safetensors", err)
        w = dict(self.weights)
        w[f"{L0}mlp.down_proj"] = w[f"{L0}mlp.down_proj"][:, :64]
        o = self.original(w)
        rc, out, err = run("check", d, "--original", o)
        self.assertEqual(rc, 2, out)
        self.assertIn(f"{L0}mlp.down_proj.weight", err)
        self.assertIn(o, err)
        self.assertEqual(run("inspect", d, "--original", o)[0], 2)

    def test_activation_precision(self):
        """A W4A16 layer that stores an input scale: both intents at once."""
        for conv in NAMES:
            with self.subTest(conv=conv):
                iname = NAMES[conv][1]
                t = dict(self.tensors[(conv, False)])
                n = f"{L1}mlp.gate_proj.{iname}"
                t[n] = self.tensors[(conv, True)][n]
                rc, rep, err = check_json(self.write(conv, False, tensors=t))
                self.assertEqual(rc, 1, err)
                self.assertEqual({(f["category"], f["tensor"]) for f in rep["findings"]},
                                 {("activation-precision", n)})

    # ---- convert --------------------------------------------------------
    def convert(self, src, to):
        out = self.folder()
        p = subprocess.run([NVFP4, "ckpt", "convert", src, "--to", to, "-o", out], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr, out

    @staticmethod
    def load(folder):
        from safetensors.torch import load_file
        t = {}
        for f in sorted(os.listdir(folder)):
            if f.endswith(".safetensors"):
                t.update(load_file(os.path.join(folder, f)))
        return t

    def test_convert_round_trip_keeps_codes_and_scales(self):
        """modelopt -> compressed-tensors -> modelopt, W4A4 and W4A16, 1 and 3
        shards: codes and block scales byte for byte at each step; the global
        and input scales are torch's fp32 1/x (what compressed-tensors'
        ModelOptNvfp4Converter computes); every other tensor unchanged; the
        output checks clean and safetensors loads it; the printed largest
        decoded change equals torch's over the layer's elements."""
        for w4a4 in (True, False):
            for shards in (1, 3):
                with self.subTest(w4a4=w4a4, shards=shards):
                    src = self.write("modelopt", w4a4, shards=shards)
                    rc, out, ct = self.convert(src, "compressed-tensors")
                    self.assertEqual(rc, 0, out)
                    self.assertIn("check of", out)
                    self.assertIn("0 errors, 0 hazards", out)
                    a, b = self.tensors[("modelopt", w4a4)], self.load(ct)
                    self.assertEqual(len(a), len(b))
                    worst = 0.0
                    for name in linears():
                        self.assertTrue(torch.equal(a[f"{name}.weight"], b[f"{name}.weight_packed"]), name)
                        self.assertTrue(torch.equal(a[f"{name}.weight_scale"].view(torch.uint8),
                                                    b[f"{name}.weight_scale"].view(torch.uint8)), name)
                        g = a[f"{name}.weight_scale_2"]
                        self.assertEqual(b[f"{name}.weight_global_scale"].shape, (1,))
                        self.assertEqual(b[f"{name}.weight_global_scale"].view(torch.int32).item(),
                                         (1 / g).view(torch.int32).item(), name)
                        if w4a4:
                            self.assertEqual(b[f"{name}.input_global_scale"].item(), (1 / a[f"{name}.input_scale"]).item())
                        else:
                            self.assertNotIn(f"{name}.input_global_scale", b)
                        p = a[f"{name}.weight"].long()
                        codes = torch.stack([p & 15, p >> 4], -1).reshape(p.shape[0], -1)  # element 2i low
                        fp4 = E2M1[codes]
                        s16 = a[f"{name}.weight_scale"].float().repeat_interleave(16, -1)
                        d_mo = fp4 * (s16 * g)
                        d_ct = fp4 * (s16 / (1 / g))
                        worst = max(worst, float((d_mo - d_ct).abs().max()))
                    for k in ("model.embed_tokens.weight", "lm_head.weight", "model.norm.weight"):
                        self.assertTrue(torch.equal(a[k], b[k]))
                    self.assertIn(f"{worst:.6g} (", out)
                    cfg = read_json(os.path.join(ct, "config.json"))["quantization_config"]
                    QuantizationConfig.model_validate(cfg)
                    self.assertEqual(cfg["config_groups"]["group_0"]["input_activations"] is None, not w4a4)
                    self.assertFalse(os.path.exists(os.path.join(ct, "hf_quant_config.json")))
                    self.assertEqual(os.path.exists(os.path.join(ct, "model.safetensors.index.json")), shards > 1)
                    rc, out, back = self.convert(ct, "modelopt")
                    self.assertEqual(rc, 0, out)
                    c = self.load(back)
                    self.assertEqual(sorted(a), sorted(c))
                    for name in linears():
                        for k in ("weight", "weight_scale"):
                            self.assertTrue(torch.equal(a[f"{name}.{k}"].view(torch.uint8),
                                                        c[f"{name}.{k}"].view(torch.uint8)), name)
                        self.assertEqual(c[f"{name}.weight_scale_2"].shape, ())
                    hq = read_json(os.path.join(back, "hf_quant_config.json"))["quantization"]
                    self.assertEqual(hq["quant_algo"], "NVFP4" if w4a4 else "W4A16_NVFP4")
                    self.assertIn("lm_head", hq["exclude_modules"])

    def test_convert_compressed_tensors_to_modelopt_checks_clean(self):
        for w4a4 in (True, False):
            with self.subTest(w4a4=w4a4):
                rc, out, mo = self.convert(self.write("compressed-tensors", w4a4), "modelopt")
                self.assertEqual(rc, 0, out)
                rc, rep, err = check_json(mo, "--original", self.original())
                self.assertEqual((rc, rep["findings"]), (0, []), err)
                # the bytes are still compressed-tensors' rule; the global scale now
                # modelopt's reading, so the writer's rule no longer matches exactly
                self.assertLess(max(l["original"]["rel_rms_error"] / l["original"]["reference_rel_rms_error"]
                                    for l in rep["layers"]), 1.02)

    def test_convert_mixed_precision(self):
        """modelopt MIXED_PRECISION (attention W4A4, MLP W4A16_NVFP4 in
        quantized_layers) -> compressed-tensors (one config group per
        precision naming its layers) -> modelopt (MIXED_PRECISION again):
        every step checks clean, each layer keeps its precision."""
        t = dict(self.tensors[("modelopt", True)])
        layers = {}
        for name in linears():
            a16 = ".mlp." in name
            layers[name] = {"quant_algo": "W4A16_NVFP4" if a16 else "NVFP4", "group_size": 16}
            if a16:
                del t[f"{name}.input_scale"]
        cfg = {"producer": {"name": "modelopt", "version": "0.47.0"},
               "quantization": {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": None,
                                "quantized_layers": layers, "exclude_modules": ["lm_head"]}}
        src = self.write("modelopt", tensors=t, cfg=cfg)
        rc, out, ct = self.convert(src, "compressed-tensors")
        self.assertEqual(rc, 0, out)
        groups = read_json(os.path.join(ct, "config.json"))["quantization_config"]["config_groups"]
        self.assertEqual(sorted(len(g["targets"]) for g in groups.values()), [6, 8])
        rc, out, back = self.convert(ct, "modelopt")
        self.assertEqual(rc, 0, out)
        hq = read_json(os.path.join(back, "hf_quant_config.json"))["quantization"]
        self.assertEqual(hq["quant_algo"], "MIXED_PRECISION")
        self.assertEqual({k: v["quant_algo"] for k, v in hq["quantized_layers"].items()},
                         {k: v["quant_algo"] for k, v in layers.items()})
        for d in (src, ct, back):
            rc, rep, err = check_json(d, "--strict")
            self.assertEqual((rc, rep["findings"]), (0, []), err)
            self.assertEqual({l["name"]: l["activations"] for l in rep["layers"]},
                             {n: "bf16 (W4A16)" if ".mlp." in n else "nvfp4 (W4A4)" for n in linears()})

    def test_convert_refuses_errors_and_existing_output(self):
        t = dict(self.tensors[("modelopt", True)])
        plant("modelopt", t, None, "global-scale-reciprocal")
        rc, out, dest = self.convert(self.write("modelopt", tensors=t), "compressed-tensors")
        self.assertEqual(rc, 1, out)
        self.assertIn("global-scale-reciprocal", out)
        self.assertFalse(os.path.exists(dest))
        src = self.write("modelopt")
        p = subprocess.run([NVFP4, "ckpt", "convert", src, "--to", "compressed-tensors", "-o", src],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("exists", p.stderr)
        self.assertEqual(run("convert", src, "--to", "gguf", "-o", self.folder())[0], 2)
        self.assertEqual(run("convert", src)[0], 2)

    # ---- diff --------------------------------------------------------------
    def test_diff_modelopt_against_compressed_tensors(self):
        """The same weights written by modelopt's and compressed-tensors' rules:
        per layer the share of equal code and scale bytes and the number of
        decoded values that differ equal torch's count (modelopt decodes
        fp4 * (s * g), compressed-tensors fp4 * (s / gs), in fp32); exit 1.
        A modelopt checkpoint against its convert round trip: same numbers,
        exit 0; a layer deleted from B: "only in A"."""
        a, b = self.write("modelopt"), self.write("compressed-tensors")
        p = subprocess.run([NVFP4, "ckpt", "diff", a, b, "--json"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stderr)
        by = {l["name"]: l for l in json.loads(p.stdout)["layers"]}
        ta, tb = self.tensors[("modelopt", True)], self.tensors[("compressed-tensors", True)]
        for name in linears():
            ca, cb = ta[f"{name}.weight"], tb[f"{name}.weight_packed"]
            sa, sb = ta[f"{name}.weight_scale"], tb[f"{name}.weight_scale"]
            l = by[name]
            self.assertEqual(l["code_bytes_equal"], (ca == cb).double().mean().item(), name)
            self.assertEqual(l["scale_bytes_equal"], (sa.view(torch.uint8) == sb.view(torch.uint8)).double().mean().item())

            def decode(codes, scales, mul):
                p_ = codes.long()
                q = torch.stack([p_ & 15, p_ >> 4], -1).reshape(p_.shape[0], -1)
                return E2M1[q] * mul(scales.float().repeat_interleave(16, -1))
            va = decode(ca, sa, lambda s: s * ta[f"{name}.weight_scale_2"])
            vb = decode(cb, sb, lambda s: s / tb[f"{name}.weight_global_scale"])
            self.assertEqual(l["elements_differ"], int((va != vb).sum()), name)
            self.assertEqual(l["elements"], va.numel())
        self.assertGreater(min(l["code_bytes_equal"] for l in by.values()), 0.99)
        rc, out, ct = self.convert(a, "compressed-tensors")
        rc, out, back = self.convert(ct, "modelopt")
        p = subprocess.run([NVFP4, "ckpt", "diff", a, back], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"{len(linears())} of {len(linears())} layers have the same numbers", p.stdout)
        t = dict(ta)
        for k in [k for k in t if k.startswith(f"{L0}mlp.up_proj.")]:
            del t[k]
        t[f"{L0}mlp.up_proj.weight"] = self.weights[f"{L0}mlp.up_proj"].bfloat16()
        p = subprocess.run([NVFP4, "ckpt", "diff", a, self.write("modelopt", tensors=t), "--json"],
                           capture_output=True, text=True)
        by = {l["name"]: l for l in json.loads(p.stdout)["layers"]}
        self.assertEqual((p.returncode, by[f"{L0}mlp.up_proj"]["verdict"]), (1, "only in A"))

    # ---- checkpoints written by modelopt's own export ---------------------
    def test_real_modelopt_exports(self):
        """modelopt 0.47's export_hf_checkpoint on tiny random models (Llama
        NVFP4, W4A16_NVFP4, MLP-only; Mixtral NVFP4 with 4 experts): check
        is silent with --strict; with the float weights every Llama layer's
        bytes are modelopt 0.47's rule (the fused group's amax on k/v/gate
        whose own amax is below the group's, as export_hf_checkpoint unifies
        them); convert to compressed-tensors and back keeps codes and scales
        and checks clean; swapped nibbles in one expert are named with
        --original missing (experts are stored fused in the original) only
        through the decoded statistics... so they are planted in a Llama layer."""
        try:
            import transformers  # noqa: F401
        except Exception:  # pragma: no cover
            self.skipTest("transformers missing")
        cases = [("llama", "NVFP4_DEFAULT_CFG", 14), ("llama", "W4A16_NVFP4_CFG", 14),
                 ("llama", "NVFP4_MLP_ONLY_CFG", 6), ("mixtral", "NVFP4_DEFAULT_CFG", 16)]
        for arch, cfg_name, nlayers in cases:
            with self.subTest(arch=arch, cfg=cfg_name):
                d = modelopt_export(self.folder(), arch, cfg_name)
                rc, rep, err = check_json(d, "--strict")
                self.assertEqual((rc, rep["findings"]), (0, []), err)
                self.assertEqual(len(rep["layers"]), nlayers)
                rc, rep, err = check_json(d, "--original", d + "-orig")
                self.assertEqual((rc, rep["findings"]), (0, []), err)
                if arch == "llama":
                    for l in rep["layers"]:
                        self.assertEqual(l["original"]["written_by"], "modelopt 0.47", l["name"])
                    self.assertIn("fused group", {l["original"]["written_amax"] for l in rep["layers"]})
                rc, out, ct = self.convert(d, "compressed-tensors")
                self.assertEqual(rc, 0, out)
                rc, out, back = self.convert(ct, "modelopt")
                self.assertEqual(rc, 0, out)
                a, b = self.load(d), self.load(back)
                for l in rep["layers"]:
                    for k in ("weight", "weight_scale"):
                        self.assertTrue(torch.equal(a[f"{l['name']}.{k}"].view(torch.uint8),
                                                    b[f"{l['name']}.{k}"].view(torch.uint8)))
        d = modelopt_export(self.folder(), "llama", "NVFP4_DEFAULT_CFG")
        t = self.load(d)
        n = f"{L1}mlp.up_proj.weight"
        t[n] = ((t[n] << 4) | (t[n] >> 4)).contiguous()
        save_file(t, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
        rc, rep, err = check_json(d, "--original", d + "-orig")
        self.assertEqual((rc, [(f["category"], f["tensor"]) for f in rep["findings"]]), (1, [("nibble-order", n)]))

    # ---- checkpoints written by llm-compressor's own oneshot -------------
    def llmc(self, arch, scheme, dtype, std=None):
        """The folder llm-compressor 0.14's oneshot wrote (tests/py/llmc_oneshot.py; std: the weights'
        initializer_range), or a skip."""
        if not os.path.isdir(os.path.join(LLMC_DIR, "llmcompressor")):
            self.skipTest("llm-compressor not installed in %s (pip install --no-deps --target build/third-party-llmc "
                          "-r tests/py/requirements-llmcompressor.txt)" % LLMC_DIR)
        out = self.folder()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([LLMC_DIR] + [p for p in [os.environ.get("PYTHONPATH")]
                                                                           if p]))
        p = subprocess.run(["python3", os.path.join(HERE, "llmc_oneshot.py"), arch, scheme, dtype, out]
                           + ([str(std)] if std else []),
                           capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return out

    def test_llm_compressor_oneshot(self):
        """llm-compressor 0.14 (compressed-tensors 0.19) oneshot on tiny random
        models: Llama NVFP4 in fp32 and bf16, NVFP4A16 in bf16, Mixtral NVFP4 (4
        experts) in bf16. check is silent with --strict; with the original
        weights every layer's bytes are exactly the writer's rule: recipe
        compressed-tensors on the fp32 model, compressed-tensors-bf16 on the
        bf16 ones (torch rounds the global scale and block_amax / 6 to bf16),
        with the fused group's amax on q/k/v and gate/up (experts' w1/w3
        included, found under Mixtral's own names w1/w3/w2 in the original);
        activations as the scheme says; convert to modelopt and back keeps
        codes and scales; swapped nibbles are named nibble-order."""
        if not os.path.isdir(os.path.join(LLMC_DIR, "llmcompressor")):  # a skip in a subTest would leave d unset
            self.skipTest("llm-compressor not installed in %s" % LLMC_DIR)
        bf16 = "compressed-tensors 0.20.1 (bf16 weights)"
        cases = [("llama", "NVFP4", "float32", "compressed-tensors 0.20.1", 14, "nvfp4 (W4A4)"),
                 ("llama", "NVFP4", "bfloat16", bf16, 14, "nvfp4 (W4A4)"),
                 ("llama", "NVFP4A16", "bfloat16", bf16, 14, "bf16 (W4A16)"),
                 ("llama", "NVFP4", "float16", "compressed-tensors 0.20.1 (fp16 weights)", 14, "nvfp4 (W4A4)"),
                 ("mixtral", "NVFP4", "bfloat16", bf16, 16, "nvfp4 (W4A4)")]
        for arch, scheme, dtype, writer, nlayers, act in cases:
            with self.subTest(arch=arch, scheme=scheme, dtype=dtype):
                d = self.llmc(arch, scheme, dtype)
                rc, rep, err = check_json(d, "--strict")
                self.assertEqual((rc, rep["convention"], rep["findings"]), (0, "compressed-tensors", []), err)
                self.assertEqual(len(rep["layers"]), nlayers)
                self.assertEqual({l["activations"] for l in rep["layers"]}, {act})
                rc, rep, err = check_json(d, "--original", d + "-orig")
                self.assertEqual((rc, rep["findings"]), (0, []), err)
                for l in rep["layers"]:
                    self.assertEqual(l["original"]["written_by"], writer, l["name"])
                self.assertIn("fused group", {l["original"]["written_amax"] for l in rep["layers"]})
                rc, out, mo = self.convert(d, "modelopt")
                self.assertEqual(rc, 0, out)
                rc, out, back = self.convert(mo, "compressed-tensors")
                self.assertEqual(rc, 0, out)
                a, b = self.load(d), self.load(back)
                for l in rep["layers"]:
                    for k in ("weight_packed", "weight_scale"):
                        self.assertTrue(torch.equal(a[f"{l['name']}.{k}"].view(torch.uint8),
                                                    b[f"{l['name']}.{k}"].view(torch.uint8)), l["name"])
        t = self.load(d)
        n = "model.layers.0.self_attn.o_proj.weight_packed"
        t[n] = ((t[n] << 4) | (t[n] >> 4)).contiguous()
        save_file(t, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
        rc, rep, err = check_json(d, "--original", d + "-orig")
        self.assertEqual((rc, [(f["category"], f["tensor"]) for f in rep["findings"]]), (1, [("nibble-order", n)]))

    def test_llm_compressor_fp16_small_weights(self):
        """llm-compressor on an fp16 model whose layers' amax is below 0.041
        (initializer_range 0.005): 2688 / amax overflows fp16 and
        compressed-tensors stores a global scale of 1. check names it on every
        layer (global-scale-garbage, the fp16 cause in the message); with the
        original every layer is still exactly the writer's fp16 rule, its error
        1.2 to 2 times a correct quantization's."""
        d = self.llmc("llama", "NVFP4", "float16", std=0.005)
        rc, rep, err = check_json(d)
        self.assertEqual(rc, 1, err)
        self.assertEqual({(f["category"], f["severity"]) for f in rep["findings"]}, {("global-scale-garbage", "error")})
        self.assertEqual(sorted(f["tensor"] for f in rep["findings"]),
                         sorted(l["name"] + ".weight_global_scale" for l in rep["layers"]))
        self.assertEqual(len(rep["findings"]), 14)
        self.assertIn("overflows fp16", rep["findings"][0]["message"])
        self.assertEqual({l["global_scale"] for l in rep["layers"]}, {1.0})
        rc, rep, err = check_json(d, "--original", d + "-orig")
        for l in rep["layers"]:
            o = l["original"]
            self.assertEqual(o["written_by"], "compressed-tensors 0.20.1 (fp16 weights)", l["name"])
            self.assertTrue(1.2 < o["rel_rms_error"] / o["reference_rel_rms_error"] < 2, l["name"])

    # ---- GGUF ------------------------------------------------------------
    def gguf(self, w4a4=True, edit=None):
        if not llama_cpp_converter():
            self.skipTest("LLAMA_CPP_SRC (a llama.cpp source tree with conversion/ and gguf-py/) not set")
        return write_gguf(self.folder() + ".gguf", self.tensors[("modelopt", w4a4)], w4a4, edit)

    def test_gguf_clean_and_its_numbers(self):
        """W4A4 and W4A16 GGUFs from the converter's code: no finding; the
        implied amax is modelopt's group amax (the .scale is weight_scale_2);
        the codes and scales unpacked from the 36-byte blocks give modelopt's
        histogram and largest scale (448 where the layer owns its group amax)."""
        for w4a4 in (True, False):
            with self.subTest(w4a4=w4a4):
                path = self.gguf(w4a4)
                rc, rep, err = check_json(path, "--strict")
                self.assertEqual((rc, rep["convention"], rep["findings"]), (0, "gguf", []), err)
                self.assertIn("MOSTLY_NVFP4", rep["scheme"])
                by = {l["weight"]: l for l in rep["layers"]}
                self.assertEqual(len(by), len(linears()))
                for name, w in self.weights.items():
                    l, amax = by[gguf_name(name)], float(group_amax(self.weights, name))
                    self.assertLess(abs(l["amax_implied"] / amax - 1), 1e-6, name)
                    codes = self.tensors[("modelopt", w4a4)][f"{name}.weight"]
                    hist = torch.bincount(torch.cat([codes & 15, codes >> 4]).flatten().long(), minlength=16)
                    self.assertEqual(l["code_hist"], hist.tolist(), name)
                    self.assertEqual(l["activations"], "nvfp4 (W4A4)" if w4a4 else "bf16 (W4A16)")
                    if float(w.abs().max()) == amax:
                        self.assertEqual(l["scale_max"], 448.0, name)

    def to_gguf(self, folder):
        """llama.cpp's convert_hf_to_gguf.py (LLAMA_CPP_SRC) on folder, with a
        64-piece sentencepiece tokenizer trained once here (the converter
        needs one); the GGUF's path, or a skip."""
        self.give_tokenizer(folder)
        out = folder + ".gguf"
        env = dict(os.environ, PYTHONPATH=os.path.join(LLAMA_CPP_SRC, "gguf-py"))
        p = subprocess.run(["python3", os.path.join(LLAMA_CPP_SRC, "convert_hf_to_gguf.py"), folder, "--outfile",
                            out], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        return out

    def need_converter(self):
        """A skip where llama.cpp's converter cannot run. Tests whose GGUF files
        are made inside subTest blocks call it first: a skip raised in a subTest
        skips that subtest only, and the test would go on without its files."""
        if not llama_cpp_converter():
            self.skipTest("LLAMA_CPP_SRC not set")
        try:
            import sentencepiece  # noqa: F401
        except Exception:  # pragma: no cover
            self.skipTest("sentencepiece missing")

    def give_tokenizer(self, folder):
        """folder's tokenizer replaced by a 64-piece sentencepiece model trained
        once here (llama.cpp's converter needs one it knows), or a skip."""
        self.need_converter()
        import sentencepiece as spm
        tok = os.path.join(self.tmp, "tok.model")
        if not os.path.exists(tok):
            import random
            rnd = random.Random(0)
            words = ["alpha", "beta", "gamma", "delta", "block", "scale", "code", "layer", "model", "tensor"]
            corpus = os.path.join(self.tmp, "corpus.txt")
            with open(corpus, "w") as f:
                f.write("\n".join(" ".join(rnd.choice(words) for _ in range(12)) for _ in range(400)))
            spm.SentencePieceTrainer.train(input=corpus, model_prefix=os.path.join(self.tmp, "tok"), vocab_size=64,
                                           model_type="bpe", minloglevel=2)
        for f in os.listdir(folder):  # the converter prefers a tokenizer.json of the folder's own
            if f.startswith("tokenizer"):
                os.remove(os.path.join(folder, f))
        shutil.copy(tok, os.path.join(folder, "tokenizer.model"))

    def test_convert_to_gguf(self):
        """ckpt convert --to gguf runs llama.cpp's converter and proves its
        output: from modelopt's export every layer the same numbers; from a
        compressed-tensors copy the converter's fp32 reciprocal named; no
        converter, a converter that fails, and one whose output loses a
        byte each leave OUT unwritten and no temporary file behind."""
        a4 = modelopt_export(self.folder(), "llama", "NVFP4_DEFAULT_CFG")
        self.give_tokenizer(a4)
        conv = os.path.join(LLAMA_CPP_SRC, "convert_hf_to_gguf.py")
        out = os.path.join(self.tmp, "out", "m.gguf")
        os.makedirs(os.path.dirname(out))
        rc, text, err = run("convert", a4, "--to", "gguf", "-o", out, "--converter", conv)
        self.assertEqual(rc, 0, text + err)
        self.assertIn("modelopt -> gguf (llama.cpp's convert_hf_to_gguf.py): 14 layers in 14 GGUF tensors", text)
        self.assertIn("every code and block scale byte carried", text)
        self.assertNotIn("decode differently", text)
        self.assertIn("check of %s: 0 errors, 0 hazards" % out, text)
        self.assertEqual(run("diff", a4, out)[0], 0)
        renamed = os.path.join(self.tmp, "model.bin")  # read as GGUF by its magic, whatever its name
        shutil.copy(out, renamed)
        self.assertEqual(check_json(renamed)[1]["convention"], "gguf")
        rc, ct_text, ct = self.convert(a4, "compressed-tensors")
        self.give_tokenizer(ct)
        rc, text, err = run("convert", ct, "--to", "gguf", "-o", out, env={"NVFP4_GGUF_CONVERTER": conv})
        self.assertEqual(rc, 0, text + err)
        self.assertRegex(text, r"compressed-tensors -> gguf .*\n\d+ layers decode differently \(the converter's "
                               r"fp32 reciprocal of the global scale\): largest change of a decoded weight")
        os.remove(out)
        # what fails leaves nothing
        rc, text, err = run("convert", a4, "--to", "gguf", "-o", out, env={"NVFP4_GGUF_CONVERTER": ""})
        self.assertEqual(rc, 2)
        self.assertIn("--converter FILE or NVFP4_GGUF_CONVERTER", err)
        bad = os.path.join(self.tmp, "failing.py")
        with open(bad, "w") as f:
            f.write("import sys\nprint('no such architecture', file=sys.stderr)\nsys.exit(3)\n")
        rc, text, err = run("convert", a4, "--to", "gguf", "-o", out, "--converter", bad)
        self.assertEqual(rc, 2)
        self.assertIn("no such architecture", err)
        self.assertIn("exited with status 3", err)
        lossy = os.path.join(self.tmp, "lossy.py")  # the real converter, then one code byte changed
        with open(lossy, "w") as f:
            f.write("import runpy, sys\nsys.argv[0] = %r\nsys.path[:0] = [%r, %r]\n"
                    "try:\n    runpy.run_path(%r, run_name='__main__')\nexcept SystemExit as e:\n"
                    "    assert not e.code\nimport gguf\n"
                    "for t in gguf.GGUFReader(sys.argv[-1], 'r+').tensors:\n"
                    "    if t.name == 'blk.1.ffn_down.weight':\n        t.data.reshape(-1)[40] ^= 0x11\n"
                    % (conv, LLAMA_CPP_SRC, os.path.join(LLAMA_CPP_SRC, "gguf-py"), conv))
        rc, text, err = run("convert", a4, "--to", "gguf", "-o", out, "--converter", lossy)
        self.assertEqual(rc, 1, text + err)
        self.assertIn("does not carry model.layers.1.mlp.down_proj", err)
        self.assertEqual(os.listdir(os.path.dirname(out)), [])
        self.assertEqual(run("convert", a4, "--to", "modelopt", "-o", out, "--converter", conv)[0], 2)

    def test_gguf_moe_from_llm_compressor(self):
        """llama.cpp's converter on llm-compressor's Mixtral (4 experts, bf16,
        NVFP4), as written and through our convert to modelopt: the experts
        merged into ffn_{gate,up,down}_exps with one global scale per expert;
        check --strict is silent on both, and each merged tensor's implied amax
        is the largest of its experts' in the source (the others' their own)."""
        self.need_converter()
        d = self.llmc("mixtral", "NVFP4", "bfloat16")
        src = {l["name"]: l["amax_implied"] for l in json.loads(run("inspect", d, "--json")[1])["layers"]}
        want = {"blk.0.attn_q": src["model.layers.0.self_attn.q_proj"],
                "blk.0.attn_k": src["model.layers.0.self_attn.k_proj"],
                "blk.0.attn_v": src["model.layers.0.self_attn.v_proj"],
                "blk.0.attn_output": src["model.layers.0.self_attn.o_proj"]}
        for gg, hf in (("gate", "gate_proj"), ("up", "up_proj"), ("down", "down_proj")):
            want[f"blk.0.ffn_{gg}_exps"] = max(src[f"model.layers.0.block_sparse_moe.experts.{e}.{hf}"]
                                               for e in range(4))
        rc, out, mo = self.convert(d, "modelopt")
        self.assertEqual(rc, 0, out)
        for folder in (d, mo):
            with self.subTest(folder=os.path.basename(folder)):
                g = self.to_gguf(folder)
                rc, rep, err = check_json(g, "--strict")
                self.assertEqual((rc, rep["convention"], rep["findings"]), (0, "gguf", []), err)
                got = {l["name"]: l["amax_implied"] for l in rep["layers"]}
                self.assertEqual(sorted(got), sorted(want))
                self.assertEqual({l["name"]: l["shape"][0] for l in rep["layers"] if "exps" in l["name"]},
                                 {"blk.0.ffn_gate_exps": 256, "blk.0.ffn_up_exps": 256, "blk.0.ffn_down_exps": 256})
                for k, v in want.items():
                    self.assertLess(abs(got[k] / v - 1), 1e-6, k)
                # diff against the source: every code and scale byte carried, experts by their rows, q/k
                # rows put back from llama.cpp's RoPE order; from modelopt the same numbers throughout,
                # from compressed-tensors the converter's fp32 reciprocal of the global scale may show
                p = subprocess.run([NVFP4, "ckpt", "diff", folder, g, "--json"], capture_output=True, text=True)
                layers = json.loads(p.stdout)["layers"]
                self.assertEqual(len(layers), 16)
                for l in layers:
                    self.assertEqual((l["code_bytes_equal"], l["scale_bytes_equal"]), (1.0, 1.0), l["name"])
                    if folder == mo or "self_attn" in l["name"]:
                        self.assertEqual(l["verdict"], "same numbers", l["name"])
                self.assertEqual(p.returncode, 0 if folder == mo else 1, p.stderr)
                # --original: each expert's rows of the merged tensors against Mixtral's own w1/w3/w2, q/k
                # rows read back; straight from compressed-tensors every layer is its bf16 rule (the
                # converter's fp32 reciprocal is one of the readings of the GGUF .scale)
                rc, rep, err = check_json(g, "--original", d + "-orig")
                self.assertEqual((rc, rep["findings"]), (0, []), err)
                self.assertEqual(len([l for l in rep["layers"] if "original" in l]), 7)
                if folder == d:
                    self.assertEqual({l["original"]["written_by"] for l in rep["layers"]},
                                     {"compressed-tensors 0.20.1 (bf16 weights)"})
                    self.assertEqual({l["name"]: l["original"]["written_amax"] for l in rep["layers"]
                                      if "exps" in l["name"]},
                                     {"blk.0.ffn_gate_exps": "fused group", "blk.0.ffn_up_exps": "fused group",
                                      "blk.0.ffn_down_exps": "own"})  # some expert's gate or up: the w1/w3 amax
        p = subprocess.run([NVFP4, "ckpt", "diff", d + ".gguf", mo + ".gguf"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not two GGUF files", p.stderr)

    def test_gguf_from_llama_cpp_converter(self):
        """llama.cpp's convert_hf_to_gguf.py itself (LLAMA_CPP_SRC; a 64-piece
        sentencepiece tokenizer trained here, as the converter needs one) on
        modelopt's own exports: NVFP4, W4A16_NVFP4 and a compressed-tensors
        copy (our convert) all check clean with --strict, the implied amaxes
        equal the source's; the W4A16 export relabelled NVFP4 in
        hf_quant_config.json (W4A16 intent lost) gives activation-precision
        on all 14 tensors."""
        self.need_converter()
        a4 = modelopt_export(self.folder(), "llama", "NVFP4_DEFAULT_CFG")
        a16 = modelopt_export(self.folder(), "llama", "W4A16_NVFP4_CFG")
        rc, out, ct = self.convert(a4, "compressed-tensors")
        src_amax = {l["name"]: l["amax_implied"] for l in json.loads(run("inspect", a4, "--json")[1])["layers"]}
        for folder in (a4, a16, ct):
            with self.subTest(folder=os.path.basename(folder)):
                rc, rep, err = check_json(self.to_gguf(folder), "--strict")
                self.assertEqual((rc, rep["convention"], rep["findings"]), (0, "gguf", []), err)
                self.assertEqual(len(rep["layers"]), 14)
                if folder != ct:  # modelopt -> GGUF carries every number (the q/k rows in RoPE order)
                    p = subprocess.run([NVFP4, "ckpt", "diff", folder, folder + ".gguf"], capture_output=True,
                                       text=True)
                    self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                    self.assertIn("14 of 14 layers have the same numbers", p.stdout)
                    # --original on the GGUF: every layer's bytes (q/k rows read back from the RoPE order)
                    # are modelopt's rule with the fused group's amax on q/k/v and gate/up
                    rc, rep, err = check_json(folder + ".gguf", "--original", folder + "-orig")
                    self.assertEqual((rc, rep["findings"]), (0, []), err)
                    self.assertEqual({l["original"]["written_by"] for l in rep["layers"]}, {"modelopt 0.47"})
                    amax = {(l["name"].split(".")[-1], l["original"]["written_amax"]) for l in rep["layers"]}
                    self.assertIn("fused group", {a for n, a in amax if n in ("attn_q", "attn_k", "attn_v")})
                    self.assertIn("fused group", {a for n, a in amax if n in ("ffn_gate", "ffn_up")})
                    self.assertEqual({a for n, a in amax if n in ("attn_output", "ffn_down")}, {"own"})
                    for l in rep["layers"]:
                        o = l["original"]
                        self.assertLess(o["rel_rms_error"] / o["reference_rel_rms_error"], 1.02, l["name"])
                if folder != a16:
                    got = sorted(l["amax_implied"] for l in rep["layers"])
                    for x, y in zip(got, sorted(src_amax.values())):
                        self.assertLess(abs(x / y - 1), 1e-6)
        hq = os.path.join(a16, "hf_quant_config.json")
        cfg = read_json(hq)
        cfg["quantization"]["quant_algo"] = "NVFP4"
        with open(hq, "w") as f:
            json.dump(cfg, f)
        os.remove(a16 + ".gguf")
        rc, rep, err = check_json(self.to_gguf(a16))
        self.assertEqual(rc, 1, err)
        self.assertEqual({f["category"] for f in rep["findings"]}, {"activation-precision"})
        self.assertEqual(len(rep["findings"]), 14)

    def test_gguf_planted_defects(self):
        """A compressed-tensors global scale copied without inverting it, NaN
        scale bytes, a NaN .scale, W4A16 intent lost (no prec_a4 marking), and
        with --original the nibbles of one tensor's code bytes swapped: each
        named with its category and tensor."""
        self.gguf()  # skips without LLAMA_CPP_SRC
        o = "model.layers.0.self_attn.o_proj"
        d = "model.layers.1.mlp.down_proj"

        def recip(name, w, s, s2, i):
            return w, s, (1 / s2 if name == o else s2), i

        def nan_block(name, w, s, s2, i):
            if name == d:
                s = s.view(torch.uint8).clone()
                s[2, 1] = 0x7F
                s = s.view(torch.float8_e4m3fn)
            return w, s, s2, i

        def nan_global(name, w, s, s2, i):
            return w, s, (torch.tensor(float("nan")) if name == d else s2), i

        cases = [(recip, True, {("global-scale-reciprocal", "blk.0.attn_output.scale")}),
                 (nan_block, True, {("scale-nonfinite", "blk.1.ffn_down.weight")}),
                 (nan_global, True, {("global-scale-nonfinite", "blk.1.ffn_down.scale")})]
        for edit, w4a4, want in cases:
            with self.subTest(defect=edit.__name__):
                rc, rep, err = check_json(self.gguf(w4a4, edit))
                self.assertEqual(rc, 1, err)
                self.assertEqual({(f["category"], f["tensor"]) for f in rep["findings"]}, want)
        # --original on a clean GGUF: modelopt's rule everywhere; then the nibbles of one tensor's code
        # bytes swapped in the file (element j of each 16 read from the high nibble): nibble-order there
        path = self.gguf()
        rc, rep, err = check_json(path, "--original", self.original())
        self.assertEqual((rc, rep["findings"]), (0, []), err)
        self.assertEqual({l["original"]["written_by"] for l in rep["layers"]}, {"modelopt 0.47"})
        _, gguf = llama_cpp_converter()
        for t in gguf.GGUFReader(path, "r+").tensors:
            if t.name == "blk.0.attn_output.weight":
                b = t.data.reshape(-1, 36)[:, 4:]
                b[:] = (b << 4) | (b >> 4)
        rc, rep, err = check_json(path, "--original", self.original())
        self.assertEqual((rc, [(f["category"], f["tensor"]) for f in rep["findings"]]),
                         (1, [("nibble-order", "blk.0.attn_output.weight")]), err)
        self.assertIn("36-byte block", rep["findings"][0]["message"])
        # W4A16 written as if W4A4: no input scale (trivial, omitted) and no prec_a4 marking
        path = write_gguf(self.folder() + ".gguf", self.tensors[("modelopt", False)], True)
        rc, rep, err = check_json(path)
        self.assertEqual(rc, 1, err)
        self.assertEqual({(f["category"], f["tensor"]) for f in rep["findings"]},
                         {("activation-precision", gguf_name(n)) for n in linears()})

    def test_usage_errors_exit_2(self):
        self.assertEqual(run("frobnicate", self.tmp)[0], 2)
        self.assertEqual(run("check")[0], 2)
        self.assertEqual(run("inspect", self.tmp, "--strict")[0], 2)


if __name__ == "__main__":
    unittest.main()

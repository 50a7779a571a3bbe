"""nvfp4kit.ckpt gives what `nvfp4 ckpt inspect|check --json` gives, on the
numpy-computed modelopt and compressed-tensors checkpoints of
tests/py/test_ckpt_numpy.py (no torch needed): the same layers and findings,
field for field; check's exit_code is the CLI's exit status, with and without
strict; an unreadable folder raises nvfp4kit.Error naming the file."""
import json
import os
import sys

import pytest

import nvfp4kit
from nvfp4kit import ckpt
from conftest import REPO

sys.path.insert(0, os.path.join(REPO, "tests", "py"))
import test_ckpt_numpy as ck  # noqa: E402

CONVENTIONS = ["modelopt", "compressed-tensors"]


def write(tmp_path, conv, tensors=None, w4a4=True, name="ck"):
    d = str(tmp_path / name)
    ck.write_ckpt(d, tensors if tensors is not None else ck.ckpt_tensors(ck.make_weights(), conv, w4a4), conv, w4a4)
    return d


def cli_json(cli, d, *extra):
    p = cli("ckpt", "check", d, "--json", *extra)
    return p.returncode, json.loads(p.stdout)


@pytest.mark.parametrize("conv", CONVENTIONS)
def test_inspect_equals_the_cli_json(cli, tmp_path, conv):
    d = write(tmp_path, conv)
    rc, want = cli_json(cli, d)
    rep = ckpt.inspect(d)
    assert (rc, rep.convention, rep.scheme, rep.files) == (0, conv, want["scheme"], 1)
    assert len(rep.layers) == 7 and rep.findings == []
    for got, w in zip(rep.layers, want["layers"]):
        assert got.shape == tuple(w["shape"]) and got.code_hist == tuple(w["code_hist"])
        for k in ("name", "weight", "algo", "activations", "decoded", "global_scale", "amax_implied", "amax_decoded",
                  "scale_min", "scale_max", "scale_zero", "scale_nan", "scale_count", "input_scale"):
            assert getattr(got, k) == w[k], k
    q = rep.layer("model.layers.0.self_attn.q_proj")
    weights = ck.make_weights()
    assert q.amax_implied == pytest.approx(ck.group_amax(weights, q.name), rel=1e-6)
    assert q.scale_count == 64 * 64 // 16 and sum(q.code_hist) == 64 * 64
    with pytest.raises(KeyError):
        rep.layer("lm_head")


@pytest.mark.parametrize("conv", CONVENTIONS)
def test_weight_only_has_no_input_scale(tmp_path, conv):
    rep = ckpt.inspect(write(tmp_path, conv, w4a4=False))
    assert {(l.activations, l.input_scale) for l in rep.layers} == {("bf16 (W4A16)", None)}
    assert ckpt.check(write(tmp_path, conv, w4a4=False, name="ck2")) == []


@pytest.mark.parametrize("conv", CONVENTIONS)
@pytest.mark.parametrize("defect", ["reciprocal", "missing", "nan-scale", "scale-shape"])
def test_check_names_each_defect_as_the_cli_does(cli, tmp_path, conv, defect):
    t, want = ck.plant(ck.make_weights(), conv, defect)
    d = write(tmp_path, conv, t)
    found = ckpt.check(d)
    rc, js = cli_json(cli, d)
    assert [(f.category, f.tensor) for f in found] == [want]
    assert [f.__dict__ for f in found] == js["findings"]
    assert found[0].severity == "error" and want[1] in found[0].message
    assert (found.exit_code, rc) == (1, 1)


def test_hazard_counts_only_with_strict(cli, tmp_path):
    """v_proj quantized with its own amax (a quarter of its group's): a fused-global-scale-mismatch hazard,
    exit 0; exit 1 with strict, as the CLI's --strict."""
    w = ck.make_weights()
    t = ck.ckpt_tensors(w, "modelopt")
    v = "model.layers.0.self_attn.v_proj"
    q, s, g = ck.quantize(w[v], ck.group_amax(w, v) / 4, "modelopt")
    t[v + ".weight"] = ("U8", list(q.shape), q.tobytes())
    t[v + ".weight_scale"] = ("F8_E4M3", list(s.shape), s.tobytes())
    t[v + ".weight_scale_2"] = ("F32", [], g.tobytes())
    d = write(tmp_path, "modelopt", t)
    found = ckpt.check(d)
    assert [(f.category, f.tensor, f.severity) for f in found] == [
        ("fused-global-scale-mismatch", v + ".weight_scale_2", "hazard")]
    assert (found.exit_code, found.errors) == (0, [])
    strict = ckpt.check(d, strict=True)
    assert (strict.exit_code, len(strict.errors)) == (1, 1)
    assert cli("ckpt", "check", d).returncode == 0
    assert cli("ckpt", "check", d, "--strict").returncode == 1


def test_unreadable_raises_error_naming_the_file(tmp_path):
    d = write(tmp_path, "compressed-tensors")
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write("{not json")
    with pytest.raises(nvfp4kit.Error, match="config.json"):
        ckpt.inspect(d)
    with pytest.raises(nvfp4kit.Error, match="absent"):
        ckpt.check(str(tmp_path / "absent"))
    with pytest.raises(nvfp4kit.Error, match="strict"):
        ckpt.check(d, strict="yes")
    with pytest.raises(nvfp4kit.Error, match="path"):
        ckpt.inspect(42)


@pytest.mark.parametrize("conv", CONVENTIONS)
def test_original_equals_the_cli(cli, tmp_path, conv):
    """check(original=) and inspect(original=): the CLI's per-layer comparison and findings; the numpy
    writer's bytes are the convention's writer rule; swapped nibbles are named nibble-order."""
    weights = ck.make_weights()
    orig = str(tmp_path / "orig.safetensors")
    ck.write_safetensors(orig, {f"{k}.weight": ("F32", list(v.shape), v.tobytes()) for k, v in weights.items()})
    d = write(tmp_path, conv)
    rc, want = cli_json(cli, d, "--original", orig)
    rep = ckpt.inspect(d, original=orig)
    assert rc == 0 and rep.findings == []
    assert [l.original for l in rep.layers] == [w["original"] for w in want["layers"]]
    assert {l.original["written_by"] for l in rep.layers} == {
        "modelopt 0.47" if conv == "modelopt" else "compressed-tensors 0.20.1"}
    t = ck.ckpt_tensors(weights, conv)
    wname = "model.layers.0.mlp.down_proj." + ("weight" if conv == "modelopt" else "weight_packed")
    dtype, shape, raw = t[wname]
    t[wname] = (dtype, shape, bytes(((x << 4) | (x >> 4)) & 0xFF for x in raw))
    bad = write(tmp_path, conv, t, name="bad")
    found = ckpt.check(bad, original=orig)
    assert [(f.category, f.tensor) for f in found] == [("nibble-order", wname)] and found.exit_code == 1
    assert ckpt.check(bad) == []


def test_convert_equals_the_cli(cli, tmp_path):
    """convert(): the CLI's output byte for byte (every file), its numbers; a round trip keeps the codes and
    scales; an existing output, an unknown convention and a checkpoint with errors raise nvfp4kit.Error."""
    src = write(tmp_path, "modelopt")
    res = ckpt.convert(src, "compressed-tensors", str(tmp_path / "py"))
    p = cli("ckpt", "convert", src, "--to", "compressed-tensors", "-o", str(tmp_path / "cli"))
    assert p.returncode == 0
    assert sorted(os.listdir(tmp_path / "py")) == sorted(os.listdir(tmp_path / "cli"))
    for f in os.listdir(tmp_path / "py"):
        assert (tmp_path / "py" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f
    assert (res.layers, res.files, res.scales_converted) == (7, 1, 14)
    assert ("%.6g (%s)" % (res.max_decode_change, res.max_change_layer)).encode() in p.stdout
    back = ckpt.convert(str(tmp_path / "py"), "modelopt", str(tmp_path / "back"))
    assert back.layers == 7 and ckpt.check(str(tmp_path / "back")) == []
    with pytest.raises(nvfp4kit.Error, match="exists"):
        ckpt.convert(src, "compressed-tensors", str(tmp_path / "py"))
    with pytest.raises(nvfp4kit.Error):
        ckpt.convert(src, "gguf", str(tmp_path / "g"))
    t, _ = ck.plant(ck.make_weights(), "modelopt", "reciprocal")
    with pytest.raises(nvfp4kit.Error, match="global-scale-reciprocal"):
        ckpt.convert(write(tmp_path, "modelopt", t, name="bad"), "compressed-tensors", str(tmp_path / "bad-out"))
    assert not os.path.exists(tmp_path / "bad-out")


def test_diff_equals_the_cli(cli, tmp_path):
    """diff(): the CLI's --json layers; the numpy modelopt and compressed-tensors writers agree on every scale
    byte; unreadable raises nvfp4kit.Error naming the folder."""
    a, b = write(tmp_path, "modelopt", name="a"), write(tmp_path, "compressed-tensors", name="b")
    got = ckpt.diff(a, b)
    p = cli("ckpt", "diff", a, b, "--json")
    assert got == json.loads(p.stdout)["layers"]
    assert len(got) == 7 and all(l["scale_bytes_equal"] == 1.0 for l in got)
    assert p.returncode == (0 if all(l["verdict"] == "same numbers" for l in got) else 1)
    with pytest.raises(nvfp4kit.Error, match="nowhere"):
        ckpt.diff(a, str(tmp_path / "nowhere"))

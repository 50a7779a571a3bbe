"""global_scale_inverted (FlashInfer's is_global_scale_inversed used as meant,
docs/semantics.md, "Scale layouts"): the keyword gives the bytes of
`nvfp4 quantize --global-scale-inverted`, a bundle carries it back, and a
recipe without an encode global scale refuses it."""
import os

import numpy as np
import pytest

import nvfp4kit as nk


def tie_tensor():
    # amax 6: S_enc 448, handed back as 447.99997; the block of amax 0.015904017 sits on the E4M3 tie 1.1875
    x = np.zeros((4, 32), np.float32)
    x[0, 0], x[0, 16] = 6.0, np.float32(0.015904017)
    return x


def test_keyword_equals_the_cli(tmp_path, cli):
    x = tie_tensor()
    np.save(tmp_path / "x.npy", x)
    cli("quantize", tmp_path / "x.npy", "-o", tmp_path / "b.safetensors", "--recipe", "flashinfer",
        "--global-scale-inverted")
    b = nk.load_bundle(tmp_path / "b.safetensors")
    q = nk.quantize(x, recipe="flashinfer", global_scale_inverted=True)
    assert b.options["global_scale_inverted"] is True
    assert q.options["global_scale_inverted"] is True
    for name, arr in q.components().items():
        assert arr.tobytes() == b.components()[name].tobytes(), name
    plain = nk.quantize(x, recipe="flashinfer")
    assert plain.options["global_scale_inverted"] is False
    assert int(q.components()["scale"][0, 1]) == 0x39
    assert int(plain.components()["scale"][0, 1]) == 0x3A


def test_refused_without_an_encode_scale():
    with pytest.raises(nk.Error, match="no encode global scale"):
        nk.quantize(tie_tensor(), recipe="torchao", global_scale_inverted=True)


def test_golden_suite_kv_v_and_inverted_matches_the_cli(tmp_path, cli):
    args = dict(suite="edge", recipe="flashinfer", scale_layout="kv-v", global_scale_inverted=True)
    nk.golden_suite(str(tmp_path / "py"), **args)
    p = cli("golden", "--suite", "edge", "--recipe", "flashinfer", "--scale-layout", "kv-v",
            "--global-scale-inverted", "--out", tmp_path / "cli")
    assert p.returncode == 0
    names = sorted(os.listdir(tmp_path / "cli"))
    assert names == sorted(os.listdir(tmp_path / "py")) and len(names) > 5
    for n in names:
        assert (tmp_path / "py" / n).read_bytes() == (tmp_path / "cli" / n).read_bytes(), n
    manifest = (tmp_path / "py" / "MANIFEST").read_bytes()
    assert b"--scale-layout trtllm-kv-v --global-scale-inverted\n" in manifest
    b = nk.load_bundle(tmp_path / "py" / "edge-outliers.safetensors")
    assert b.options["global_scale_inverted"] is True

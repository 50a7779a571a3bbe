"""global_scale_inverted (FlashInfer's is_global_scale_inversed used as meant,
docs/semantics.md, "Scale layouts"): the keyword gives the bytes of
`nvfp4 quantize --global-scale-inverted`, a bundle carries it back, and a
recipe without an encode global scale refuses it."""
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

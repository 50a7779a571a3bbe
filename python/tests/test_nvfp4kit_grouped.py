"""nvfp4kit.quantize_grouped: grouped (MoE) quantization, the bytes of
`nvfp4 quantize --groups`; hand-computed bytes of 3 experts (2, 0, 1 tokens),
the saved bundle byte for byte against the command's, verify per expert."""
import numpy as np
import pytest

import nvfp4kit
from conftest import rand, read_bytes


def three_experts():
    x = np.zeros((3, 16), dtype=np.float32)
    x[0, :4] = [6, 3, -1, 0.5]
    x[1, 0] = 1.5
    x[2, 0] = 0.75
    return x


def test_hand_computed_bytes():
    g = nvfp4kit.quantize_grouped(three_experts(), [2, 0, 1])
    assert g.amax.tolist() == [6.0, 0.0, 0.75]
    assert g.m_sizes.tolist() == [2, 0, 1]
    assert g.scale.reshape(-1).tolist() == [0x7E, 0x6E, 0x7E]  # te: 448, 112; expert 2 alone: 448
    z = g.scale_swizzled.reshape(-1)
    assert z.size == 1024 and np.nonzero(z)[0].tolist() == [0, 16, 512]
    assert g.data[0, :2].tolist() == [0x57, 0x1A]
    assert np.array_equal(g.dequantize(), three_experts())


def test_bundle_is_the_commands(cli, tmp_path):
    x = rand(150, 48, seed=3)
    x[:20] *= 100
    np.save(tmp_path / "x.npy", x)
    cli("quantize", tmp_path / "x.npy", "-o", tmp_path / "c.safetensors", "--groups", "20,0,130", "--recipe", "mslk")
    nvfp4kit.quantize_grouped(x, [20, 0, 130], recipe="mslk").save_bundle(tmp_path / "p.safetensors")
    assert read_bytes(tmp_path / "c.safetensors") == read_bytes(tmp_path / "p.safetensors")


def test_verify_names_the_expert_and_the_shared_scale(tmp_path):
    x = three_experts()
    nvfp4kit.quantize_grouped(x, [2, 0, 1]).save_bundle(tmp_path / "g.safetensors")
    shared = nvfp4kit.quantize(x)  # one amax for all experts: the catalogued mistake
    r = nvfp4kit.verify(tmp_path / "g.safetensors", {"data": shared.row.data, "scale": shared.row.scale})
    assert not r.ok
    assert r.json["experts"][2]["scale"] == 1 and r.json["experts"][0]["status"] == "match"
    assert [c["cause"] for c in r.json["causes"]][0] == "grouped-shared-global-scale"
    assert "experts that differ: 2 (1 of 2 with rows)" in str(r)
    assert r.components["scale"] == {"status": "mismatch", "compared": 3, "mismatches": 1}
    assert r.components["amax"] == {"status": "absent"}


def test_refused():
    with pytest.raises(nvfp4kit.Error, match="sum to 2 rows but the tensor has 3 rows"):
        nvfp4kit.quantize_grouped(three_experts(), [1, 1])
    with pytest.raises(nvfp4kit.Error, match="m_sizes\\[1\\] must be an integer from 0"):
        nvfp4kit.quantize_grouped(three_experts(), [4, -1])

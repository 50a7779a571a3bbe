"""Golden packs in-process (nvfp4kit.golden_pack, verify_pack over
nvfp4/suite.h): the bytes `nvfp4 golden --pack` writes, the report `verify
--suite PACK` prints, and the pack read back with json, numpy and ml_dtypes
only (tests/cli/pack_recompute.py never imports nvfp4kit)."""
import json
import os
import struct
import subprocess
import sys

import pytest

import nvfp4kit
from conftest import REPO, read_bytes


def tree(folder):
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(root, f)
            out[os.path.relpath(p, folder)] = read_bytes(p)
    return out


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    d = tmp_path_factory.mktemp("pack") / "P"
    lines = nvfp4kit.golden_pack(str(d))
    assert lines[-1] == "golden pack in %s (README.md explains every file)" % d
    return d


def test_golden_pack_is_the_cli_pack(pack, cli, tmp_path):
    assert cli("golden", "--pack", tmp_path / "C").returncode == 0
    got, want = tree(pack), tree(tmp_path / "C")
    assert sorted(got) == sorted(want) and len(got) > 100
    assert [k for k in want if got[k] != want[k]] == []


def test_golden_pack_for_one_recipe(cli, tmp_path):
    nvfp4kit.golden_pack(str(tmp_path / "R"), recipe="mxfp4-floor")
    assert cli("golden", "--pack", tmp_path / "C", "--recipe", "mxfp4-floor").returncode == 0
    got, want = tree(tmp_path / "R"), tree(tmp_path / "C")
    assert sorted(got) == sorted(want) and [k for k in want if got[k] != want[k]] == []
    index = json.load(open(tmp_path / "R" / "pack.json"))
    assert [s["dir"] for s in index["suites"]] == [
        "suite-mxfp4-floor-edge-rn-cublas-128x4", "suite-mxfp4-floor-edge-sr-cublas-128x4",
        "suite-mxfp4-floor-shapes-rn-cublas-128x4", "suite-mxfp4-floor-shapes-rn-linear",
        "suite-mxfp4-floor-shapes-rn-flashinfer-8x4"]
    assert nvfp4kit.verify_pack(str(tmp_path / "R"), str(tmp_path / "C"))[1] == 0
    with pytest.raises(nvfp4kit.Error, match="unknown recipe 'nope'"):
        nvfp4kit.golden_pack(str(tmp_path / "X"), recipe="nope")
    assert not os.path.exists(tmp_path / "X")


def test_verify_pack_against_itself_and_a_planted_error(pack, cli, tmp_path):
    text, verdict = nvfp4kit.verify_pack(str(pack), str(pack))
    assert verdict == 0
    assert "pack: 15 parts match, 0 differ, 0 missing, 0 unreadable\n" in text
    outs = tmp_path / "O"
    os.makedirs(outs)
    d = json.load(open(pack / "e4m3.json"))
    dec = [t for t in d["tables"] if t["name"] == "decode"][0]
    assert dec["outputs"]["value_bits"][0x7E] == struct.unpack("<I", struct.pack("<f", 448.0))[0]
    dec["outputs"]["value_bits"][0x7E] ^= 1  # a decoder one ulp off at 448
    mine = {"tables": [{"name": t["name"], "outputs": t["outputs"]} for t in d["tables"]]}  # inputs may be left out
    json.dump(mine, open(outs / "e4m3.json", "w"))
    text, verdict = nvfp4kit.verify_pack(str(pack), str(outs))
    assert verdict == 1
    assert "  e4m3.json decode.value_bits[126]: expected 1138753536 (0x43e00000), got 1138753537 (0x43e00001); " \
           "code=126 value=448\n" in text
    assert "pack: 0 parts match, 1 differ, 14 missing, 0 unreadable\n" in text
    p = cli("verify", "--suite", pack, "--actual-dir", outs)
    assert p.returncode == 1 and p.stdout.decode() == text + "verdict: MISMATCH\n"
    assert nvfp4kit.verify_pack(str(pack), str(outs), require_all=True)[1] == 1


def test_verify_pack_errors(pack, tmp_path):
    with pytest.raises(nvfp4kit.Error, match="not a folder"):
        nvfp4kit.verify_pack(str(pack), str(tmp_path / "none"))
    with pytest.raises(nvfp4kit.Error, match="bad component 'bogus'"):
        nvfp4kit.verify_pack(str(pack), str(pack), component="bogus")
    assert nvfp4kit.verify_pack(str(pack / "MANIFEST"), str(pack), component="scale")[1] == 0
    with pytest.raises(nvfp4kit.Error, match="pack.json"):
        nvfp4kit.verify_pack(str(tmp_path), str(tmp_path))
    os.makedirs(tmp_path / "F")
    open(tmp_path / "F" / "notes.txt", "w").write("keep")
    with pytest.raises(nvfp4kit.Error, match="not overwriting"):
        nvfp4kit.golden_pack(str(tmp_path / "F"))
    assert open(tmp_path / "F" / "notes.txt").read() == "keep"


def test_the_pack_read_with_numpy_and_ml_dtypes_only(pack):
    pytest.importorskip("ml_dtypes")
    script = os.path.join(REPO, "tests", "cli", "pack_recompute.py")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nvfp4kit out of reach
    p = subprocess.run([sys.executable, script, str(pack)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = p.stdout.decode()
    assert p.returncode == 0, out
    assert "pack_recompute: 0 failed" in out and out.count("ok   ") == 24
    assert "ok   nvfp4kit was never imported" in out

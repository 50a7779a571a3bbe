"""Golden suites in-process (nvfp4kit.golden_suite, verify_suite,
mutation_report over nvfp4/suite.h): a suite generated in Python has the
bytes `nvfp4 golden` writes, and a kernel output folder with a planted bug
gets from Python the verdict, the per-case statuses and causes, and the
text / JSON / TAP / JUnit bytes that `nvfp4 verify --suite` prints."""
import json
import os
import shutil

import numpy as np
import pytest

import nvfp4kit
from conftest import REPO, read_bytes

safetensors_numpy = pytest.importorskip("safetensors.numpy")


def tree(folder):
    """{relative path: bytes} of every file under folder."""
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(root, f)
            out[os.path.relpath(p, folder)] = read_bytes(p)
    return out


def test_golden_suite_all_is_the_committed_reference(tmp_path):
    # reference/te-rn is `nvfp4 golden --suite all --recipe te --round rn --level 1 --seed 1` (make golden-check
    # regenerates it byte for byte with the CLI): the cases, the kill search and the separating cases.
    lines = nvfp4kit.golden_suite(str(tmp_path / "te-rn"), suite="all", recipe="te", rounding="rn", level=1, seed=1)
    got, want = tree(tmp_path / "te-rn"), tree(os.path.join(REPO, "reference", "te-rn"))
    assert sorted(got) == sorted(want)
    assert [k for k in want if got[k] != want[k]] == []
    assert lines[-1] == "%d bundles (0 skipped) and MANIFEST in %s" % (len(want) - 1, tmp_path / "te-rn")


def test_golden_suite_matches_the_cli_with_every_option(tmp_path, cli):
    args = dict(suite="edge", recipe="te", level=2, seed=7, rounding="sr", format="npy", scale_layout="8x4")
    lines = nvfp4kit.golden_suite(str(tmp_path / "py"), **args)
    p = cli("golden", "--suite", "edge", "--recipe", "te", "--level", "2", "--seed", "7", "--round", "sr",
            "--format", "npy", "--scale-layout", "8x4", "--out", tmp_path / "cli")
    assert p.returncode == 0
    py, c = tree(tmp_path / "py"), tree(tmp_path / "cli")
    assert sorted(py) == sorted(c) and all(py[k] == c[k] for k in c)
    assert b"--round sr --format npy --scale-layout flashinfer-8x4\n" in py["MANIFEST"]
    # the progress lines are the command's stderr without its prefix (the folder named differs)
    err = [l[len("nvfp4 golden: "):] for l in p.stderr.decode().splitlines()]
    assert lines[:-1] == err[:-1] and len(lines) == 12


def test_golden_suite_refuses_what_the_cli_refuses(tmp_path):
    with pytest.raises(nvfp4kit.Error, match="bad suite 'everything'"):
        nvfp4kit.golden_suite(str(tmp_path / "a"), suite="everything")
    with pytest.raises(nvfp4kit.Error, match="^recipe ggml has no stochastic rounding$"):
        nvfp4kit.golden_suite(str(tmp_path / "a"), suite="edge", recipe="ggml", rounding="sr")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(nvfp4kit.Error, match="not empty and not a golden suite of this tool"):
        nvfp4kit.golden_suite(str(tmp_path / "mine"), suite="edge")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A Python-generated edge suite and a kernel folder: every case right
    but edge-e2m1-ties (nibbles swapped: known-bug layout-nibble-swap) and
    edge-underflow (missing)."""
    d = tmp_path_factory.mktemp("planted")
    g, outs = str(d / "g"), str(d / "outs")
    nvfp4kit.golden_suite(g, suite="edge", recipe="te")
    os.mkdir(outs)
    for f in os.listdir(g):
        if f.endswith(".safetensors") and f != "edge-underflow.safetensors":
            shutil.copy(os.path.join(g, f), outs)
    a = safetensors_numpy.load_file(os.path.join(g, "edge-e2m1-ties.safetensors"))["data"]
    safetensors_numpy.save_file({"data": ((a >> 4) | (a << 4)).astype(np.uint8)},
                                os.path.join(outs, "edge-e2m1-ties.safetensors"))
    return g, outs


@pytest.mark.parametrize("fmt,flags", [("text", []), ("json", ["--json"]), ("tap", ["--tap"])])
def test_verify_suite_prints_what_the_cli_prints(planted, cli, tmp_path, fmt, flags):
    g, outs = planted
    r = nvfp4kit.verify_suite(g, outs, format=fmt, junit=str(tmp_path / "py.xml"))
    p = cli("verify", "--suite", g, "--actual-dir", outs, "--junit", tmp_path / "cli.xml", *flags)
    assert (r.verdict, p.returncode) == (1, 1)
    assert r.text == p.stdout.decode()
    assert read_bytes(tmp_path / "py.xml") == read_bytes(tmp_path / "cli.xml")
    assert r.counts == (9, 1, 1, 0)


def test_verify_suite_statuses_and_causes_are_the_clis(planted, cli):
    g, outs = planted
    r = nvfp4kit.verify_suite(g, outs, format="junit")
    cli_json = json.loads(cli("verify", "--suite", g, "--actual-dir", outs, "--json").stdout)
    assert [(c["case"], c["status"]) for c in r.cases] == [(c["case"], c["status"]) for c in cli_json["cases"]]
    status = {c["case"]: c["status"] for c in r.cases}
    assert status["edge-e2m1-ties"] == "mismatch" and status["edge-underflow"] == "missing"
    assert sum(s == "match" for s in status.values()) == 9
    bad = next(c for c in cli_json["cases"] if c["case"] == "edge-e2m1-ties")
    assert r.causes("edge-e2m1-ties") == [dict(k, orientation=o["orientation"]) for o in bad["outputs"]
                                          for k in o["causes"]]
    causes = r.causes("edge-e2m1-ties")
    assert causes[0]["cause"] == "swapped-nibbles"
    bug = [c for c in causes if c["cause"] == "known-bug"]
    assert len(bug) == 1 and bug[0]["line"].startswith("layout-nibble-swap:")
    assert bug[0]["step"] and bug[0]["status"] in ("proven", "consistent")
    summary = next(c["summary"] for c in r.cases if c["case"] == "edge-e2m1-ties")
    assert summary.startswith("rowwise: cause known-bug: layout-nibble-swap: ") and summary.endswith("(+1 more cause)")
    assert r.text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>')
    # --require-all: the missing case fails too
    assert nvfp4kit.verify_suite(g, outs, require_all=True).counts == (9, 1, 1, 0)
    assert "failures=\"2\"" in nvfp4kit.verify_suite(g, outs, format="junit", require_all=True).text


def test_verify_suite_errors(planted, tmp_path):
    g, outs = planted
    with pytest.raises(nvfp4kit.Error, match="--actual-dir is not a folder"):
        nvfp4kit.verify_suite(g, str(tmp_path / "nowhere"))
    with pytest.raises(nvfp4kit.Error, match="no such suite folder or MANIFEST"):
        nvfp4kit.verify_suite(str(tmp_path / "nosuite"), outs)
    with pytest.raises(nvfp4kit.Error, match="holds a NUL character"):
        nvfp4kit.verify_suite(g + "\0x", outs)
    with pytest.raises(nvfp4kit.Error, match="bad format 'xml'"):
        nvfp4kit.verify_suite(g, outs, format="xml")
    empty = tmp_path / "empty"
    empty.mkdir()
    r = nvfp4kit.verify_suite(g, str(empty))
    assert r.verdict == 2 and r.message.endswith("holds no output for any case of %s" % g)


def test_mutation_report_is_the_clis(cli):
    text, verdict = nvfp4kit.mutation_report(suite="edge", recipe="te")
    p = cli("golden", "--mutants", "--suite", "edge", "--recipe", "te")
    assert (text, verdict) == (p.stdout.decode(), p.returncode)
    assert text.startswith("mutation report: recipe te, rounding rn, suite edge\n")


def test_grouped_suite_and_its_mutation_report_are_the_clis(tmp_path, cli):
    # the grouped (MoE) suite: 4 grouped bundles, the bytes the CLI writes; each golden verified against itself
    # matches, and its mutation report kills both grouped mutants (te: 3 of the 4 cases each, named proven)
    lines = nvfp4kit.golden_suite(str(tmp_path / "py"), suite="grouped", recipe="te")
    p = cli("golden", "--suite", "grouped", "--recipe", "te", "--out", tmp_path / "cli")
    py, c = tree(tmp_path / "py"), tree(tmp_path / "cli")
    assert p.returncode == 0 and sorted(py) == sorted(c) and all(py[k] == c[k] for k in c)
    assert sorted(k for k in py if k != "MANIFEST") == [
        "grouped-m0-17-0-k32.safetensors", "grouped-m1-2-3-4-k96.safetensors", "grouped-m33-1-k160.safetensors",
        "grouped-m5-0-130-k64.safetensors"]
    assert lines[-1] == "4 bundles (0 skipped) and MANIFEST in %s" % (tmp_path / "py")
    r = nvfp4kit.verify_suite(str(tmp_path / "py"), str(tmp_path / "py"))
    assert r.verdict == 0 and r.counts[0] == 4
    text, verdict = nvfp4kit.mutation_report(suite="grouped", recipe="te", json_output=True)
    j = json.loads(text)
    assert verdict == 0 and (j["killed"], j["surviving"], j["cases"]) == (2, 0, 4)
    assert [(m["mutant"], m["killing_cases"], m["cause"]) for m in j["mutants"]] == [
        ("grouped-shared-global-scale", 3, "grouped-shared-global-scale [proven]"),
        ("grouped-unpadded-segments", 3, "grouped-unpadded-segments [proven]")]
    with pytest.raises(nvfp4kit.Error, match="suite grouped is RN only"):
        nvfp4kit.golden_suite(str(tmp_path / "sr"), suite="grouped", recipe="te", rounding="sr")

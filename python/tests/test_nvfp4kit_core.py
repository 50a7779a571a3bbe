"""quantize / dequantize / bundles / recipes against the nvfp4 command's bytes,
hand-computed values, and bad input (an Error, never a crash)."""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

import nvfp4kit as nk
from conftest import REPO, rand, read_bytes

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None
from safetensors.numpy import load_file, save_file

CASES = [
    dict(),
    dict(columnwise=True),
    dict(rowwise=False, columnwise=True, rht=True),
    dict(columnwise=True, rht=True, rht_signs="seed:7"),
    dict(rounding="sr", seed=11, offset=3, columnwise=True),
    dict(block="16x16", columnwise=True),
    dict(recipe="torchao", rounding="sr", seed=2),
    dict(recipe="modelopt"),
    dict(recipe="te-pyref", columnwise=True),
    dict(recipe="exact"),
    dict(recipe="mxfp4-rceil", columnwise=True),
    dict(recipe="mxfp4-floor", rounding="sr", seed=5),
    dict(recipe="mxfp8"),
    dict(pad=True, columnwise=True),
]


def cli_args(o):
    a = []
    if "recipe" in o:
        a += ["--recipe", o["recipe"]]
    if o.get("block"):
        a += ["--block", o["block"]]
    if o.get("rounding"):
        a += ["--round", o["rounding"]]
    for k in ("seed", "offset"):
        if k in o:
            a += ["--" + k, o[k]]
    if o.get("rowwise", True):
        a.append("--rowwise")
    if o.get("columnwise"):
        a.append("--columnwise")
    if o.get("rht"):
        a.append("--rht")
    if "rht_signs" in o:
        a += ["--rht-signs", o["rht_signs"]]
    if o.get("pad"):
        a.append("--pad")
    return a


@pytest.mark.parametrize("opts", CASES, ids=[",".join("%s=%s" % kv for kv in c.items()) or "default" for c in CASES])
def test_bundle_bytes_equal_cli(tmp_path, cli, opts):
    shape = (40, 72) if opts.get("pad") else (64, 96)
    x = rand(*shape, seed=len(opts))
    x[3, 5] = 0.0
    x[7, 1:4] = [np.float32("-0.0"), 6.0, -1e-9]
    np.save(tmp_path / "x.npy", x)
    cli("quantize", tmp_path / "x.npy", "-o", tmp_path / "cli.safetensors", *cli_args(opts))
    q = nk.quantize(x, **opts)
    nk.save_bundle(q, tmp_path / "py.safetensors")
    assert read_bytes(tmp_path / "py.safetensors") == read_bytes(tmp_path / "cli.safetensors")
    # the arrays handed out are the bundle's components
    ref = load_file(str(tmp_path / "cli.safetensors"))
    for name, arr in q.components().items():
        assert arr.dtype == ref[name].dtype and np.array_equal(arr, ref[name]), name
    if q.row is not None:
        assert q.dequantize().tobytes() == ref["dequant"].tobytes()
        assert nk.dequantize(q).tobytes() == q.row.dequantize().tobytes()
    if q.col is not None:
        assert q.dequantize(columnwise=True).tobytes() == ref["dequant_t"].tobytes()


def test_cli_dequantize_equals(tmp_path, cli):
    x = rand(32, 64, seed=9)
    q = nk.quantize(x, recipe="torchao", columnwise=True)
    nk.save_bundle(q, tmp_path / "b.safetensors")
    cli("dequantize", tmp_path / "b.safetensors", "-o", tmp_path / "d.npy")
    cli("dequantize", tmp_path / "b.safetensors", "-o", tmp_path / "dt.npy", "--columnwise")
    assert np.load(tmp_path / "d.npy").tobytes() == q.dequantize().tobytes()
    assert np.load(tmp_path / "dt.npy").tobytes() == q.dequantize(columnwise=True).tobytes()


@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes not installed")
def test_bf16_input(tmp_path, cli):
    x = rand(32, 48, seed=4).astype(ml_dtypes.bfloat16)
    np.save(tmp_path / "x.npy", x.view(np.uint16))  # '<u2' holding bf16 bits, as the CLI reads it
    cli("quantize", tmp_path / "x.npy", "-o", tmp_path / "cli.safetensors", "--rowwise", "--columnwise", "--rht")
    q = nk.quantize(x, columnwise=True, rht=True)
    nk.save_bundle(q, tmp_path / "py.safetensors")
    assert read_bytes(tmp_path / "py.safetensors") == read_bytes(tmp_path / "cli.safetensors")


def test_hand_computed_block():
    # amax 6: te's S_enc = 448*6/6 = 448, the block scale e4m3(6/6*448) = 448 = 0x7E; 6 -> code 0x7 (value
    # 6), -3 -> 0xD (sign 8 | index 5 of {0,.5,1,1.5,2,3,4,6}), 0.25 (the 0/0.5 midpoint) ties to even 0x0,
    # 0.75 (the 0.5/1 midpoint) ties to even 0x2 (1.0), -0.0 keeps its sign (0x8)
    x = np.zeros((1, 16), dtype=np.float32)
    x[0, :6] = [6.0, -3.0, 0.25, 0.75, np.float32("-0.0"), 1.5]
    q = nk.quantize(x)
    assert q.row.data.shape == (1, 8) and q.row.scale.shape == (1, 1)
    assert list(q.row.data[0, :3]) == [0xD7, 0x20, 0x38]
    assert q.row.scale[0, 0] == 0x7E and q.row.amax[0] == np.float32(6.0)
    assert q.row.scale_swizzled.shape == (128, 4) and q.row.scale_swizzled[0, 0] == 0x7E
    assert int(q.row.scale_swizzled.sum()) == 0x7E  # every padding byte is zero
    d = q.dequantize()
    assert list(d[0, :6]) == [6.0, -3.0, 0.0, 1.0, 0.0, 1.5] and np.signbit(d[0, 4])


def test_ue5m3_recipes_by_name(tmp_path, cli):
    # te-ue5m3 (prototype): amax 688128 gives S_enc = 688128/688128 = 1; block 0 {688128}: 688128 * fl(1/6)
    # rounds to 114688 = 0xFE; block 1 {1, 0.5}: fl(1/6) lies between UE5M3 0x62 (0.15625) and 0x63
    # (0.171875), nearer 0x63; 1 * 1/0.171875 = 5.8 -> 6 (code 7), 0.5 -> 2.9 -> 3 (code 5): byte 0x57.
    # te-ue5m3-1level has no amax (S_enc = 1 always): the same bytes here, amax None.
    x = np.zeros((1, 32), dtype=np.float32)
    x[0, 0], x[0, 16], x[0, 17] = 688128.0, 1.0, 0.5
    q = nk.quantize(x, recipe="te-ue5m3")
    assert list(q.row.scale[0]) == [0xFE, 0x63] and q.row.amax[0] == np.float32(688128.0)
    assert q.row.data[0, 0] == 0x07 and q.row.data[0, 8] == 0x57
    assert list(q.dequantize()[0, 16:18]) == [6 * 0.171875, 3 * 0.171875]
    q1 = nk.quantize(x, recipe="te-ue5m3-1level")
    assert list(q1.row.scale[0]) == [0xFE, 0x63] and q1.row.amax is None
    pytest.importorskip("torch")
    with pytest.raises(nk.Error, match="UE5M3"):
        q.row.scale_e4m3()  # torch has no UE5M3 dtype: no silent E4M3 view
    info = {r["name"]: r for r in nk.recipes()}
    assert info["te-ue5m3"]["scales"] == "ue5m3" and not info["te-ue5m3-1level"]["global_amax"]
    np.save(tmp_path / "x.npy", x)
    cli("quantize", tmp_path / "x.npy", "-o", tmp_path / "cli.safetensors", "--recipe", "te-ue5m3")
    nk.save_bundle(q, tmp_path / "py.safetensors")
    assert read_bytes(tmp_path / "py.safetensors") == read_bytes(tmp_path / "cli.safetensors")


def test_reference_suite_verifies(tmp_path, cli):
    """Every committed golden: Python re-quantizes its x with its options and gets the bundle's bytes;
    verify through Python gives nvfp4 verify's verdict and text, byte for byte, on the exact output and on
    the output with one flipped nibble (a MISMATCH, whose decoded record both print)."""
    paths = sorted(glob.glob(os.path.join(REPO, "reference", "*", "*.safetensors")))
    assert len(paths) >= 100
    for p in paths:
        b = nk.load_bundle(p)
        o = b.options
        q = nk.quantize(b.x, recipe=o["recipe"], block=o["block"], rounding=o["rounding"], seed=o["seed"],
                        offset=o["offset"], rowwise=o["rowwise"], columnwise=o["columnwise"], rht=o["rht"],
                        rht_signs=o["rht_signs"], pad=o["pad"], rht_fp32=o["rht_fp32"])
        for name, arr in q.components().items():
            assert arr.tobytes() == b.components()[name].tobytes(), (p, name)
        comps = dict(q.components())
        if q.row is not None:
            comps["dequant"] = q.dequantize()
        assert nk.verify(p, comps).ok, p
        nk.save_bundle(q, tmp_path / "a.safetensors")
        bad = dict(comps)
        dname = "data" if q.row is not None else "data_t"
        bad[dname] = comps[dname].copy()
        bad[dname][0, 0] ^= 0x01
        nk.save_bundle(q, tmp_path / "bad.safetensors")  # same components, then the flipped nibble
        t = load_file(str(tmp_path / "bad.safetensors"))
        t[dname] = bad[dname]
        save_file(t, str(tmp_path / "bad.safetensors"))
        for actual, want_ok in (("a.safetensors", True), ("bad.safetensors", False)):
            a = str(tmp_path / actual)
            rep = nk.verify(p, a)
            out = cli("verify", "--expected", p, "--actual", a)
            assert (rep.ok, out.returncode) == (want_ok, 0 if want_ok else 1), (p, actual)
            assert str(rep) == out.stdout.decode(), (p, actual)
        assert not nk.verify(p, bad).ok, p


def test_load_save_roundtrip(tmp_path):
    p = os.path.join(REPO, "reference", "te-sr", "shapes-128x80-1x16.safetensors")
    b = nk.load_bundle(p)
    nk.save_bundle(b, tmp_path / "r.safetensors")
    nk.save_bundle(b, tmp_path / "npydir")  # a folder of .npy files plus meta.json
    assert load_file(str(tmp_path / "r.safetensors")).keys() == load_file(p).keys()
    for k, v in load_file(p).items():
        assert np.array_equal(load_file(str(tmp_path / "r.safetensors"))[k], v), k
    b2 = nk.load_bundle(tmp_path / "npydir")
    assert np.array_equal(b2.row.data, b.row.data) and np.array_equal(b2.row.scale, b.row.scale)


def test_non_contiguous_and_big_endian_inputs():
    x = rand(64, 128, seed=3)
    ref = nk.quantize(np.ascontiguousarray(x[:, ::2]))
    assert np.array_equal(nk.quantize(x[:, ::2]).row.data, ref.row.data)
    assert np.array_equal(nk.quantize(x.astype(">f4")).row.data, nk.quantize(x).row.data)


def test_recipes_list(cli):
    names = [r["name"] for r in nk.recipes()]
    table = cli("table", "--recipes").stdout.decode().splitlines()[1:]
    assert names == [l.split()[0] for l in table if l and not l.startswith(" ")]
    te = nk.recipes()[0]
    assert te["name"] == "te" and te["scales"] == "e4m3" and te["global_amax"] and te["sr"]


def test_explain_identify_gemm_srtest_equal_cli(tmp_path, cli):
    assert nk.explain(1.75, rounding="sr") == cli("explain", "--format", "e2m1", "--round", "sr", "--",
                                                 "1.75").stdout.decode()
    assert "0x7E" in nk.explain(448.0, fmt="e4m3")
    x = rand(32, 64, seed=12)
    k = nk.quantize(x, recipe="torchao-0.13-0.16", block="16x16")
    ident = nk.identify(x, k.components(), top=3)
    assert ident.ok and "16x16" in ident.best
    a, b = nk.quantize(rand(16, 64, seed=1)), nk.quantize(rand(8, 64, seed=2))
    nk.save_bundle(a, tmp_path / "a.safetensors")
    nk.save_bundle(b, tmp_path / "b.safetensors")
    cli("gemm", "--a", tmp_path / "a.safetensors", "--b", tmp_path / "b.safetensors", "-o", tmp_path / "d.npy")
    d = np.load(tmp_path / "d.npy")  # the te order: within the bound
    g = nk.gemm_check(a, b, d)
    assert g.ok, str(g)
    assert str(g) == cli("gemm-check", "--a", tmp_path / "a.safetensors", "--b", tmp_path / "b.safetensors",
                         "--actual", tmp_path / "d.npy", "--alpha", "1.0", "--errors", 10).stdout.decode()
    bad = d.copy()
    bad[0, 0] += 1.0
    assert not nk.gemm_check(a, b, bad).ok
    samples = [nk.quantize(x, rounding="sr", seed=5, offset=i) for i in range(4)]
    sr = nk.sr_test(x, samples, bitexact=True, seed=5, offset=0)
    assert sr.ok, str(sr)
    for i, s in enumerate(samples):
        nk.save_bundle(s, tmp_path / ("s%d.safetensors" % i))
    np.save(tmp_path / "x.npy", x)
    out = cli("sr-test", "--input", tmp_path / "x.npy", "--samples",
              *[tmp_path / ("s%d.safetensors" % i) for i in range(4)], "--bitexact", "--seed", 5, "--offset", 0)
    assert out.returncode == 0
    # the same samples, an SR kernel that ignores its offsets: every sample identical -> the test rejects
    same = [samples[0]] * 4
    assert not nk.sr_test(x, same, bitexact=True, seed=5, offset=0).ok


def test_sr_test_rule_and_cause_status():
    """SRReport.rule is the rule sr-test names; a cause is proven only on an event of probability 0."""
    x = rand(32, 64, seed=12)
    samples = [nk.quantize(x, rounding="sr", seed=5, offset=i) for i in range(8)]
    fair = nk.sr_test(x, samples)
    assert fair.ok and fair.rule == "contract" and fair.causes == [], str(fair)
    # the same bytes every call: no randomness, a statistical finding (consistent)
    same = nk.sr_test(x, [samples[0]] * 8)
    assert not same.ok and same.rule == "deterministic", str(same)
    assert same.causes[0]["cause"] == "sr-dependent" and same.causes[0]["step"] == "element-rounding"
    assert same.causes[0]["status"] == "consistent"
    # one code moved four magnitudes away: no rounding of its y gives it (probability 0): proven
    bad = dict(samples[0].components())
    d = bad["data"].copy()
    q = int(d.flat[0]) & 15
    d.flat[0] = (int(d.flat[0]) & 0xF0) | (q & 8) | ((q + 4) & 7)
    bad["data"] = d
    rep = nk.sr_test(x, [bad] + samples[1:])
    assert not rep.ok and rep.rule == "biased", str(rep)
    c = rep.causes[0]
    assert c["cause"] == "biased-sr" and c["step"] == "element-rounding" and c["status"] == "proven", c
    assert c["evidence"].startswith("sample 1 element 0: code 0x%X is neither" % ((q & 8) | ((q + 4) & 7))), c
    assert rep.rule == rep.json["rule"] and rep["invalid"] == 1


BAD_INPUTS = [
    (lambda: np.zeros(32, np.float32), "2-D"),
    (lambda: np.zeros((2, 16, 16), np.float32), "2-D"),
    (lambda: np.zeros((16, 16), np.float64), "float64"),
    (lambda: np.zeros((16, 16), np.int32), "int32"),
    (lambda: [[1.0] * 16], "numpy array"),
    (lambda: np.zeros((0, 16), np.float32), ""),
    (lambda: np.zeros((16, 17), np.float32), ""),
    (lambda: np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(1 << 30, 1 << 30), strides=(0, 0)),
     "large"),
]


@pytest.mark.parametrize("make,words", BAD_INPUTS)
def test_bad_input_raises_error(make, words):
    with pytest.raises(nk.Error) as e:
        nk.quantize(make())
    assert isinstance(e.value, ValueError) and words in str(e.value) and str(e.value)


@pytest.mark.parametrize("opts,words", [
    (dict(recipe="nope"), "unknown recipe"),
    (dict(block="8x8"), "block"),
    (dict(rounding="up"), "rounding"),
    (dict(recipe="exact", rounding="sr"), ""),
    (dict(rht=True), ""),
    (dict(seed=-1), "seed"),
    (dict(offset=1 << 64), "offset"),
    (dict(rht_signs="seed:x"), "rht_signs"),
    (dict(rowwise=False), "nothing"),
    (dict(block="16x16", columnwise=True), ""),  # 40 rows: not a multiple of 16
])
def test_bad_options_raise_error(opts, words):
    with pytest.raises(nk.Error) as e:
        nk.quantize(rand(40, 64), **opts)
    assert words in str(e.value) and str(e.value)


def test_library_messages_pass_through(tmp_path):
    with pytest.raises(nk.Error, match="16"):
        nk.quantize(np.zeros((16, 17), np.float32))
    with pytest.raises(nk.Error, match="missing.safetensors"):
        nk.load_bundle(tmp_path / "missing.safetensors")
    (tmp_path / "junk.safetensors").write_bytes(b"\xff" * 40)
    with pytest.raises(nk.Error, match="junk.safetensors"):
        nk.load_bundle(tmp_path / "junk.safetensors")
    with pytest.raises(nk.Error, match="junk.safetensors"):
        nk.verify(tmp_path / "junk.safetensors", {"data": np.zeros(4, np.uint8)})
    q = nk.quantize(rand(16, 32))
    with pytest.raises(nk.Error, match="int32"):
        nk.verify(q, {"data": np.zeros(4, np.int32)})
    with pytest.raises(nk.Error, match="x is"):
        nk.save_bundle(q, tmp_path / "b.safetensors", x=rand(16, 48))
    with pytest.raises(nk.Error):
        nk.save_bundle(q, tmp_path / "no-such-folder" / "b.safetensors")
    assert not (tmp_path / "no-such-folder").exists()
    with pytest.raises(nk.Error):
        nk.dequantize("not a quantization")
    with pytest.raises(nk.Error):
        nk.explain("1.5")


def test_import_needs_only_numpy():
    code = ("import sys; sys.modules['torch'] = None; sys.modules['ml_dtypes'] = None; sys.modules['safetensors'] = None\n"
            "import numpy as np, nvfp4kit\n"
            "q = nvfp4kit.quantize(np.ones((16, 16), np.float32)); print(hex(q.row.data[0, 0]))")
    p = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().strip() == "0x77"  # a block of ones: every element is its block amax, scaled to 6 = code 0x7


def test_installed_package_is_under_test():
    site = os.environ.get("NVFP4KIT_SITE")
    if site:
        assert os.path.realpath(nk.__file__).startswith(os.path.realpath(site))
        assert os.path.isfile(os.path.join(os.path.dirname(nk.__file__), "_native", "libnvfp4.so"))


def test_structured_causes_and_chain(tmp_path, cli):
    """verify's causes carry step / status / evidence / alternatives, identify
    its chain, gemm-check its causes, as the CLI's --json and text do."""
    x = rand(64, 64, seed=21)
    golden = nk.quantize(x)
    out = golden.components()
    out["data"] = ((out["data"] >> 4) | (out["data"] << 4)).astype(np.uint8)   # nibbles the wrong way round
    rep = nk.verify(golden, out)
    known = [c for c in rep.cause_details if c["cause"] == "known-bug"]
    assert known and known[0]["line"].startswith("layout-nibble-swap:")
    assert known[0]["step"] == "layout" and known[0]["status"] == "proven" and known[0]["alternatives"] == []
    assert "the only one of" in known[0]["evidence"]
    pattern = [c for c in rep.cause_details if c["cause"] == "swapped-nibbles"]
    assert pattern and pattern[0]["status"] == "consistent" and pattern[0]["orientation"] == "rowwise"
    ident = nk.identify(x, out, top=3)
    assert ident.ok and ident.chain["exact"] and ident.chain["deviations"] == ["layout-nibble-swap"]
    steps = {s["step"]: s["status"] for s in ident.chain["steps"]}
    assert steps["layout"] == "proven"
    # a D of the te values rounded to bf16: gemm-check names the cause
    a, b = nk.quantize(rand(16, 64, seed=1)), nk.quantize(rand(8, 64, seed=2))
    nk.save_bundle(a, tmp_path / "a.safetensors")
    nk.save_bundle(b, tmp_path / "b.safetensors")
    cli("gemm", "--a", tmp_path / "a.safetensors", "--b", tmp_path / "b.safetensors", "-o", tmp_path / "d.npy")
    d = np.load(tmp_path / "d.npy").astype(np.float32)
    bf = ((d.view(np.uint32) + np.uint32(0x8000)) & np.uint32(0xFFFF0000)).view(np.float32)
    g = nk.gemm_check(a, b, bf)
    assert not g.ok and "cause bf16-output:" in str(g)


def test_global_scale_read_back_from_the_scales():
    """Scale bytes 8 codes down (every E4M3 scale halved, as a kernel with half te's S_enc writes them): verify
    reads S_enc back from them (Report.global_scale) and proves that te's own S_enc cannot have given them."""
    x = rand(64, 64, seed=5)
    golden = nk.quantize(x)
    out = golden.components()
    s = out["scale"].astype(np.int32)
    assert s.min() >= 0x40  # normal E4M3 values: one binade down is exact
    out["scale"] = (s - 8).astype(np.uint8)
    del out["scale_swizzled"]
    rep = nk.verify(golden, out)
    g = rep.global_scale["rowwise"]
    senc = np.float32(2688.0) / np.float32(out["amax"].reshape(-1)[0])
    assert g["parameter"] == "S_enc" and not g["empty"]
    assert g["expected"] == float(senc)
    assert g["lo"] <= float(senc) / 2 <= g["hi"] and g["hi"] < float(senc)
    cause = [c for c in rep.cause_details if c["cause"] == "global-scale"]
    assert cause and cause[0]["status"] == "proven" and cause[0]["step"] == "global-scale"
    assert "outside" in cause[0]["line"]


def test_per_token_scale_of_flashinfer_pertoken():
    """flashinfer-pertoken's per-token factor (FlashInfer's FP32 [M] scale): a row of amax 6 gets
    1/S_enc = fl(1/448) = 0x3B124925, a zero row 0; it is a bundle component verify compares, and recipes
    without one have none."""
    x = np.zeros((2, 32), np.float32)
    x[0, :16] = np.linspace(-6, 6, 16, dtype=np.float32)
    q = nk.quantize(x, recipe="flashinfer-pertoken")
    p = q.row.per_token_scale
    assert p.dtype == np.float32 and [int(v) for v in p.view(np.uint32)] == [0x3B124925, 0]
    comps = q.components()
    assert comps["per_token_scale"].tobytes() == p.tobytes()
    assert nk.verify(q, comps).ok
    bad = dict(comps, per_token_scale=np.array([p[0] * 2, 0], np.float32))
    assert not nk.verify(q, bad).ok
    assert nk.quantize(x).row.per_token_scale is None

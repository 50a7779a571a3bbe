"""Inputs a hostile user hands the package: every bad argument is an
nvfp4kit.Error naming it (never a raw TypeError, OverflowError, IndexError or
UnicodeEncodeError, never a C name cut at a NUL); a row-scaled result verifies
against itself; an input changed after quantize is never saved beside the old
codes; bundles whose codes and scales are typed F4 / F8_E4M3 load; the torch
cases (sparse, meta, expanded tensors, NVFP4Linear on empty batches) are in
the second half, skipped without torch."""
import json
import struct

import numpy as np
import pytest

import nvfp4kit as nk
from conftest import rand, read_bytes


# ---- results: row-scaled amax, inputs changed after quantize ---------------------------------------------------

def test_rowscaled_result_verifies_against_itself(tmp_path, cli):
    x = rand(32, 64, seed=5)
    q = nk.quantize(x, recipe="te-rowscaled")
    assert q.row.amax.shape == (32,)  # one per stored row, as the bundle holds
    assert np.array_equal(q.row.amax, np.abs(x).max(axis=1))  # each row's own amax (no rounding in a max)
    rep = nk.verify(q, q)
    assert rep.ok, str(rep)
    np.save(tmp_path / "x.npy", x)
    cli("quantize", tmp_path / "x.npy", "--recipe", "te-rowscaled", "-o", tmp_path / "cli.safetensors")
    assert nk.verify(tmp_path / "cli.safetensors", q).ok
    nk.save_bundle(q, tmp_path / "py.safetensors")
    assert read_bytes(tmp_path / "py.safetensors") == read_bytes(tmp_path / "cli.safetensors")


def test_input_changed_after_quantize_is_not_saved(tmp_path):
    x = rand(32, 64, seed=6)
    keep = x.copy()
    q = nk.quantize(x)  # x is read in place: q refers to it
    x[3, 5] = 100.0     # the caller reuses the buffer
    with pytest.raises(nk.Error, match="changed after quantize"):
        nk.save_bundle(q, tmp_path / "b.safetensors")
    assert not (tmp_path / "b.safetensors").exists()
    with pytest.raises(nk.Error, match="changed after quantize"):
        nk.verify(q, q.components())
    with pytest.raises(nk.Error, match="not the input"):
        nk.save_bundle(q, tmp_path / "b.safetensors", x=x)
    nk.save_bundle(q, tmp_path / "b.safetensors", x=keep)  # the original input: saved
    b = nk.load_bundle(tmp_path / "b.safetensors")
    assert np.array_equal(b.x, keep) and np.array_equal(b.row.data, q.row.data)
    x[:] = keep          # restored: the bytes are those of the codes again
    nk.save_bundle(q, tmp_path / "c.safetensors")
    assert read_bytes(tmp_path / "c.safetensors") == read_bytes(tmp_path / "b.safetensors")


def test_loaded_input_is_read_only(tmp_path):
    nk.save_bundle(nk.quantize(rand(16, 32, seed=7)), tmp_path / "b.safetensors")
    b = nk.load_bundle(tmp_path / "b.safetensors")
    with pytest.raises(ValueError, match="read-only"):
        b.x[0, 0] = 1.0


def _retype(src, dst, changes):
    """Copies a safetensors file, changing the dtype and shape of some tensors in its header (same bytes)."""
    raw = read_bytes(src)
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    for name, (dtype, shape) in changes.items():
        hdr[name]["dtype"], hdr[name]["shape"] = dtype, shape
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + raw[8 + n:])


def test_bundle_with_f4_data_and_f8_scales_loads(tmp_path, cli):
    x = rand(32, 64, seed=8)
    q = nk.quantize(x, columnwise=True)
    nk.save_bundle(q, tmp_path / "u8.safetensors")
    _retype(tmp_path / "u8.safetensors", tmp_path / "typed.safetensors",
            {"data": ("F4", [32, 64]), "scale": ("F8_E4M3", [32, 4]), "data_t": ("F4", [64, 32]),
             "scale_t": ("F8_E4M3", [64, 2])})
    assert cli("verify", "--expected", tmp_path / "typed.safetensors", "--actual",
               tmp_path / "u8.safetensors").returncode == 0  # the CLI reads it
    b = nk.load_bundle(tmp_path / "typed.safetensors")  # raised IndexError
    for name, v in q.components().items():
        assert b.components()[name].tobytes() == v.tobytes(), name
    assert b.row.data.dtype == np.uint8 and b.row.data.shape == (32, 32)


# ---- bad arguments: an Error naming them ----------------------------------------------------------------------

X = rand(32, 64, seed=9)


@pytest.mark.parametrize("call,words", [
    (lambda: nk.quantize(X, recipe=5), "recipe must be a name"),
    (lambda: nk.quantize(X, recipe=b"te"), "recipe must be a name"),
    (lambda: nk.quantize(X, recipe="te\0junk"), "NUL"),           # was quantized as "te"
    (lambda: nk.quantize(X, recipe="\udcff"), "not valid text"),  # was UnicodeEncodeError
    (lambda: nk.quantize(X, block="1x16\0"), "NUL"),
    (lambda: nk.quantize(X, block="\udcff"), "not valid text"),
    (lambda: nk.quantize(X, rounding="rn\0x"), "NUL"),            # was accepted as rn
    (lambda: nk.quantize(X, rht_signs="seed:\u0661\u0662"), "rht_signs"),  # Arabic-Indic digits: not a seed
    (lambda: nk.quantize(X, seed=1 << 5000), "seed must be an integer from 0 to 2^64-1, got an integer of 5001 bits"),
    (lambda: nk.verify(nk.quantize(X), {}, component="data\0"), "NUL"),
    (lambda: nk.verify(nk.quantize(X), {"\udcff": np.zeros(1, np.uint8)}), "component name"),
    (lambda: nk.verify(nk.quantize(X), {"data\0x": np.zeros(1, np.uint8)}), "NUL"),
    (lambda: nk.verify(nk.quantize(X), nk.quantize(X), errors=1 << 70), "errors must be an integer"),
    (lambda: nk.load_bundle("b.safetensors\0junk"), "NUL"),
    (lambda: nk.explain(10 ** 400), "too large for a double"),   # was OverflowError
    (lambda: nk.explain(1.0, fmt="e2m1\0"), "NUL"),
    (lambda: nk.sr_test(X, [nk.quantize(X)] * 2, alpha=10 ** 400), "too large for a double"),
    (lambda: nk.gemm_check(nk.quantize(X), nk.quantize(X), np.zeros((32, 32), np.float32), alpha=10 ** 400),
     "too large for a double"),
    (lambda: nk.gemm_check(nk.quantize(X), nk.quantize(X), np.zeros((32, 32), np.float32), alpha=1e300),
     "float32"),   # was stored in a C float as inf
    (lambda: nk.gemm_check(nk.quantize(X), nk.quantize(X), np.zeros((32, 32), np.float32), errors=1 << 64),
     "errors must be an integer"),   # was stored modulo 2^64 (0)
    (lambda: nk.identify(X, nk.quantize(X).components(), top=1 << 64), "top must be an integer"),  # was 0
])
def test_bad_argument_is_an_error(call, words):
    with pytest.raises(nk.Error) as e:
        call()
    assert words in str(e.value), str(e.value)


def test_nul_path_writes_nothing(tmp_path):
    with pytest.raises(nk.Error, match="NUL"):
        nk.save_bundle(nk.quantize(X), str(tmp_path / "a\0b.safetensors"))
    assert list(tmp_path.iterdir()) == []  # it wrote tmp_path/a before


def test_explain_beyond_float32_is_inf_without_warning():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "fp32 value  inf" in nk.explain(1e300)


# ---- torch ---------------------------------------------------------------------------------------------------

def _torch():
    return pytest.importorskip("torch")


@pytest.mark.parametrize("make,words", [
    (lambda t: t.zeros(32, 64).to_sparse(), "layout sparse_coo"),   # was RuntimeError
    (lambda t: t.zeros(32, 64).to_sparse_csr(), "layout sparse_csr"),
    (lambda t: t.empty(32, 64, device="meta"), "meta tensor"),      # was NotImplementedError
    (lambda t: t.zeros(1, 1).expand(1 << 31, 1 << 31), "cannot be copied"),  # was RuntimeError
])
def test_torch_tensors_without_plain_storage(make, words):
    torch = _torch()
    with pytest.raises(nk.Error, match=words):
        nk.quantize(make(torch))
    with pytest.raises(nk.Error, match="component 'data'"):
        nk.verify(nk.quantize(X), {"data": make(torch)})


def test_torch_expanded_tensor_is_copied():
    torch = _torch()
    row = torch.from_numpy(rand(1, 64, seed=10))
    x = row.expand(32, 64)  # stride 0 over the rows
    assert x.stride() == (0, 1)
    q = nk.quantize(x)
    assert np.array_equal(q.row.data.numpy(), nk.quantize(np.repeat(row.numpy(), 32, axis=0)).row.data)
    assert nk.verify(q, {"data": q.row.data[:1].expand(32, 32)}).ok  # every row is the same: the same bytes


def test_fake_quantize_numpy():
    _torch()
    from nvfp4kit.torch import fake_quantize
    x = rand(32, 64, seed=11)
    y = fake_quantize(x)  # was AttributeError: 'numpy.ndarray' object has no attribute 'detach'
    assert isinstance(y, np.ndarray) and np.array_equal(y, nk.quantize(x).dequantize())


@pytest.mark.parametrize("bad,words", [
    (dict(layer_id=1.7), "layer_id must be an integer"),   # was taken as 1
    (dict(layer_id="3"), "layer_id must be an integer"),
    (dict(layer_id=True), "layer_id must be an integer"),
    (dict(layer_id=1 << 16), "layer_id must be an integer from 0 to 65535"),  # failed at the first forward
    (dict(recipe=5), "recipe must be a name"),             # failed at the first forward
    (dict(recipe="nope"), "unknown recipe"),
    (dict(config=5), "config must be a dict"),             # was AttributeError
])
def test_nvfp4linear_bad_arguments(bad, words):
    _torch()
    from nvfp4kit.torch import NVFP4Linear
    with pytest.raises(nk.Error, match=words):
        NVFP4Linear(64, 32, **bad)


def test_sr_offset_bad_arguments():
    _torch()
    from nvfp4kit.torch import sr_offset
    for args in ((1.5, 0, 0, 0), ("a", 0, 0, 0), (0, 0, 3, 0), (1 << 40, 0, 0, 0)):
        with pytest.raises(nk.Error):
            sr_offset(*args)


@pytest.mark.parametrize("n,k,m", [(0, 64, 32), (5, 0, 32), (5, 64, 0), (0, 0, 0)])
def test_nvfp4linear_empty_gemms_match_nn_linear(n, k, m):
    torch = _torch()
    from nvfp4kit.torch import NVFP4Linear
    torch.manual_seed(0)
    ref = torch.nn.Linear(k, m)
    lin = NVFP4Linear.from_linear(ref)
    x = torch.zeros(n, k, requires_grad=True)
    xr = torch.zeros(n, k, requires_grad=True)
    y, yr = lin(x), ref(xr)  # raised "empty tensor (0 x 64)"
    assert y.shape == yr.shape == (n, m) and torch.equal(y, yr)  # the bias alone, or nothing
    (y.sum() + 0.0).backward()
    yr.sum().backward()
    assert torch.equal(x.grad, xr.grad) and x.grad.shape == (n, k)
    assert torch.equal(lin.weight.grad, ref.weight.grad)
    assert torch.equal(lin.bias.grad, ref.bias.grad)
    y3 = lin(torch.zeros(2, n, k))  # a batch of 2 x n tokens
    assert y3.shape == (2, n, m)

"""torch interop (skipped without torch): tensors in and out, dtype views,
verify over torch dtypes, fake_quantize against the CLI, NVFP4Linear's
GEMMs against CLI-quantized operands, and a training run reproduced to the bit."""
import numpy as np
import pytest

import nvfp4kit as nk
from conftest import rand

torch = pytest.importorskip("torch")
from nvfp4kit.torch import DEFAULT_CONFIG, NVFP4Linear, fake_quantize, parse_config, sr_offset  # noqa: E402


def cli_deq(cli, tmp_path, x, *opts, columnwise=False):
    """`nvfp4 quantize` + `nvfp4 dequantize` of a float32 array: the CLI's fake quantization."""
    np.save(tmp_path / "in.npy", np.ascontiguousarray(x, dtype=np.float32))
    cli("quantize", tmp_path / "in.npy", "-o", tmp_path / "q.safetensors", "--pad", *opts)
    cli("dequantize", tmp_path / "q.safetensors", "-o", tmp_path / "d.npy", *(["--columnwise"] if columnwise else []))
    return torch.from_numpy(np.load(tmp_path / "d.npy"))


def test_torch_in_torch_out_same_bytes():
    x = rand(32, 64, seed=1)
    qn = nk.quantize(x, columnwise=True, rht=True)
    qt = nk.quantize(torch.from_numpy(x), columnwise=True, rht=True)
    for name, t in qt.components().items():
        assert isinstance(t, torch.Tensor) and t.numpy().tobytes() == qn.components()[name].tobytes(), name
    assert qt.row.data_fp4x2().dtype == torch.float4_e2m1fn_x2
    assert qt.row.data_fp4x2().view(torch.uint8).numpy().tobytes() == qn.row.data.tobytes()
    assert qt.col.scale_e4m3().dtype == torch.float8_e4m3fn
    # the E4M3 view decodes (torch's own decoder) to the scale values
    assert qt.row.scale_e4m3()[0, 0].item() == float(torch.tensor([qn.row.scale[0, 0]], dtype=torch.uint8)
                                                   .view(torch.float8_e4m3fn).float())
    mx = nk.quantize(torch.from_numpy(x), recipe="mxfp4-rceil")
    assert mx.row.scale_e4m3().dtype == torch.float8_e8m0fnu and mx.row.amax is None


def test_torch_bf16_and_non_contiguous():
    x = torch.from_numpy(rand(32, 64, seed=2))
    xb = x.bfloat16()
    import ml_dtypes
    ref = nk.quantize(xb.float().numpy().astype(ml_dtypes.bfloat16))
    assert np.array_equal(nk.quantize(xb).row.data.numpy(), ref.row.data)
    xt = x.t()  # non-contiguous: copied once
    assert np.array_equal(nk.quantize(xt).row.data.numpy(), nk.quantize(xt.contiguous()).row.data.numpy())


@pytest.mark.parametrize("bad,words", [
    (lambda: torch.zeros(16, 16, dtype=torch.float16), "float16"),
    (lambda: torch.zeros(16, 16, dtype=torch.int32), "int32"),
    (lambda: torch.zeros(16), "2-D"),
    (lambda: torch.zeros(2, 16, 16), "2-D"),
])
def test_torch_bad_input(bad, words):
    with pytest.raises(nk.Error, match=words):
        nk.quantize(bad())


def test_verify_accepts_torch_dtypes(tmp_path):
    x = rand(32, 64, seed=3)
    golden = nk.quantize(x, columnwise=True)
    nk.save_bundle(golden, tmp_path / "g.safetensors")
    k = nk.quantize(torch.from_numpy(x), columnwise=True)
    actual = {"data": k.row.data_fp4x2(), "scale": k.row.scale_e4m3(), "amax": k.row.amax,
              "dequant": k.dequantize().bfloat16().float(),  # exact widening of what a bf16 kernel stores
              "data_t": k.col.data.view(torch.int8), "scale_t_swizzled": k.col.scale_swizzled}
    rep = nk.verify(tmp_path / "g.safetensors", {n: v for n, v in actual.items() if n != "dequant"})
    assert rep.ok, str(rep)
    # a dequant stored in bf16 is compared with the golden one rounded to bf16 (as `nvfp4 verify` compares a
    # BF16 file): it matches; one element one bf16 ulp off is exactly one mismatch
    db = k.dequantize().bfloat16()
    rep = nk.verify(golden, {"dequant": db})
    assert rep.ok and rep.components["dequant"]["mismatches"] == 0 and rep.components["dequant"]["compared"] == 2048
    db = db.clone()
    db.view(torch.int16)[1, 2] += 1
    rep = nk.verify(golden, {"dequant": db})
    assert not rep.ok and rep.components["dequant"]["mismatches"] == 1
    assert rep.mismatches[0]["component"] == "dequant" and rep.mismatches[0]["index"] == 64 + 2
    # one flipped nibble: exactly one data mismatch, decoded
    bad = k.row.data.clone()
    bad[0, 0] ^= 0x01
    rep = nk.verify(golden, {"data": bad})
    assert not rep.ok and rep.components["data"]["mismatches"] == 1
    m = rep.mismatches[0]
    assert m["component"] == "data" and m["index"] == 0 and m["expected_code"] ^ m["actual_code"] == 1
    with pytest.raises(AssertionError, match="MISMATCH"):
        nk.testing.assert_quantized_equal({"data": bad}, golden)
    nk.testing.assert_quantized_equal(k, golden)


def test_swapped_nibbles_cause_comes_first():
    x = rand(32, 64, seed=5)
    golden = nk.quantize(x)
    d = golden.row.data
    swapped = ((d >> 4) | (d << 4)).astype(np.uint8)
    with pytest.raises(AssertionError) as e:
        nk.testing.assert_quantized_equal({"data": swapped, "scale": golden.row.scale}, golden)
    assert str(e.value).startswith("cause swapped-nibbles")


@pytest.mark.parametrize("opts,cli_opts", [
    (dict(), []),
    (dict(recipe="torchao", rounding="sr", seed=4, offset=9), ["--recipe", "torchao", "--round", "sr", "--seed", 4,
                                                               "--offset", 9]),
    (dict(block="16x16"), ["--block", "16x16"]),
    (dict(recipe="mxfp4-rceil"), ["--recipe", "mxfp4-rceil"]),
])
def test_fake_quantize_equals_cli(tmp_path, cli, opts, cli_opts):
    x = torch.from_numpy(rand(48, 64, seed=6))
    got = fake_quantize(x, **opts)
    want = cli_deq(cli, tmp_path, x.numpy(), *cli_opts)
    assert got.dtype == torch.float32 and got.numpy().tobytes() == want.numpy().tobytes()


def test_config_strings():
    assert parse_config("fp32") is None
    assert parse_config("nvfp4/16x16") == {"recipe": "te", "block": "16x16", "rounding": "rn", "rht": False}
    assert parse_config("nvfp4/1x16/sr/rht16", "torchao")["recipe"] == "torchao"
    assert parse_config("mxfp4") == {"recipe": "mxfp4-rceil", "block": "1x32", "rounding": "rn", "rht": False}
    for bad in ("nvfp8", "nvfp4/2x2", "", None):
        with pytest.raises(nk.Error):
            parse_config(bad)
    with pytest.raises(nk.Error, match="rht16"):
        NVFP4Linear(16, 16, config={"fprop_a": "nvfp4/rht16"})
    with pytest.raises(nk.Error, match="unknown operand"):
        NVFP4Linear(16, 16, config={"fprop_c": "fp32"})
    assert sr_offset(0, 0, 0, 0) == 0 and sr_offset(1, 0, 0, 0) == 1 << 21 and sr_offset(0, 1, 2, 1) == (
        ((1 << 2 | 2) << 1 | 1) << 2)


def test_linear_gemms_equal_cli_operands(tmp_path, cli):
    torch.manual_seed(0)
    lin = NVFP4Linear(64, 32, seed=7, layer_id=3)
    x = torch.randn(48, 64, requires_grad=True)
    y = lin(x)
    W = lin.weight.detach().numpy()
    xq = cli_deq(cli, tmp_path, x.detach().numpy())
    wq = cli_deq(cli, tmp_path, W, "--block", "16x16")
    want = xq @ wq.t() + lin.bias.detach()
    assert y.detach().numpy().tobytes() == want.numpy().tobytes()
    dy = torch.randn(48, 32)
    y.backward(dy)
    # Dgrad: dX = q(dY) q(W^T)^T with SR keyed (seed 7, step 0, layer 3, gemm 1, operand 0)
    a = cli_deq(cli, tmp_path, dy.numpy(), "--round", "sr", "--seed", 7, "--offset", sr_offset(0, 3, 1, 0))
    b = cli_deq(cli, tmp_path, W, "--block", "16x16", "--columnwise", columnwise=True)
    assert x.grad.numpy().tobytes() == (a @ b.t()).numpy().tobytes()
    # Wgrad: dW = q(dY^T) q(X^T)^T, both RHT'd columnwise, SR on dY^T
    a = cli_deq(cli, tmp_path, dy.numpy(), "--round", "sr", "--seed", 7, "--offset", sr_offset(0, 3, 2, 0),
                "--columnwise", "--rht", columnwise=True)
    b = cli_deq(cli, tmp_path, x.detach().numpy(), "--seed", 7, "--offset", sr_offset(0, 3, 2, 1), "--columnwise",
                "--rht", columnwise=True)
    assert lin.weight.grad.numpy().tobytes() == (a @ b.t()).numpy().tobytes()
    assert lin.step == 1


def test_linear_overrides_and_drop_in():
    torch.manual_seed(1)
    ref = torch.nn.Linear(32, 16)
    fp = NVFP4Linear.from_linear(ref, config={k: "fp32" for k in DEFAULT_CONFIG})
    x = torch.randn(8, 2, 32)  # any leading dimensions
    assert torch.equal(fp(x), ref(x).float())
    assert isinstance(fp, torch.nn.Linear)


def _train(seed):
    torch.manual_seed(0)
    model = torch.nn.Sequential(NVFP4Linear(32, 64, seed=seed, layer_id=0), torch.nn.ReLU(),
                                NVFP4Linear(64, 16, seed=seed, layer_id=1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(2)
    X, Y = torch.randn(64, 32, generator=g), torch.randn(64, 16, generator=g)
    losses = []
    for _ in range(12):
        opt.zero_grad()
        loss = ((model(X) - Y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_training_reproducible_to_the_bit():
    a, b = _train(5), _train(5)
    assert a == b  # floats compared exactly
    assert a[-1] < a[0]  # it trains
    assert _train(6) != a  # and the SR seed matters


# ---- CUDA tensors, without a GPU --------------------------------------------------------------------------------
class FakeCudaTensor(torch.Tensor):
    """A CPU tensor that says it lives on cuda:0, as a CUDA tensor does (device, is_cuda), and whose data
    pointer must not be read in place: the package must copy it to the host with .to("cpu") / .cpu()."""
    host_copies = 0

    @staticmethod
    def wrap(t):
        return torch.Tensor._make_subclass(FakeCudaTensor, t)

    __torch_function__ = torch._C._disabled_torch_function_impl

    @property
    def device(self):
        return torch.device("cuda", 0)

    @property
    def is_cuda(self):
        return True

    def detach(self):
        return FakeCudaTensor.wrap(torch.Tensor.detach(self))

    def data_ptr(self):
        raise AssertionError("a CUDA tensor's data pointer was read on the host")

    def contiguous(self, *a, **k):
        return self

    def to(self, *args, **kw):
        dev = args[0] if args else kw.get("device")
        if str(dev) == "cpu":
            FakeCudaTensor.host_copies += 1
            return torch.Tensor.clone(self).as_subclass(torch.Tensor)
        raise AssertionError("unexpected .to(%r)" % (args,))

    def cpu(self):
        return self.to("cpu")


@pytest.fixture
def fake_cuda(monkeypatch):
    """torch.Tensor.to(cuda) returns a FakeCudaTensor (no GPU needed); counts the copies back to the device."""
    real_to = torch.Tensor.to
    back = []

    def to(self, *args, **kw):
        dev = args[0] if args else kw.get("device")
        if isinstance(dev, (str, torch.device)) and torch.device(dev).type == "cuda":
            back.append(torch.device(dev))
            return FakeCudaTensor.wrap(real_to(self, "cpu").clone())
        return real_to(self, *args, **kw)

    monkeypatch.setattr(torch.Tensor, "to", to)
    FakeCudaTensor.host_copies = 0
    return back


def _host_bytes(t):
    return torch.Tensor.clone(t).as_subclass(torch.Tensor).numpy().tobytes()


def test_cuda_tensors_copied_to_host_and_back(fake_cuda, tmp_path):
    x = torch.from_numpy(rand(32, 64, seed=11))
    xc = FakeCudaTensor.wrap(x.clone())
    assert xc.is_cuda and xc.device.type == "cuda"
    ref = nk.quantize(x, columnwise=True)
    q = nk.quantize(xc, columnwise=True)
    assert FakeCudaTensor.host_copies == 1  # the input: copied to the host once, never read in place
    for name, t in q.components().items():  # every output is on the input's device, with the CPU path's bytes
        assert isinstance(t, FakeCudaTensor) and t.device == xc.device, name
        assert _host_bytes(t) == ref.components()[name].numpy().tobytes(), name
    d = q.dequantize()
    assert isinstance(d, FakeCudaTensor) and _host_bytes(d) == ref.dequantize().numpy().tobytes()
    assert fake_cuda and all(dev == torch.device("cuda", 0) for dev in fake_cuda)
    # fake_quantize: same bytes as the CPU path, returned on the device
    fq = fake_quantize(xc, rounding="sr", seed=3)
    assert isinstance(fq, FakeCudaTensor) and _host_bytes(fq) == fake_quantize(x, rounding="sr", seed=3).numpy().tobytes()
    # verify reads CUDA components through a host copy; the verdict is the CPU path's
    golden = nk.quantize(x)
    n = FakeCudaTensor.host_copies
    rep = nk.verify(golden, {"data": FakeCudaTensor.wrap(golden.row.data.clone()),
                             "scale": FakeCudaTensor.wrap(golden.row.scale.clone())})
    assert rep.ok and FakeCudaTensor.host_copies == n + 2
    bad = golden.row.data.clone()
    bad[0, 0] ^= 0x10
    rep = nk.verify(golden, {"data": FakeCudaTensor.wrap(bad)})
    assert not rep.ok and rep.components["data"]["mismatches"] == 1

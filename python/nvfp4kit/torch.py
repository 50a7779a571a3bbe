"""nvfp4kit.torch - bit-exact NVFP4 fake quantization and an NVFP4 linear layer for PyTorch.

Importing nvfp4kit does not import torch; this module does (on first use of
nvfp4kit.torch). Every quantized value comes from libnvfp4 (nvfp4kit.quantize
then Quantized.dequantize): the tensors are moved to the host (CUDA tensors
are copied there and the results copied back) and the GEMMs run in torch on
the dequantized fp32 operands.

Operands are named as in the error-accumulation laboratory (nvfp4/study.h):
three GEMMs, "fprop" (Y = X W^T), "dgrad" (dX = dY W) and "wgrad"
(dW = dY^T X), each with an A and a B operand:

    fprop_a = X     fprop_b = W
    dgrad_a = dY    dgrad_b = W^T
    wgrad_a = dY^T  wgrad_b = X^T

and each operand's configuration is written as the lab writes it: "fp32"
(not quantized) or "nvfp4" / "mxfp4" followed by /1x16, /16x16 or /1x32, /rn
or /sr and /rht16 (RHT only on the Wgrad operands, which are quantized
columnwise, as TransformerEngine does).
"""
import math

import torch as _torch

from . import _core, _lib
from ._lib import Error

#: NVIDIA's NVFP4 training recipe (arXiv 2509.25149, Sec. 4; the lab's nvfp4_recipe_cfg_paper):
#: 16x16 weights in Fprop and Dgrad, 1x16 activations and gradients, SR on the gradients, RHT-16 on both Wgrad inputs.
DEFAULT_CONFIG = {
    "fprop_a": "nvfp4/1x16",
    "fprop_b": "nvfp4/16x16",
    "dgrad_a": "nvfp4/1x16/sr",
    "dgrad_b": "nvfp4/16x16",
    "wgrad_a": "nvfp4/1x16/sr/rht16",
    "wgrad_b": "nvfp4/1x16/rht16",
}
OPERANDS = tuple(DEFAULT_CONFIG)
GEMMS = ("fprop", "dgrad", "wgrad")
_FORMAT_RECIPE = {"nvfp4": None, "mxfp4": "mxfp4-rceil"}


def parse_config(s, recipe="te"):
    """An operand configuration string -> None (fp32: not quantized) or quantize() options."""
    if not isinstance(s, str) or not s:
        raise Error("operand configuration must be a string such as 'nvfp4/1x16/sr', got %r" % (s,))
    _core.recipe_name(recipe)  # a string naming a recipe of the library
    parts = s.lower().split("/")
    if parts[0] == "fp32" and len(parts) == 1:
        return None
    if parts[0] not in _FORMAT_RECIPE:
        raise Error("operand configuration '%s': the format must be fp32, nvfp4 or mxfp4" % s)
    o = {"recipe": _FORMAT_RECIPE[parts[0]] or recipe, "block": "1x32" if parts[0] == "mxfp4" else "1x16",
         "rounding": "rn", "rht": False}
    for p in parts[1:]:
        if p in ("1x16", "16x16", "1x32"):
            o["block"] = p
        elif p in ("rn", "sr"):
            o["rounding"] = p
        elif p == "rht16":
            o["rht"] = True
        else:
            raise Error("operand configuration '%s': unknown part '%s' (1x16, 16x16, 1x32, rn, sr, rht16)" % (s, p))
    return o


def _deq(x, opts, columnwise, seed, offset, pad=True):
    """x (2-D) quantized with opts in the given orientation, dequantized (fp32, on x's device)."""
    if opts is None:
        t = x.detach().float()
        return t.t() if columnwise else t
    if opts["rht"] and not columnwise:
        raise Error("rht16 applies to columnwise operands only (the Wgrad inputs)")
    src = x.detach()
    if src.dtype not in (_torch.float32, _torch.bfloat16):
        src = src.float()
    q = _core.quantize(src, recipe=opts["recipe"], block=opts["block"], rounding=opts["rounding"], seed=seed,
                       offset=offset, rowwise=not columnwise, columnwise=columnwise, rht=opts["rht"], pad=pad)
    return q.dequantize(columnwise=columnwise)


def fake_quantize(x, recipe="te", block=None, rounding="rn", seed=0, offset=0, columnwise=False, rht=False,
                  pad=False):
    """The dequantized NVFP4 (or MX) value of every element of a 2-D tensor:
    bit-identical to `nvfp4 quantize` then `nvfp4 dequantize` with the same
    options. float32 result on x's device; columnwise gives the transposed
    (stored) orientation, RHT'd data stays in the Hadamard domain. A numpy
    array gives a numpy result (nvfp4kit.quantize then dequantize)."""
    x = x.detach() if _core._is_torch(x) else x
    q = _core.quantize(x, recipe=recipe, block=block, rounding=rounding, seed=seed, offset=offset,
                       rowwise=not columnwise, columnwise=columnwise, rht=rht, pad=pad)
    return q.dequantize(columnwise=columnwise)


def sr_offset(step, layer, gemm, operand):
    """The Philox offset of one quantization of NVFP4Linear: the counter
    (offset, block) of the SR contract keyed by (step, layer, GEMM, operand)
    as ((((step * 2^16 + layer) * 4 + gemm) * 2 + operand) * 4); the low two
    bits stay free for the columnwise (+1) and 1x32 (+2, +3) sub-streams."""
    step = _lib.int_arg(step, "sr_offset: step", 0, (1 << 40) - 1)
    layer = _lib.int_arg(layer, "sr_offset: layer", 0, (1 << 16) - 1)
    gemm = _lib.int_arg(gemm, "sr_offset: gemm", 0, 2)
    operand = _lib.int_arg(operand, "sr_offset: operand", 0, 1)
    return ((((step << 16 | layer) << 2 | gemm) << 1) | operand) << 2


def _empty_gemm(x, weight):
    """A batch of 0 rows, or 0 input or output features: the library quantizes no empty tensor, and every
    GEMM of the layer is then a sum of nothing (zeros) or has no element."""
    return x.shape[0] == 0 or x.shape[1] == 0 or weight.shape[0] == 0


class _NVFP4LinearFn(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, mod, step):
        cfg, seed, layer = mod._parsed, mod.seed, mod.layer_id
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        ctx.mod, ctx.step = mod, step
        if _empty_gemm(x, weight):  # nothing to quantize: nn.Linear's result (bias, or an empty tensor)
            y = x.new_zeros((x.shape[0], weight.shape[0]), dtype=_torch.float32)
            return (y if bias is None else y + bias.float()).to(x.dtype)
        xq = _deq(x, cfg["fprop_a"], False, seed, sr_offset(step, layer, 0, 0))
        wq = _deq(weight, cfg["fprop_b"], False, seed, sr_offset(step, layer, 0, 1))
        y = xq @ wq.t()
        if bias is not None:
            y = y + bias.float()
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensors
        cfg, seed, layer, step = ctx.mod._parsed, ctx.mod.seed, ctx.mod.layer_id, ctx.step
        dy = dy.contiguous()
        dx = dw = db = None
        if ctx.has_bias and ctx.needs_input_grad[2]:
            db = dy.float().sum(0).to(dy.dtype)
        if _empty_gemm(x, weight):  # sums over nothing: zero gradients of the shapes nn.Linear gives
            dx = _torch.zeros_like(x) if ctx.needs_input_grad[0] else None
            dw = _torch.zeros_like(weight) if ctx.needs_input_grad[1] else None
            return dx, dw, db, None, None
        if ctx.needs_input_grad[0]:  # Dgrad: dX = dY W, reduction over the outputs
            a = _deq(dy, cfg["dgrad_a"], False, seed, sr_offset(step, layer, 1, 0))
            b = _deq(weight, cfg["dgrad_b"], True, seed, sr_offset(step, layer, 1, 1))  # W^T [in, out]
            dx = (a @ b.t()).to(x.dtype)
        if ctx.needs_input_grad[1]:  # Wgrad: dW = dY^T X, reduction over the tokens
            a = _deq(dy, cfg["wgrad_a"], True, seed, sr_offset(step, layer, 2, 0))  # dY^T [out, n]
            b = _deq(x, cfg["wgrad_b"], True, seed, sr_offset(step, layer, 2, 1))   # X^T [in, n]
            dw = (a @ b.t()).to(weight.dtype)
        return dx, dw, db, None, None


class NVFP4Linear(_torch.nn.Linear):
    """torch.nn.Linear whose three GEMMs quantize their operands bit-exactly
    (NVIDIA's NVFP4 recipe by default: DEFAULT_CONFIG), with a
    straight-through estimator: the gradients are those of the quantized
    GEMMs, passed through the quantizers unchanged.

    config: {operand: "nvfp4/16x16/sr/..."} overriding DEFAULT_CONFIG;
    recipe: the NVFP4 recipe of the nvfp4 operands (default "te"); seed and
    layer_id key the SR bits with the step counter: every quantization uses
    seed and sr_offset(step, layer_id, gemm, operand), so a run is
    reproducible to the bit. step counts the forward passes made with
    gradients enabled (read and set it freely, e.g. when resuming)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, config=None, recipe="te",
                 seed=0, layer_id=0):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        cfg = dict(DEFAULT_CONFIG)
        if config is not None and not isinstance(config, dict):
            raise Error("NVFP4Linear: config must be a dict {operand: configuration}, got %r" % (config,))
        for k, v in (config or {}).items():
            if k not in DEFAULT_CONFIG:
                raise Error("NVFP4Linear: unknown operand '%s' (%s)" % (k, ", ".join(OPERANDS)))
            cfg[k] = v
        self.config = cfg
        self.recipe = recipe
        self._parsed = {k: parse_config(v, recipe) for k, v in cfg.items()}
        for k in ("fprop_a", "fprop_b", "dgrad_a"):
            if self._parsed[k] is not None and self._parsed[k]["rht"]:
                raise Error("NVFP4Linear: %s is quantized rowwise; rht16 applies to the Wgrad operands" % k)
        self.seed = _core._u64(seed, "seed")
        # an integer key of the SR offsets (sr_offset): 1.7 or "3" is refused, not rounded
        self.layer_id = _lib.int_arg(layer_id, "NVFP4Linear: layer_id", 0, (1 << 16) - 1)
        self.step = 0

    @classmethod
    def from_linear(cls, lin, **kw):
        """An NVFP4Linear with lin's weights (copied)."""
        m = cls(lin.in_features, lin.out_features, bias=lin.bias is not None, device=lin.weight.device,
                dtype=lin.weight.dtype, **kw)
        with _torch.no_grad():
            m.weight.copy_(lin.weight)
            if lin.bias is not None:
                m.bias.copy_(lin.bias)
        return m

    def forward(self, x):
        step = self.step
        if _torch.is_grad_enabled():
            self.step += 1
        shape = x.shape
        rows = math.prod(shape[:-1])  # not -1: a reshape of 0 elements to [-1, 0] is ambiguous to torch
        y = _NVFP4LinearFn.apply(x.reshape(rows, shape[-1]), self.weight, self.bias, self, step)
        return y.reshape(*shape[:-1], self.out_features)

    def extra_repr(self):
        return super().extra_repr() + ", recipe=%s, seed=%d, layer_id=%d" % (self.recipe, self.seed, self.layer_id)

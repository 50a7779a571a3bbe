"""triton_gpu_casts.py - run a Triton kernel under the interpreter
(TRITON_INTERPRET=1) with the GPU's conversions instead of the interpreter's,
for tests/py/test_triton_oracles.py.

The interpreter (triton 3.x, triton/runtime/interpreter.py: _convert_float,
InterpreterBuilder.cast_impl / create_fp_to_fp / create_inline_asm) is not
what a GPU computes in three places that NVFP4 kernels use:
  - fp32 -> fp8e4nv (`x.to(tl.float8e4nv)`): it adds the first cut-off bit
    (ties away from zero), does not saturate (a value above 448 overflows
    the exponent field) and truncates subnormals; the GPU's
    cvt.rn.satfinite.e4m3x2.f32 rounds to nearest even and saturates to
    +-448, NaN -> 0x7F;
  - fp32 -> bf16: it truncates; the GPU (cvt.rn.bf16.f32) rounds to nearest
    even;
  - bf16 -> fp32: it maps every bf16 subnormal to a wrong value (its
    _convert_float renormalises the significand, then clamps the exponent
    at 0; 0x0004 = 3.67e-40 comes back 16 times larger); the GPU widens
    exactly (the 16 bits shifted up);
  - inline PTX (`tl.inline_asm_elementwise`) raises NotImplementedError;
    mslk's convert_fp32_to_fp4_packed is cvt.rn.satfinite.e2m1x2.f32 (round
    to nearest even, +-6 beyond, sign kept, NaN -> 0x7, first operand of a
    pair in the low nibble), and fbgemm-gpu-genai's _kernel_nvfp4_quantize
    runs four of them and packs the bytes with mov.b32 (pack=1, eight fp32
    operands, an int32 result): the asm emulated here, its lines parsed
    (any other asm, or a line not understood, still raises).
gpu_casts() replaces exactly those four with the GPU's semantics, computed
with torch's float8_e4m3fn / bfloat16 casts (round to nearest even) after a
clamp to +-448, and a numpy E2M1 rounding; every other operation of the
kernel (loads, divisions with tl.div_rn, products, max, clamp, where, the
fp8 -> fp32 widening, stores) runs as the interpreter has it. What stays
different from a GPU and is therefore not tested: NaN propagation through
tl.max / tl.clamp (numpy propagates NaN; the GPU's max.f32 returns the other
operand)."""
import contextlib
import re

import numpy as np
import torch

try:
    import triton.language as tl
    from triton.runtime import interpreter as _interp
except Exception:  # pragma: no cover
    tl = _interp = None

E2M1_MIDS = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], dtype=np.float32)


def e2m1_rn_satfinite(x):
    """cvt.rn.satfinite.e2m1 of fp32 values -> 4-bit codes (uint8)."""
    x = np.asarray(x, dtype=np.float32)
    a = np.abs(x)
    code = (a[..., None] > E2M1_MIDS).sum(-1)
    tie_up = (a[..., None] == E2M1_MIDS) & (np.arange(1, 8) % 2 == 0)  # tie between k and k+1: k+1 even
    code = code + tie_up.sum(-1)
    code = np.minimum(code, 7).astype(np.uint8)
    code |= (np.signbit(x).astype(np.uint8) << 3)
    return np.where(np.isnan(x), np.uint8(7), code).astype(np.uint8)


def e4m3_rn_satfinite(x):
    """cvt.rn.satfinite.e4m3 of fp32 values -> bytes (uint8); NaN -> 0x7F."""
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).clamp(-448.0, 448.0)
    b = t.to(torch.float8_e4m3fn).view(torch.uint8).numpy()
    return np.where(np.isnan(x), np.uint8(0x7F), b).astype(np.uint8)


def bf16_rn(x):
    """cvt.rn.bf16.f32 -> bf16 bit patterns (uint16)."""
    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(torch.bfloat16)
    return t.view(torch.int16).numpy().view(np.uint16)


_CVT_E2M1X2 = re.compile(r"cvt\.rn\.satfinite\.e2m1x2\.f32\s+(\w+)\s*,\s*\$(\d+)\s*,\s*\$(\d+)\s*;")
_MOV_B32 = re.compile(r"mov\.b32\s+\$0\s*,\s*\{([^}]*)\}\s*;")


def _e2m1x2_words(asm, values):
    """fbgemm's form (pack=1, one fp32 per operand): `cvt.rn.satfinite.e2m1x2.f32 d, $a, $b` puts $a's code in
    d's high nibble and $b's in its low nibble; `mov.b32 $0, {b0, b1, b2, b3}` puts b0 in the low byte. Every
    line of the asm is accounted for, or this raises."""
    body = [l.strip() for l in asm.strip().strip("{}").splitlines()]
    body = [l for l in body if l and l not in "{}" and not l.startswith(".reg")]
    cvts, movs = [_CVT_E2M1X2.fullmatch(l) for l in body], [_MOV_B32.fullmatch(l) for l in body]
    if any(c is None and m is None for c, m in zip(cvts, movs)) or sum(m is not None for m in movs) != 1:
        raise NotImplementedError("inline asm not emulated: %r" % asm)
    byte = {}
    for c in filter(None, cvts):
        hi, lo = values[int(c.group(2)) - 1].data, values[int(c.group(3)) - 1].data
        byte[c.group(1)] = (e2m1_rn_satfinite(lo) | (e2m1_rn_satfinite(hi) << 4)).astype(np.uint32)
    names = [n.strip() for n in next(filter(None, movs)).group(1).split(",")]
    word = sum(byte[n] << np.uint32(8 * i) for i, n in enumerate(names))
    return word.astype(np.uint32).view(np.int32)


class _AsmResult:
    """What tl.inline_asm_elementwise reads from the builder's op: get_result(0)."""

    def __init__(self, handle):
        self.handle = handle

    def get_result(self, i):
        assert i == 0
        return self.handle


@contextlib.contextmanager
def gpu_casts():
    """Patch the interpreter's builder for the duration (see the module doc)."""
    B = _interp.InterpreterBuilder
    orig_fp_to_fp, orig_cast, orig_asm = B.create_fp_to_fp, B.cast_impl, B.create_inline_asm
    used = {"e4m3": 0, "bf16": 0, "bf16_to_f32": 0, "e2m1x2": 0}

    def create_fp_to_fp(self, src, dst_type, rounding_mode):
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.float8e4nv:
            used["e4m3"] += 1
            data = e4m3_rn_satfinite(src.data).reshape(src.data.shape)
            return _interp.TensorHandle(data.view(_interp._get_np_dtype(dst_type)), dst_type.scalar)
        return orig_fp_to_fp(self, src, dst_type, rounding_mode)

    def cast_impl(self, src, dst_type):
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            used["bf16"] += 1
            data = bf16_rn(src.data).reshape(src.data.shape)
            return _interp.TensorHandle(data.view(_interp._get_np_dtype(dst_type)), dst_type.scalar)
        if src.dtype.scalar == tl.bfloat16 and dst_type.scalar == tl.float32:
            used["bf16_to_f32"] += 1
            data = (np.asarray(src.data).view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
            return _interp.TensorHandle(data.reshape(src.data.shape), dst_type.scalar)
        return orig_cast(self, src, dst_type)

    def create_inline_asm(self, inlineAsm, constraints, values, type, isPure, pack):
        if "cvt.rn.satfinite.e2m1x2.f32" in inlineAsm and len(values) == 2:
            used["e2m1x2"] += 1
            lo = e2m1_rn_satfinite(values[0].data)
            hi = e2m1_rn_satfinite(values[1].data)
            return _AsmResult(_interp.TensorHandle((lo | (hi << 4)).astype(np.uint8), tl.uint8))
        if "cvt.rn.satfinite.e2m1x2.f32" in inlineAsm and pack == 1 and len(type) == 1 and type[0].scalar == tl.int32:
            used["e2m1x2"] += 1
            return _AsmResult(_interp.TensorHandle(_e2m1x2_words(inlineAsm, values), tl.int32))
        return orig_asm(self, inlineAsm, constraints, values, type, isPure, pack)

    B.create_fp_to_fp, B.cast_impl, B.create_inline_asm = create_fp_to_fp, cast_impl, create_inline_asm
    try:
        yield used
    finally:
        B.create_fp_to_fp, B.cast_impl, B.create_inline_asm = orig_fp_to_fp, orig_cast, orig_asm

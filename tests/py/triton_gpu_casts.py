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
  - inline PTX (`tl.inline_asm_elementwise`) raises NotImplementedError;
    mslk's convert_fp32_to_fp4_packed is cvt.rn.satfinite.e2m1x2.f32 (round
    to nearest even, +-6 beyond, sign kept, NaN -> 0x7, first operand of a
    pair in the low nibble), the one inline asm emulated here (any other
    asm still raises).
gpu_casts() replaces exactly those three with the GPU's semantics, computed
with torch's float8_e4m3fn / bfloat16 casts (round to nearest even) after a
clamp to +-448, and a numpy E2M1 rounding; every other operation of the
kernel (loads, divisions with tl.div_rn, products, max, clamp, where, the
fp8 -> fp32 widening, stores) runs as the interpreter has it. What stays
different from a GPU and is therefore not tested: NaN propagation through
tl.max / tl.clamp (numpy propagates NaN; the GPU's max.f32 returns the other
operand)."""
import contextlib

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
    used = {"e4m3": 0, "bf16": 0, "e2m1x2": 0}

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
        return orig_cast(self, src, dst_type)

    def create_inline_asm(self, inlineAsm, constraints, values, type, isPure, pack):
        if "cvt.rn.satfinite.e2m1x2.f32" in inlineAsm and len(values) == 2:
            used["e2m1x2"] += 1
            lo = e2m1_rn_satfinite(values[0].data)
            hi = e2m1_rn_satfinite(values[1].data)
            return _AsmResult(_interp.TensorHandle((lo | (hi << 4)).astype(np.uint8), tl.uint8))
        return orig_asm(self, inlineAsm, constraints, values, type, isPure, pack)

    B.create_fp_to_fp, B.cast_impl, B.create_inline_asm = create_fp_to_fp, cast_impl, create_inline_asm
    try:
        yield used
    finally:
        B.create_fp_to_fp, B.cast_impl, B.create_inline_asm = orig_fp_to_fp, orig_cast, orig_asm

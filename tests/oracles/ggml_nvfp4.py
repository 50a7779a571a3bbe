"""ggml_nvfp4.py - a numpy model of llama.cpp's NVFP4 reference quantizer,
written from its description (ggml-org/llama.cpp ggml/src/ggml-quants.c
quantize_row_nvfp4_ref and best_index_mxfp4; ggml/src/ggml-impl.h
ggml_fp32_to_ue4m3 / ggml_ue4m3_to_fp32, commit 009664690cf1), for
tests/py/test_ggml_oracle.py. gguf-py (PyPI `gguf` 0.19.0) ships the
block_nvfp4 dequantizer and the UE4M3 encoder but no NVFP4 quantizer; the
test checks this model's scale rule against gguf's encoder and the whole
result against gguf's dequantizer.

Everything is float32 arithmetic, in the order ggml's C code uses."""
import numpy as np

F32 = np.float32
# E2M1 values by code; ggml's table is twice these with a half scale, which
# gives the same fp32 products.
FP4 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=F32)


def ue4m3_encode(v):
    """ggml's UE4M3 rounding of v (float32 array) -> uint8 codes."""
    v = np.asarray(v, dtype=F32)
    pos = v > 0  # NaN and non-positive values give 0
    w = np.where(pos, np.minimum(np.where(pos, v, F32(1)), F32(448)), F32(1)).astype(F32)
    bits = w.view(np.uint32).astype(np.int64)
    e = ((bits >> 23) & 0xFF) - 127 + 7
    # subnormal codes: truncation of the fp32 sum w*512 + 0.5, kept in 1..7
    t = (w * F32(512)).astype(F32) + F32(0.5)
    sub = np.clip(np.trunc(t.astype(F32)).astype(np.int64), 0, 7)
    m = ((bits >> 20) & 7) + ((bits >> 19) & 1)
    carry = m > 7
    e2 = np.where(carry, e + 1, e)
    m2 = np.where(carry, 0, m)
    normal = np.where(e2 >= 15, 0x7E, (e2 << 3) | m2)
    code = np.where(e <= 0, sub, np.where(e >= 15, 0x7E, normal))
    return np.where(pos, code, 0).astype(np.uint8)


def ue4m3_value(c):
    """The full (not halved) value of a UE4M3 byte as ggml decodes it: 0x00 and
    0x7F are 0, bit 7 is ignored."""
    c = np.asarray(c, dtype=np.uint8).astype(np.int64)
    e = (c >> 3) & 0xF
    m = (c & 7).astype(np.float64)
    val = np.where(e == 0, m * 2.0 ** -9, (1 + m / 8) * 2.0 ** (e - 7))
    return np.where((c == 0) | (c == 0x7F), 0.0, val).astype(F32)


def quantize(x):
    """x: float32 [rows, cols], cols % 64 == 0 -> (codes [rows, cols] uint8,
    scales [rows, cols/16] uint8, block_nvfp4 bytes)."""
    x = np.asarray(x, dtype=F32)
    rows, cols = x.shape
    blocks = x.reshape(-1, 16)
    a = np.abs(blocks)
    amax = np.max(np.where(np.isnan(a), F32(0), a), axis=1).astype(F32)  # a NaN never wins `amax < |x|`
    scale = ue4m3_encode((amax / F32(6)).astype(F32))
    s = ue4m3_value(scale)[:, None]
    best = np.zeros(blocks.shape, dtype=np.uint8)
    best_err = np.abs(F32(0) - blocks).astype(F32)
    for k in range(1, 16):
        err = np.abs((FP4[k] * s).astype(F32) - blocks).astype(F32)
        better = err < best_err  # strictly smaller: the first minimum is kept; NaN never wins
        best = np.where(better, np.uint8(k), best)
        best_err = np.where(better, err, best_err)
    codes = best.reshape(rows, cols)
    scales = scale.reshape(rows, cols // 16)
    # block_nvfp4: 4 scales, then per sub-block byte j = code j | code j+8 << 4
    sb = best.reshape(rows, cols // 64, 4, 16)
    qs = (sb[..., :8] | (sb[..., 8:] << 4)).astype(np.uint8).reshape(rows, cols // 64, 32)
    d = scale.reshape(rows, cols // 64, 4)
    layout = np.concatenate([d, qs], axis=-1).reshape(-1)
    return codes, scales, layout.tobytes()

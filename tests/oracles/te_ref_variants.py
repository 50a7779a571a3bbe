"""te_ref_variants.py - an independent numpy float32 transcription of the
newer branches of TransformerEngine's Python reference quantizer
(NVIDIA/TransformerEngine d0067d0d,
transformer_engine/pytorch/custom_recipes/reference_nvfp4.py,
NVFP4QuantizerRef._quantize_blockwise_reference and
_quantize_blockwise_4over6_reference): 4over6 (MAE / MSE, the exact error
and the err_use_fast_math error, 1x16 and 16x16 tiles), row_scaled_nvfp4 and
pow_2_scales. Written from the reference's formulas; it shares no code with
the C library. The E4M3 rounding is the nearest-value search of te_chain.py,
the E2M1 cast is the reference's interval table (cast_to_fp4x2), every other
step is numpy float32 arithmetic in the reference's order (IEEE RNE, no FMA).

The reference's own conventions are kept, including where the CUDA kernels
(and so the library's recipes) differ:
  - block and row amaxes are torch.amax / torch.max: a NaN propagates;
  - cast_to_fp4x2 gives 0x0 for -0.0 and for NaN;
  - amax 0 gives S_enc = FLT_MAX (the kernels: 1); the bytes are the same;
  - pow_2_scales takes ceil(log2(amax/6)) with an fp32 log2 (log2_f32).
"""
import numpy as np

from te_chain import e4m3_rn_satfinite, e4m3_value

F32 = np.float32
FLT_MAX = F32(np.finfo(np.float32).max)
E2M1_SIGNED = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float32)


def cast_to_fp4(y):
    """The reference's interval table on float32 y (already clamped to
    [-6, 6]): ties to the even code, -0.0 and NaN -> 0x0."""
    y = np.asarray(y, dtype=np.float32)
    b = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)
    # magnitude intervals: [0, .25] -> 0, (.25, .75) -> 1, [.75, 1.25] -> 2, (1.25, 1.75) -> 3,
    # [1.75, 2.5] -> 4, (2.5, 3.5) -> 5, [3.5, 5] -> 6, (5, inf) -> 7
    a = np.abs(y)
    mag = np.where(a <= b[0], 0, np.where(a < b[1], 1, np.where(a <= b[2], 2, np.where(a < b[3], 3,
                   np.where(a <= b[4], 4, np.where(a < b[5], 5, np.where(a <= b[6], 6, 7))))))).astype(np.uint8)
    neg = y < 0  # -0.0 is not < 0: it keeps code 0x0 like +0
    q = np.where(neg, mag | 8, mag).astype(np.uint8)
    return np.where(np.isnan(y), np.uint8(0), q).astype(np.uint8)


def pack(q):
    return (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)


def torch_amax(a, axis):
    """torch.amax of |a|: NaN propagates."""
    return np.max(np.abs(a), axis=axis).astype(np.float32)


def global_encode(amax, bound):
    """(bound * 6) / amax, min FLT_MAX, 0 -> 1 (reference form)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        s = (F32(bound) * F32(6)) / np.asarray(amax, dtype=np.float32)
    s = np.where(np.isnan(s), s, np.minimum(s, FLT_MAX)).astype(np.float32)
    return np.where(s == 0, F32(1), s).astype(np.float32)


def _block_amax(x, tile_y):
    rows, cols = x.shape
    if tile_y == 16:
        t = x.reshape(rows // 16, 16, cols // 16, 16)
        return np.repeat(np.max(np.abs(t), axis=(1, 3)), 16, axis=0).astype(np.float32)
    return torch_amax(x.reshape(rows, cols // 16, 16), axis=2)


def quantize_4over6(x, err_mode="MAE", fast=False, tile_y=1, e4m3_max=256):
    """float32 [rows, cols] -> (packed codes, scale bytes [rows, cols/16], amax)."""
    x = np.asarray(x, dtype=np.float32)
    rows, cols = x.shape
    nb = cols // 16
    amax = F32(np.max(np.abs(x)))
    s_enc = global_encode(amax, e4m3_max)
    s_dec = (F32(1) / s_enc).astype(np.float32)
    vmax = _block_amax(x, tile_y)
    with np.errstate(over="ignore", invalid="ignore"):
        base = ((vmax / F32(6)).astype(np.float32) * s_enc).astype(np.float32)
        cand = {4: (base * F32(1.5)).astype(np.float32), 6: base}
    codes, scales, errs = {}, {}, {}
    xb = x.reshape(rows, nb, 16)
    for k, d in cand.items():
        d = np.where(np.isnan(d), d, np.clip(d, -448, 448)).astype(np.float32)
        s = np.where(np.isnan(d), np.uint8(0x7F), e4m3_rn_satfinite(np.nan_to_num(d, nan=0.0)))
        sf = np.where(s == 0x7F, F32(np.nan), e4m3_value(np.minimum(s, 0x7E))).astype(np.float32)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            enc = (F32(1) / (sf * s_dec).astype(np.float32)).astype(np.float32)
            enc = np.where(np.isnan(enc), enc, np.minimum(enc, FLT_MAX)).astype(np.float32)
            y = (xb * enc[:, :, None]).astype(np.float32)
        y = np.where(np.isnan(y), y, np.clip(y, -6, 6)).astype(np.float32)
        q = cast_to_fp4(y)
        v = E2M1_SIGNED[q]
        err = np.zeros((rows, nb), dtype=np.float32)
        with np.errstate(over="ignore", invalid="ignore"):
            for i in range(16):
                if fast:
                    diff = ((v[:, :, i] * sf).astype(np.float32) - (xb[:, :, i] * s_enc).astype(np.float32))
                else:
                    val = (v[:, :, i] * sf).astype(np.float32)
                    val = (val * amax).astype(np.float32)
                    val = (val / F32(6 * e4m3_max)).astype(np.float32)
                    diff = (val - xb[:, :, i]).astype(np.float32)
                diff = diff.astype(np.float32)
                e = (diff * diff).astype(np.float32) if err_mode == "MSE" else np.abs(diff)
                err = (err + e).astype(np.float32)
        codes[k], scales[k], errs[k] = q, s, err
    if tile_y == 16:
        def tree(e):
            r = e.reshape(rows // 16, 16, nb)
            r = (r[:, 0:8] + r[:, 8:16]).astype(np.float32)
            r = (r[:, 0:4] + r[:, 4:8]).astype(np.float32)
            r = (r[:, 0:2] + r[:, 2:4]).astype(np.float32)
            return np.repeat((r[:, 0] + r[:, 1]).astype(np.float32), 16, axis=0)
        pick4 = tree(errs[4]) < tree(errs[6])
    else:
        pick4 = errs[4] < errs[6]
    q = np.where(pick4[:, :, None], codes[4], codes[6]).reshape(rows, cols)
    s = np.where(pick4, scales[4], scales[6]).astype(np.uint8)
    return pack(q), s, amax


def quantize_rowscaled(x):
    """row_scaled_nvfp4, 1x16: the default chain with each row's own amax."""
    x = np.asarray(x, dtype=np.float32)
    rows, cols = x.shape
    row_amax = torch_amax(x, axis=1)
    s_enc = global_encode(row_amax, 448)[:, None]
    s_dec = (F32(1) / s_enc).astype(np.float32)
    vmax = _block_amax(x, 1)
    mult = (s_enc * (F32(1) / F32(6))).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        d = (vmax * mult).astype(np.float32)
    d = np.where(np.isnan(d), d, np.clip(np.minimum(d, FLT_MAX), -448, 448)).astype(np.float32)
    s = np.where(np.isnan(d), np.uint8(0x7F), e4m3_rn_satfinite(np.nan_to_num(d, nan=0.0)))
    sf = np.where(s == 0x7F, F32(np.nan), e4m3_value(np.minimum(s, 0x7E))).astype(np.float32)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        enc = (F32(1) / (sf * s_dec).astype(np.float32)).astype(np.float32)
        enc = np.where(np.isnan(enc), enc, np.minimum(enc, FLT_MAX)).astype(np.float32)
        y = (x.reshape(rows, cols // 16, 16) * enc[:, :, None]).astype(np.float32)
    y = np.where(np.isnan(y), y, np.clip(y, -6, 6)).astype(np.float32).reshape(rows, cols)
    return pack(cast_to_fp4(y)), s, row_amax


def log2_f32(v):
    """torch.log2 on float32, the reference's own function, when torch is
    installed (numpy's float32 log2 otherwise: both can round log2(d) for d
    just above 2^k down to exactly k)."""
    v = np.asarray(v, dtype=np.float32)
    try:
        import torch
        return torch.log2(torch.from_numpy(np.ascontiguousarray(v))).numpy().astype(np.float32)
    except ImportError:
        return np.log2(v).astype(np.float32)


def quantize_pow2(x, exact_log2=False):
    """pow_2_scales, 1x32: e = clamp(ceil(log2(amax/6)), -127, 127). The
    scale is returned as the UE8M0 byte e + 127 (0xFF for NaN). With
    exact_log2 the ceiling is taken on the exact binary logarithm."""
    x = np.asarray(x, dtype=np.float32)
    rows, cols = x.shape
    vmax = torch_amax(x.reshape(rows, cols // 32, 32), axis=2)
    d = (vmax / F32(6)).astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        if exact_log2:
            m, e = np.frexp(d.astype(np.float64))  # d = m * 2^e, m in [0.5, 1)
            lg = np.where(m == 0.5, e - 1, e).astype(np.float64)
            lg = np.where(d == 0, -np.inf, np.where(np.isinf(d), np.inf, lg))
            lg = np.where(np.isnan(d), np.nan, lg)
        else:
            lg = log2_f32(d)
        ex = np.clip(np.ceil(lg), -127, 127)
    dec = np.where(np.isnan(ex), F32(np.nan), np.ldexp(F32(1), np.nan_to_num(ex).astype(np.int32))).astype(np.float32)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        enc = (F32(1) / dec).astype(np.float32)
        y = (x.reshape(rows, cols // 32, 32) * enc[:, :, None]).astype(np.float32)
    y = np.where(np.isnan(y), y, np.clip(y, -6, 6)).astype(np.float32).reshape(rows, cols)
    s = np.where(np.isnan(ex), 0xFF, np.nan_to_num(ex) + 127).astype(np.uint8)
    return pack(cast_to_fp4(y)), s

"""te_chain.py - an independent transcription of TransformerEngine's default
NVFP4 quantization chain (nvfp4-semantics.md section 0; TE
transformer_engine/common/cast/nvfp4/core_nvfp4.cuh) in numpy float32
arithmetic. It shares no code with the C library: the E4M3 and E2M1
roundings are done here by nearest-value search in value tables with ties to
the even code, the arithmetic by numpy float32 (IEEE RNE, no FMA).

    S_enc = min(2688/amax, FLT_MAX); 1 if amax == 0 or S_enc == 0; S_dec = 1/S_enc
    s     = e4m3_rn_satfinite(block_amax * (S_enc * fl(1/6)))
    inv   = min(1/(float(s) * S_dec), FLT_MAX)
    q     = e2m1_rn_satfinite(x * inv)     (sign kept: -0 -> 0x8; NaN -> 0x7)
"""
import numpy as np

F32 = np.float32
FLT_MAX = F32(np.finfo(np.float32).max)
INV6 = F32(1) / F32(6)


def _e4m3_table():
    vals = []
    for code in range(0x7F):  # 0x00 .. 0x7E (0x7F is NaN)
        e, m = code >> 3, code & 7
        v = m * 2.0 ** -9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
        vals.append(v)
    return np.array(vals, dtype=np.float64)


E4M3_VALUES = _e4m3_table()
E2M1_VALUES = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float64)


def _nearest_code(a, table):
    """Index of the nearest table value to each a >= 0 (float64, finite,
    a <= table max), ties to the even index."""
    hi = np.searchsorted(table, a, side="left")  # table[hi-1] < a <= table[hi]
    hi = np.clip(hi, 0, len(table) - 1)
    lo = np.clip(hi - 1, 0, len(table) - 1)
    dlo = a - table[lo]
    dhi = table[hi] - a
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (hi % 2 == 0))
    return np.where(pick_hi, hi, lo)


def e4m3_rn_satfinite(v):
    """float32 array of non-negative non-NaN values -> E4M3 codes (uint8)."""
    a = np.asarray(v, dtype=np.float64)
    out = np.zeros(a.shape, dtype=np.uint8)
    sat = a > 464.0
    small = a <= 2.0 ** -10
    mid = ~sat & ~small
    out[mid] = _nearest_code(a[mid], E4M3_VALUES).astype(np.uint8)
    out[sat] = 0x7E
    return out


def e4m3_value(codes):
    return E4M3_VALUES[codes].astype(np.float32)


def e2m1_rn_satfinite(y):
    """float32 array -> E2M1 codes (uint8) with cuda_fp4.hpp special values."""
    y = np.asarray(y, dtype=np.float32)
    nan = np.isnan(y)
    a = np.abs(y.astype(np.float64))
    a = np.where(nan, 0.0, np.minimum(a, 6.0))
    mag = _nearest_code(a, E2M1_VALUES).astype(np.uint8)
    sign = np.signbit(y).astype(np.uint8) << 3
    return np.where(nan, np.uint8(7), sign | mag).astype(np.uint8)


def global_encode_scale(amax):
    amax = F32(amax)
    with np.errstate(divide="ignore", over="ignore"):
        s = F32(2688) / amax
    s = np.minimum(s, FLT_MAX) if not np.isnan(s) else FLT_MAX
    if amax == 0 or s == 0:
        s = F32(1)
    return F32(s)


def quantize_rows(x, block=16, amax=None):
    """Row-major float32 [rows, cols] -> (packed codes uint8 [rows, cols/2],
    scales uint8 [rows, cols/block] (16x16: block=(16,16)), amax float32)."""
    x = np.asarray(x, dtype=np.float32)
    rows, cols = x.shape
    if amax is None:
        amax = F32(np.nanmax(np.abs(x))) if x.size else F32(0)
    s_enc = global_encode_scale(amax)
    s_dec = F32(1) / s_enc
    m = F32(s_enc * INV6)
    if block == (16, 16):
        t = np.abs(x).reshape(rows // 16, 16, cols // 16, 16)
        bamax = np.nanmax(np.nan_to_num(t, nan=0.0), axis=(1, 3)).astype(np.float32)
        bamax = np.repeat(bamax, 16, axis=0)
        nb = 16
    else:
        nb = block
        t = np.abs(x).reshape(rows, cols // nb, nb)
        bamax = np.max(np.nan_to_num(t, nan=0.0), axis=2).astype(np.float32)
    with np.errstate(over="ignore"):
        scaled = (bamax * m).astype(np.float32)
    s = e4m3_rn_satfinite(scaled)
    with np.errstate(divide="ignore"):
        inv = np.minimum(F32(1) / (e4m3_value(s) * s_dec), FLT_MAX).astype(np.float32)
    inv_e = np.repeat(inv, nb, axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        y = (x * inv_e).astype(np.float32)
    q = e2m1_rn_satfinite(y)
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)
    return packed, s, F32(amax)

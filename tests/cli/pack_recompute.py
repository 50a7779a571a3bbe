#!/usr/bin/env python3
"""pack_recompute.py PACK - reads a golden pack (`nvfp4 golden --pack`) the
way an implementer without nvfp4kit would: json, numpy and ml_dtypes only
(nvfp4kit is never imported), and recomputes cases independently:

- E2M1, E4M3, UE8M0, UE5M3 decodes of every code against ml_dtypes'
  float4_e2m1fn, float8_e4m3fn, float8_e8m0fnu, float8_e5m3fnu;
- encodes against ml_dtypes' casts (round to nearest even) where the pack's
  rule is ml_dtypes' own (E2M1 rn for |x| <= 6, E4M3 nonsat, UE8M0 rn,
  UE5M3 ml_dtypes);
- sr.json: each element's random byte from a Philox4x32-10 written here
  (checked against Random123's known answer), each code from the SR rule
  of the README applied to the scaled value and that byte, the codes and
  scales equal to the SR suite's bundle of the same case, and te's block
  scales from the te formula in float32;
- a suite bundle: the 8x4 and 128x4 scale layouts from the linear scales,
  and te's dequantization from codes, scales and amax.

Prints one line per check and exits 1 when one fails (2 without ml_dtypes)."""
import json
import os
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:
    print("skip pack_recompute: ml_dtypes is not installed")
    sys.exit(2)

PACK = sys.argv[1]
failed = []


def check(what, ok, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, "" if ok else ": " + detail))
    if not ok:
        failed.append(what)


def vectors(name):
    with open(os.path.join(PACK, name)) as f:
        return {t["name"]: t for t in json.load(f)["tables"]}


def f32(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


def same_floats(a, b):
    """bit for bit, any NaN matching any NaN"""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return bool(np.all((a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))))


def first_diff(x, got, want):
    i = int(np.flatnonzero(np.asarray(got) != np.asarray(want))[0])
    return "x=%r: pack %r, recomputed %r" % (float(x[i]), int(want[i]), int(got[i]))


# ---- codecs -------------------------------------------------------------------------------------
def codec(name, dtype, ncodes, column, keep):
    t = vectors(name + ".json")
    codes = np.arange(ncodes, dtype=np.uint8)
    values = codes.view(dtype).astype(np.float32)
    check("%s: decode of all %d codes equals ml_dtypes %s" % (name, ncodes, dtype.__name__),
          same_floats(values, f32(t["decode"]["outputs"]["value_bits"])))
    x = f32(t["encode"]["inputs"]["x_bits"])
    sel = keep(x)
    want = np.array(t["encode"]["outputs"][column])[sel]
    got = x[sel].astype(dtype).view(np.uint8).astype(np.int64)
    check("%s: encode '%s' of %d inputs equals ml_dtypes' cast" % (name, column, int(sel.sum())),
          bool(np.all(got == want)), "" if np.all(got == want) else first_diff(x[sel], got, want))


with np.errstate(invalid="ignore", over="ignore"):
    codec("e2m1", ml_dtypes.float4_e2m1fn, 16, "rn", lambda x: np.abs(x) <= 6)  # ml_dtypes does not saturate
    codec("e4m3", ml_dtypes.float8_e4m3fn, 256, "nonsat", lambda x: ~np.isnan(x))
    codec("ue8m0", ml_dtypes.float8_e8m0fnu, 256, "rn", lambda x: ~np.isnan(x))
    codec("ue5m3", ml_dtypes.float8_e5m3fnu, 256, "ml_dtypes", lambda x: ~np.isnan(x))


# ---- a suite bundle ------------------------------------------------------------------------------
def bundle(suite, case):
    d = os.path.join(PACK, suite, case)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)["metadata"]
    return meta, {n[:-4]: np.load(os.path.join(d, n)) for n in os.listdir(d) if n.endswith(".npy")}


# ---- stochastic rounding ---------------------------------------------------------------------------
M = 0xFFFFFFFF


def philox4x32_10(ctr, key):
    """Random123's Philox4x32-10 (the round constants of its philox.h)."""
    c, k = list(ctr), list(key)
    for r in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & M, (p0 >> 32) ^ c[3] ^ k[1], p0 & M]
        k = [(k[0] + 0x9E3779B9) & M, (k[1] + 0xBB67AE85) & M]
    return c


check("Philox4x32-10 (written here) gives Random123's known answer for counter 0, key 0",
      philox4x32_10([0, 0, 0, 0], [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8])


def block_bytes(seed, offset, block):
    words = philox4x32_10([offset & M, offset >> 32, block & M, block >> 32], [seed & M, seed >> 32])
    return [(w >> (8 * k)) & 0xFF for w in words for k in range(4)]


GRID = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def sr_code(y, r):
    """The README's SR rule: away from zero iff floor(256*frac) + r >= 256; saturate at 6; NaN -> 7."""
    if np.isnan(y):
        return 7
    sign = 8 if np.signbit(y) else 0
    a = abs(float(y))
    if a >= 6.0:
        return sign | 7
    i = max(j for j in range(8) if GRID[j] <= a)
    frac = (a - GRID[i]) / (GRID[i + 1] - GRID[i])  # exact: power-of-two steps
    return sign | (i + 1 if int(np.floor(256 * frac)) + r >= 256 else i)


def first_unequal(a, b):
    return next((i for i, (u, v) in enumerate(zip(a, b)) if u != v), -1)


def te_scales(x, rows, cols):
    amax = np.float32(np.max(np.abs(x)))
    s_enc = np.float32(2688) / amax if amax != 0 else np.float32(1)
    factor = s_enc * (np.float32(1) / np.float32(6))
    bam = np.abs(x.reshape(rows, cols // 16, 16)).max(axis=2).astype(np.float32)
    return (bam * factor).astype(np.float32).astype(ml_dtypes.float8_e4m3fn).view(np.uint8).reshape(-1)


for name, t in vectors("sr.json").items():
    rows, cols, seed, offset = t["rows"], t["cols"], t["seed"], t["offset"]
    rb = [block_bytes(seed, offset, r * (cols // 16) + c // 16)[c % 16] for r in range(rows) for c in range(cols)]
    check("sr.json %s: the %d random bytes are Philox(seed %d, offset %d) of each block"
          % (name, len(rb), seed, offset),
          rb == t["inputs"]["rbits"], "first at element %d" % first_unequal(rb, t["inputs"]["rbits"]))
    y = f32(t["inputs"]["scaled_bits"])
    codes = [sr_code(v, r) for v, r in zip(y, t["inputs"]["rbits"])]
    check("sr.json %s: each code is the SR rule of its scaled value and random byte" % name,
          codes == t["outputs"]["code"],
          "first at element %d" % first_unequal(codes, t["outputs"]["code"]))
    _, b = bundle("suite-te-edge-sr-cublas-128x4", name)
    q = b["data"]
    suite_codes = np.stack([q & 0xF, q >> 4], axis=-1).reshape(-1).tolist()
    check("sr.json %s: codes and scales are the rowwise bundle of the SR suite's case of that name" % name,
          suite_codes == t["outputs"]["code"] and b["scale"].reshape(-1).tolist() == t["outputs"]["scale"]
          and np.array_equal(b["x"].reshape(-1), f32(t["inputs"]["x_bits"]).reshape(-1), equal_nan=True))
    x = f32(t["inputs"]["x_bits"])
    if np.all(np.isfinite(x)):
        check("sr.json %s: block scales from te's formula (float32, ml_dtypes E4M3)" % name,
              te_scales(x, rows, cols).tolist() == t["outputs"]["scale"])


def up(n, m):
    return (n + m - 1) // m * m


meta, b = bundle("suite-te-shapes-rn-flashinfer-8x4", "shapes-17x33-1x16")
s = b["scale"]
R, C = s.shape
z = np.zeros(up(R, 8) * up(C, 4), np.uint8)
for r in range(R):
    for c in range(C):
        z[((r // 8) * (up(C, 4) // 4) + c // 4) * 32 + (r % 8) * 4 + c % 4] = s[r, c]
check("8x4 layout: scale_swizzled of shapes-17x33-1x16 is its scale in 8x4 tiles, padding 0 (%s)"
      % meta["scale_swizzle"], meta["scale_swizzle"] == "flashinfer-8x4" and
      np.array_equal(z, b["scale_swizzled"].reshape(-1)))

meta, b = bundle("suite-te-shapes-rn-cublas-128x4", "shapes-130x48-1x16")
s, zz = b["scale"], b["scale_swizzled"]
R, C = zz.shape
lin = zz.reshape(R // 128, C // 4, 32, 4, 4).transpose(0, 3, 2, 1, 4).reshape(R, C)
check("128x4 layout: TE's un-swizzle of scale_swizzled gives scale (shapes-130x48-1x16)",
      np.array_equal(lin[:s.shape[0], :s.shape[1]], s) and int(lin.sum()) == int(s.sum()))

meta, b = bundle("suite-te-shapes-rn-cublas-128x4", "shapes-128x80-1x16")
q = b["data"]
codes = np.stack([q & 0xF, q >> 4], axis=-1).reshape(q.shape[0], -1)  # element 2j: the low nibble
fp4 = codes.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
scales = b["scale"].view(ml_dtypes.float8_e4m3fn).astype(np.float32)
amax = b["amax"].astype(np.float32)[0]
d = (scales * amax) * (np.float32(1) / np.float32(2688))
deq = fp4 * np.repeat(d, 16, axis=1)
check("te dequantization: fp4(q) * ((s * amax) * fl(1/2688)) equals dequant bit for bit (shapes-128x80-1x16)",
      same_floats(deq[:, :80], b["dequant"]))

check("nvfp4kit was never imported", "nvfp4kit" not in sys.modules)
print("pack_recompute: %d failed" % len(failed))
sys.exit(1 if failed else 0)

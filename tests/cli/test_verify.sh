#!/usr/bin/env bash
# test_verify.sh - nvfp4 verify: a matching kernel output (exit 0), partial
# outputs (absent components listed), each byte-level planted bug named by
# its cause line (exit 1), another recipe named, decoded mismatch records,
# --component / --errors / --json, padded and golden-suite bundles, and bad
# input (exit 2). The bugs that need the recipe chain (ties, scale and encode
# formulas, SR) are planted in tests/check_verify.c.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
here=$(cd "$(dirname "$0")" && pwd)
K="python3 $here/vkernel.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
# run_v NAME WANT_RC NEEDLE ARGS...: exit code WANT_RC and NEEDLE in stdout
run_v() {
    local name=$1 want=$2 needle=$3; shift 3
    "$NVFP4" verify "$@" >out.txt 2>err.txt; local rc=$?
    if [ "$rc" -eq "$want" ] && grep -qF -- "$needle" out.txt err.txt; then ok "$name"
    else bad "$name: rc=$rc (want $want), '$needle' not found"; cat out.txt err.txt; fi
}

# 40 x 48 fp32 (3 blocks a row; the 128x4 swizzle pads rows and columns).
# Rows 0-19: every block has amax 12 (global amax 2688 -> S_enc 1, scale 2,
# factor 0.5), exact E2M1 ties 2*mid, -0.0, -0.1 and 0; rows 20-39 random.
python3 - <<'PY'
import random, struct
random.seed(3)
mids = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0]
x = []
for r in range(40):
    for c in range(48):
        k = c % 16
        if r < 20:
            v = 12.0 if k == 0 else -0.0 if k == 15 else -0.1 if k == 14 else 0.0 if k == 13 else \
                2 * random.choice(mids) * random.choice([-1, 1])
        else:
            v = (random.random() - 0.5) * 2 ** random.randrange(12)
        x.append(v)
x[-1] = 2688.0
open("x.f32", "wb").write(struct.pack("<%df" % len(x), *x))
PY
$NVFP4 quantize x.f32 --shape 40x48 --dtype f32 -o ref.safetensors || bad "quantize te"
$NVFP4 quantize x.f32 --shape 40x48 --dtype f32 --recipe te-pyref -o pyref.safetensors || bad "quantize te-pyref"

# A kernel that is right: every component, or any subset, in any format.
$K ref.safetensors good.safetensors
run_v "matching output" 0 "verdict: MATCH" --expected ref.safetensors --actual good.safetensors
grep -q "data               0 of 1920 differ (match)" out.txt && ok "data counts" || bad "data counts"
$K ref.safetensors part.safetensors --keep data,amax
run_v "partial output" 0 "scale              absent in actual: not compared" --expected ref.safetensors --actual part.safetensors
$NVFP4 quantize x.f32 --shape 40x48 --dtype f32 -o goodnpy >/dev/null || bad "npy folder"
run_v "npy folder output" 0 "verdict: MATCH" --expected ref.safetensors --actual goodnpy
$K ref.safetensors codes.safetensors --keep data
python3 - <<'PY'
import json, struct
# the data alone as one bare .npy of uint8 (a kernel's raw dump)
b = open("codes.safetensors", "rb").read(); n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n]); o = h["data"]["data_offsets"]; d = b[8 + n + o[0]: 8 + n + o[1]]
hdr = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d, %d), }" % tuple(h["data"]["shape"])
hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
open("codes.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + d)
PY
run_v "bare .npy of codes" 0 "verdict: MATCH" --expected ref.safetensors --actual codes.npy

# Byte-level planted bugs: each must be named by its cause line.
$K ref.safetensors sw.safetensors --bug swap-nibbles
run_v "swapped nibbles" 1 "cause swapped-nibbles:" --expected ref.safetensors --actual sw.safetensors
$K ref.safetensors nz.safetensors --bug neg-zero
run_v "-0 written as +0" 1 "cause negative-zero:" --expected ref.safetensors --actual nz.safetensors
grep -q "reasons: sign-of-zero" out.txt && ok "-0 reason is sign-of-zero" || bad "-0 reason"
grep -q "expected 0x8 (-0) actual 0x0 (0): sign-of-zero" out.txt && ok "-0 record decoded" || bad "-0 record"
$K ref.safetensors lin.safetensors --bug linear-scales
run_v "linear scales for swizzled" 1 "cause linear-for-swizzled:" --expected ref.safetensors --actual lin.safetensors
$K ref.safetensors pad.safetensors --bug pad-127
run_v "swizzle padding 127" 1 "cause padding-bytes:" --expected ref.safetensors --actual pad.safetensors
grep -q "scale_swizzled     392 of 512 differ" out.txt && ok "392 padding bytes counted" || bad "padding count"
grep -q "most hold 0x7F (127)" out.txt && ok "padding value named" || bad "padding value"
# fbgemm's swizzle index (the padded group count as the row stride; K/16 = 3 here): the scales'
# placement is decoded, by the positions of the bytes, to the catalogued permutation
$K ref.safetensors pst.safetensors --bug swizzle-padded-stride --keep data,scale_swizzled,amax
run_v "scales placed with the padded stride" 1 "cause scale-permuted: scale_swizzled: your scales are placed as layout-swizzle-padded-stride, where the cuBLAS 128x4 layout was expected (a permutation: 100.0% of the scale bytes it places agree" \
    --expected ref.safetensors --actual pst.safetensors
grep -qF "  step layout: proven: every scale byte it places agrees, and no other of the 4 placements compared does" out.txt \
    && ok "the placement is proven" || bad "placement status"
$K ref.safetensors sp1.safetensors --bug scale-plus-one --keep data,scale
run_v "one scale byte off" 1 "cause scale-off-by-one:" --expected ref.safetensors --actual sp1.safetensors
grep -qF "scale[0] row 0 col 0 block 0: block amax 12 scaled 2 expected 0x40 (2) actual 0x41 (2.25): scale-byte" out.txt \
    && ok "scale record decoded" || bad "scale record"

# Another recipe's output is named (te-pyref writes -0 as +0 and NaN as 0).
$K pyref.safetensors py.safetensors --keep data,scale
# te-pyref, modelopt, fast-math, compressed-tensors (fp32 and fp16: amax 2688 makes both global scales 1)
# and vllm give the same bytes here, and so does a te
# kernel that drops the sign of an exact -0 only (compressed-tensors' Triton cast): matched, not proven
run_v "different recipe named" 1 "output matches te-pyref rn 1x16 and 6 other candidates exactly (indistinguishable on this input)" \
    --expected ref.safetensors --actual py.safetensors
grep -qF "step recipe: consistent with elem-negzero-input-dropped, modelopt rn 1x16, fast-math rn 1x16, compressed-tensors rn 1x16, vllm rn 1x16, compressed-tensors-fp16 rn 1x16 (same bytes on this input)" \
    out.txt && ok "the recipes that give the same bytes are listed" || bad "alternatives of the recipe match"

# Values: amax and dequant.
$K ref.safetensors am.safetensors --bug flip-amax --keep amax
run_v "amax differs" 1 "amax[0] row 0 col 0: input - expected 2688 (0x45280000) actual 5376 (0x45A80000): value" \
    --expected ref.safetensors --actual am.safetensors
$K ref.safetensors dq.safetensors --bug dequant-ulp
run_v "dequant differs by one ulp" 1 "dequant            1 of 1920 differ" --expected ref.safetensors --actual dq.safetensors
grep -q "dequant\[1\] row 0 col 1: .*: value" out.txt && ok "dequant reason value" || bad "dequant reason"

# An SR golden against a sample with other random bits: every difference is sr-bits.
$NVFP4 quantize x.f32 --shape 40x48 --dtype f32 --round sr --seed 5 --offset 0 -o sr0.safetensors >/dev/null || bad "sr0"
$NVFP4 quantize x.f32 --shape 40x48 --dtype f32 --round sr --seed 5 --offset 1 -o sr1.safetensors >/dev/null || bad "sr1"
$K sr1.safetensors sr1k.safetensors --keep data,scale
run_v "SR with other bits" 1 ": sr-bits" --expected sr0.safetensors --actual sr1k.safetensors
grep -qE "^reasons: sr-bits [0-9]+$" out.txt && ok "every SR difference is sr-bits" || bad "sr-bits reasons"
grep -q "cause sr-byte-order" out.txt && bad "other bits named a byte order" || ok "no byte order claimed for other bits"

# Options.
run_v "--component data ignores the scales" 0 "verdict: MATCH" --expected ref.safetensors --actual lin.safetensors --component data
run_v "--errors 2" 1 "first 2 mismatches:" --expected ref.safetensors --actual sw.safetensors --errors 2
$NVFP4 verify --expected ref.safetensors --actual nz.safetensors --json >j.json; rc=$?
python3 - <<'PY' && [ $rc -eq 1 ] && ok "--json is valid and complete" || bad "--json (rc=$rc)"
import json
j = json.load(open("j.json"))
o = j["outputs"][0]
assert j["verdict"] == "mismatch"
assert o["components"]["data"]["status"] == "mismatch" and o["components"]["scale"]["status"] == "match"
assert o["causes"][0]["cause"] == "negative-zero"
m = o["first_mismatches"][0]
assert m["reason"] == "sign-of-zero" and m["expected_code"] == 8 and m["actual_code"] == 0, m
PY

# A golden suite with padding and columnwise outputs verifies against itself.
$NVFP4 golden --suite shapes --recipe te --out g >/dev/null 2>&1 || bad "golden shapes"
n=0
for b in g/*.safetensors; do
    $NVFP4 verify --expected "$b" --actual "$b" >/dev/null 2>&1 || { bad "self-verify $b"; continue; }
    n=$((n + 1))
done
[ $n -gt 3 ] && ok "$n golden shape bundles (padded, columnwise) verify against themselves" || bad "golden self-verify ($n)"

# Bad input: exit 2 with a message.
$K ref.safetensors tr.safetensors --bug truncate-data --keep data
run_v "short data is a size mismatch" 1 "data: holds 936 bytes where 960 were expected: size" --expected ref.safetensors --actual tr.safetensors
run_v "missing --actual" 2 "--expected BUNDLE and --actual FILE are required" --expected ref.safetensors
run_v "not a bundle" 2 "not a golden bundle" --expected good.safetensors --actual good.safetensors
run_v "unreadable actual" 2 "nope.safetensors" --expected ref.safetensors --actual nope.safetensors
run_v "bad component" 2 "bad --component 'codes'" --expected ref.safetensors --actual good.safetensors --component codes
$K ref.safetensors none.safetensors --keep x_nothing
run_v "no component at all" 2 "holds none of the bundle's components" --expected ref.safetensors --actual none.safetensors
python3 - <<'PY'
import struct, json
def st(path, tensors):
    h, off, blob = {}, 0, b""
    for k, (dt, shape, data) in tensors.items():
        h[k] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(data)]}
        off += len(data); blob += data
    j = json.dumps(h).encode(); j += b" " * ((8 - len(j) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(j)) + j + blob)
st("f32data.safetensors", {"data": ("F32", [40, 24], bytes(40 * 24 * 4))})
st("amax2.safetensors", {"amax": ("F32", [2], bytes(8))})
st("amax0.safetensors", {"amax": ("F32", [0], b"")})
# a kernel that writes a per-row amax (40 values) beside right codes and scales
b = open("good.safetensors", "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
part = lambda k: b[8 + n + h[k]["data_offsets"][0]: 8 + n + h[k]["data_offsets"][1]]
st("rowamax.safetensors", {"data": ("U8", h["data"]["shape"], part("data")),
                           "scale": ("U8", h["scale"]["shape"], part("scale")),
                           "amax": ("F32", [40], part("amax") * 40)})
st("dqi32.safetensors", {"dequant": ("I32", [40, 48], bytes(40 * 48 * 4))})
PY
run_v "codes must be bytes" 2 "component 'data' is F32; codes and scales are bytes (U8)" --expected ref.safetensors --actual f32data.safetensors
run_v "two amax values: reason size, not an input error" 1 "amax: holds 2 values where 1 was expected: size" \
    --expected ref.safetensors --actual amax2.safetensors
run_v "an empty amax is an input error" 2 "component 'amax' holds no value" --expected ref.safetensors --actual amax0.safetensors
run_v "per-row amax: the case is still analysed" 1 \
    "amax               WRONG SIZE: component 'amax' holds 40 values where 1 was expected" \
    --expected ref.safetensors --actual rowamax.safetensors
grep -q "data               0 of 1920 differ (match)" out.txt && grep -q "scale              0 of 120 differ (match)" out.txt \
    && grep -q "^reasons: size 1$" out.txt && ok "per-row amax: codes and scales still compared" \
    || { bad "per-row amax: codes and scales"; cat out.txt; }
$NVFP4 verify --expected ref.safetensors --actual rowamax.safetensors --json >ra.json; rc=$?
python3 - <<'PY' && [ $rc -eq 1 ] && ok "per-row amax --json: size finding, data and scale compared" || bad "per-row amax --json (rc=$rc)"
import json
o = json.load(open("ra.json"))["outputs"][0]
a = o["components"]["amax"]
assert a["status"] == "mismatch" and a["compared"] == 0 and a["expected_size"] == 1 and a["actual_size"] == 40, a
assert a["size_finding"] == "component 'amax' holds 40 values where 1 was expected", a
assert o["components"]["data"] == {"status": "match", "compared": 1920, "mismatches": 0}, o["components"]["data"]
assert o["reasons"] == {"size": 1} and o["first_mismatches"][0]["reason"] == "size"
PY
run_v "dequant must be F32" 2 "component 'dequant' is I32; it must be F32" --expected ref.safetensors --actual dqi32.safetensors
# A suite's MANIFEST given as --expected: one message, which names --suite.
"$NVFP4" verify --expected g/MANIFEST --actual good.safetensors >out.txt 2>err.txt; rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && ! grep -q "header length" err.txt \
    && grep -qF "g/MANIFEST is a golden MANIFEST (the list of a suite's bundles), not a bundle: check every case with --suite g/MANIFEST --actual-dir OUTS" err.txt \
    && ok "MANIFEST as --expected: one message" || { bad "MANIFEST as --expected (rc $rc)"; cat err.txt; }
# flashinfer-pertoken: a FlashInfer kernel returns codes, scales and per-token scales (no amax);
# the amax line compares per_token_scale (row 0 amax 6: 1/448 = 0x3B124925; row 1 zero: 0), and
# a kernel that returns the row amax there (TE's convention) is a value mismatch in row 0 only.
python3 - <<'PY'
import numpy as np
x = np.zeros((2, 16), np.float32); x[0, :5] = [6, 3, 1, 0.5, -2]; np.save("pt.npy", x)
PY
"$NVFP4" quantize pt.npy -o pt.safetensors --recipe flashinfer-pertoken 2>/dev/null || bad "quantize flashinfer-pertoken"
python3 - <<'PY'
from safetensors.numpy import load_file, save_file
d = load_file("pt.safetensors")
assert d["per_token_scale"].view("u4").tolist() == [0x3B124925, 0], d["per_token_scale"]
save_file({k: d[k] for k in ("data", "scale", "per_token_scale")}, "fi.safetensors")
save_file({"data": d["data"], "scale": d["scale"], "per_token_scale": d["amax"]}, "fi_amax.safetensors")
PY
run_v "flashinfer-pertoken: per-token scales match" 0 "amax               0 of 2 differ (match)" --expected pt.safetensors --actual fi.safetensors
run_v "flashinfer-pertoken: the row amax in place of the per-token scale" 1 "amax[0] row 0 col 0: input - expected 0.002232143 (0x3B124925) actual 6 (0x40C00000): value" --expected pt.safetensors --actual fi_amax.safetensors
run_v "--help" 0 "usage: nvfp4 verify" --help
exit $fail

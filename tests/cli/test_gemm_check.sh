#!/usr/bin/env bash
# test_gemm_check.sh - nvfp4 gemm-check: the te order is within the bound and
# bit-identical to te; the exactly rounded result (another order) is within
# the bound but not te; a perturbed element is outside (exit 1) and listed;
# a bare .npy works; bad input exits 2.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
run_g() {
    local name=$1 want=$2 needle=$3; shift 3
    "$NVFP4" gemm-check "$@" >out.txt 2>err.txt; local rc=$?
    if [ "$rc" -eq "$want" ] && grep -qF -- "$needle" out.txt err.txt; then ok "$name"
    else bad "$name: rc=$rc (want $want), '$needle' not found"; cat out.txt err.txt; fi
}
python3 - <<'PY'
import random, struct
random.seed(21)
# every 16-element block at its own power-of-two magnitude, so that the fp32
# sum of the K/16 exact partials rounds (and the order matters)
for name, rows in (("a", 24), ("b", 20)):
    x = []
    for r in range(rows):
        for b in range(32):
            s = 2.0 ** random.randrange(-12, 12)
            x += [random.gauss(0, 1) * s for _ in range(16)]
    open(name + ".f32", "wb").write(struct.pack("<%df" % len(x), *x))
PY
$NVFP4 quantize a.f32 --shape 24x512 --dtype f32 -o A.safetensors >/dev/null || bad "quantize A"
$NVFP4 quantize b.f32 --shape 20x512 --dtype f32 -o B.safetensors >/dev/null || bad "quantize B"
$NVFP4 gemm --a A.safetensors --b B.safetensors -o te.safetensors >/dev/null || bad "gemm te"
$NVFP4 gemm --a A.safetensors --b B.safetensors -o ex.safetensors --order exact >/dev/null || bad "gemm exact"
G="--a A.safetensors --b B.safetensors"
run_g "te order within the bound" 0 "within the rigorous any-order fp32 bound: 480 of 480" $G --actual te.safetensors
grep -q "bit-identical to the te order (sequential fp32 over K): 480 of 480 (the kernel reproduces the te order exactly)" out.txt \
    && ok "te order recognized" || bad "te order recognized"
run_g "another order within the bound" 0 "verdict: WITHIN BOUND" $G --actual ex.safetensors
n=$(sed -n 's/.*bit-identical to the te order (sequential fp32 over K): \([0-9]*\) of 480.*/\1/p' out.txt)
[ -n "$n" ] && [ "$n" -lt 480 ] && ok "exact rounding differs from te in $((480 - n)) of 480" || bad "te count for exact order ($n)"
python3 - <<'PY'
import json, struct
b = open("te.safetensors", "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
o = h["d"]["data_offsets"]; d = bytearray(b[8 + n + o[0]: 8 + n + o[1]])
v = struct.unpack_from("<f", d, 4 * 7)[0]
struct.pack_into("<f", d, 4 * 7, v * 1.001 + 1e-3)
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (24, 20), }"
hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
open("bad.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + bytes(d))
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (24, 19), }"
hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
open("short.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + bytes(d[:24 * 19 * 4]))
PY
run_g "a perturbed element is outside the bound" 1 "within the rigorous any-order fp32 bound: 479 of 480  <-- outside" $G --actual bad.npy
grep -q "^  (0, 7): actual" out.txt && ok "the element is listed at (0, 7)" || bad "listing"
grep -q "verdict: OUTSIDE BOUND" out.txt && ok "verdict outside" || bad "verdict outside"
run_g "wrong shape" 2 "holds 456 values; D is 24 x 20" $G --actual short.npy
run_g "missing operand" 2 "--a BUNDLE, --b BUNDLE and --actual D are required" --a A.safetensors --actual te.safetensors
run_g "K mismatch" 2 "" --a A.safetensors --b A.f32 --actual te.safetensors
exit $fail

#!/usr/bin/env bash
# test_explain_block.sh - nvfp4 explain-block: the te walk of a block of ties
# (global and block scale, encode factor, codes with the tie rule), an
# underflowing block, another recipe, and SR codes that equal the quantizer's
# bundle bytes for the same seed/offset; bad input exits 2.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
has() { grep -qF -- "$2" out.txt && ok "$1" || { bad "$1: '$2' not in output"; cat out.txt; }; }
run_e() {
    local name=$1 want=$2; shift 2
    "$NVFP4" explain-block "$@" >out.txt 2>&1; local rc=$?
    [ "$rc" -eq "$want" ] && ok "$name (exit $want)" || { bad "$name: rc=$rc (want $want)"; cat out.txt; }
}
# row 0: the grid; row 1: ties 0.25 .. 5 and their negatives; row 2: 2688 then
# tiny values (global amax 2688, S_enc = 1: block 1 of row 2 underflows).
python3 - <<'PY'
import struct
r0 = [0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6]
r1 = [6, .25, .75, 1.25, 1.75, 2.5, 3.5, 5, -6, -.25, -.75, -1.25, -1.75, -2.5, -3.5, -5]
x = r0 + r0 + r1 + r1 + [2688.0] + [0.5] * 15 + [1e-7 * (k + 1) for k in range(16)]
open("x.f32", "wb").write(struct.pack("<%df" % len(x), *x))
PY
X="--input x.f32 --shape 3x32 --dtype f32"
run_e "ties block" 0 $X --row 1 --block 0
has "global amax" "global amax          2688"
has "S_enc" "S_enc = fminf(2688/amax, FLT_MAX) = 1, S_dec = 1/S_enc = 1"
has "block amax" "block amax           6"
has "scale before rounding" "before rounding    1"
has "scale after rounding" "after rounding     0x38 = 1"
has "encode factor" "factor 1"
has "tie 0.25 goes to even" "tie: to the even code"
grep -E "^  1 +0.25 +0.25 " out.txt | grep -q " 0x0 .*tie: to the even code" && ok "tie 0.25 -> code 0" || bad "0.25 code"
grep -E "^  2 +0.75 +0.75 " out.txt | grep -q " 0x2 .*tie: to the even code" && ok "tie 0.75 -> code 2 (1.0)" || bad "0.75 code"
has "block error line" "block error          max |dequant - x| ="
run_e "underflowing block" 0 $X --row 2 --block 1
has "underflow noted" "(underflow: the block scale is 0)"
grep -E "^  16 " out.txt | grep -q " 0x7 .*saturates to +-6  (scale underflow)" && ok "te saturates underflowing elements to +6" || bad "underflow code"
run_e "torchao clamps the scale" 0 $X --row 2 --block 1 --recipe torchao
has "torchao scale 2^-6" "after rounding     0x08 = 0.015625"
run_e "mxfp4 block 1x32" 0 $X --row 1 --block 0 --recipe mxfp4-rceil
has "32 columns" "covers columns 0..31"
has "UE8M0 scale" "after rounding     0x7F = 1"
run_e "16x16 tile" 0 $X --row 1 --block 1 --tile 16x16
has "tile" "of the 16-row tile"

# SR codes equal the quantizer's for the same seed and offset.
$NVFP4 quantize x.f32 --shape 3x32 --dtype f32 --round sr --seed 9 --offset 4 -o sr.safetensors >/dev/null || bad "quantize sr"
run_e "SR block" 0 $X --row 2 --block 0 --round sr --seed 9 --offset 4
python3 - <<'PY' && ok "explain-block SR codes equal the bundle's" || bad "SR codes differ from the bundle"
import json, re, struct
b = open("sr.safetensors", "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
o = h["data"]["data_offsets"]; d = b[8 + n + o[0]: 8 + n + o[1]]
row = 2
want = [(d[(row * 32 + c) // 2] >> (4 * (c & 1))) & 15 for c in range(16)]
got = [int(m.group(1), 16) for m in re.finditer(r"^  \d+ +\S+ +\S+ +0x([0-9A-F]+) ", open("out.txt").read(), re.M)]
assert got == want, (got, want)
PY
run_e "row outside" 2 $X --row 3 --block 0
has "row message" "--row 3 is outside the 3 rows"
run_e "block outside" 2 $X --row 0 --block 2
run_e "unknown recipe" 2 $X --row 0 --block 0 --recipe nope
run_e "missing --row" 2 $X --block 0
run_e "SR on a recipe without SR" 2 $X --row 0 --block 0 --recipe exact --round sr
exit $fail

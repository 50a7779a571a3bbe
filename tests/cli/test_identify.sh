#!/usr/bin/env bash
# test_identify.sh - nvfp4 identify: each recipe's output (and block shape, and
# SR with its seed) is identified by name; a corrupted output is not, and the
# nearest variant is named; bad input exits 2.
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
run_i() {
    local name=$1 want=$2 needle=$3; shift 3
    "$NVFP4" identify "$@" >out.txt 2>err.txt; local rc=$?
    if [ "$rc" -eq "$want" ] && grep -qF -- "$needle" out.txt err.txt; then ok "$name"
    else bad "$name: rc=$rc (want $want), '$needle' not found"; cat out.txt err.txt; fi
}

# 32 x 64 fp32 that separates the recipes: underflowing blocks (torchao clamps
# the scale to 2^-6, modelopt replaces 0 by 1, te stores 0 and saturates),
# blocks of -0 and -1e-9 (te-pyref writes +0), and random blocks.
python3 - <<'PY'
import random, struct
random.seed(9)
x = []
for r in range(32):
    for c in range(64):
        blk = (r * 4 + c // 16) % 4
        if blk == 0: v = random.gauss(0, 1) * 1e-6
        elif blk == 1: v = -0.0 if c % 2 else -1e-9
        else: v = random.gauss(0, 1) * 2 ** random.randrange(-4, 8)
        x.append(v)
x[5] = 1000.0
open("x.f32", "wb").write(struct.pack("<%df" % len(x), *x))
PY
X="--expected-input x.f32 --shape 32x64 --dtype f32"
for r in torchao modelopt te-pyref; do
    $NVFP4 quantize x.f32 --shape 32x64 --dtype f32 --recipe $r -o $r.safetensors >/dev/null || bad "quantize $r"
    $K $r.safetensors k_$r.safetensors --keep data,scale
    run_i "identifies $r" 0 "identified: the kernel implements $r rn 1x16" $X --actual k_$r.safetensors
done
$NVFP4 quantize x.f32 --shape 32x64 --dtype f32 -o te.safetensors >/dev/null
$K te.safetensors k_te.safetensors --keep data
run_i "identifies te from data alone" 0 "identified: the kernel implements te rn 1x16" $X --actual k_te.safetensors
grep -q "ranked by matching bytes of data:" out.txt && ok "ranks on the data present" || bad "ranked components"
grep -qE "^  1    te rn 1x16 +100.0000% +1024/1024 " out.txt && ok "rank 1 row" || bad "rank 1 row"
$NVFP4 quantize x.f32 --shape 32x64 --dtype f32 --block 16x16 -o t2.safetensors >/dev/null
$K t2.safetensors k_t2.safetensors --keep data,scale
run_i "identifies the 16x16 block" 0 "identified: the kernel implements te rn 16x16" $X --actual k_t2.safetensors
$NVFP4 quantize x.f32 --shape 32x64 --dtype f32 --recipe mxfp4-rceil -o mx.safetensors >/dev/null
$K mx.safetensors k_mx.safetensors --keep data,scale
run_i "identifies mxfp4-rceil" 0 "identified: the kernel implements mxfp4-rceil rn 1x32" $X --actual k_mx.safetensors
$NVFP4 quantize x.f32 --shape 32x64 --dtype f32 --round sr --seed 5 --offset 2 -o sr.safetensors >/dev/null
$K sr.safetensors k_sr.safetensors --keep data,scale
run_i "identifies SR with its seed" 0 "identified: the kernel implements te sr 1x16" $X --actual k_sr.safetensors --seed 5 --offset 2
run_i "SR with another seed is not identified" 1 "not identified" $X --actual k_sr.safetensors --seed 6 --offset 2
$NVFP4 quantize x.f32 --shape 32x64 --dtype f32 --columnwise -o col.safetensors >/dev/null
$K col.safetensors k_col.safetensors --keep data_t,scale_t
run_i "identifies a columnwise output" 0 "identified: the kernel implements te rn 1x16" $X --actual k_col.safetensors --columnwise
# one shape convention (docs/verify.md): the orientation as stored, so the columnwise output of
# this 32 x 64 input is 64 x 32 in identify's ranking and in verify's report of the same file
run_i "identify gives the columnwise output's stored shape" 0 "of the columnwise output (64 x 32)," \
    $X --actual k_col.safetensors --columnwise
"$NVFP4" verify --expected col.safetensors --actual k_col.safetensors >out.txt 2>&1
grep -q "^columnwise output (64 x 32, recipe te" out.txt && ok "verify gives the same shape, 64 x 32" ||
    { bad "verify's shape of the columnwise output is not 64 x 32"; cat out.txt; }
$K te.safetensors k_sw.safetensors --keep data,scale --bug swap-nibbles
run_i "a catalogued bug is identified as its mutant" 0 "identified: the kernel implements te rn 1x16 [mutant layout-nibble-swap]" \
    $X --actual k_sw.safetensors
grep -q "^chain: te + layout-nibble-swap (te rn 1x16) reproduces every byte" out.txt && ok "chain names the deviation" || bad "chain of the nibble swap"
grep -qE "^  layout +proven +layout-nibble-swap$" out.txt && ok "the layout step is proven" || bad "layout step status"
# two deviations at once: the nibble swap and -0 written as +0 (no single mutant matches)
$K te.safetensors k_sn.safetensors --keep data,scale --bug swap-nibbles
$K k_sn.safetensors k_sn2.safetensors --keep data,scale --bug neg-zero
run_i "two deviations are one chain" 0 "chain: te + elem-negzero-dropped + layout-nibble-swap (te rn 1x16) reproduces every byte" \
    $X --actual k_sn2.safetensors
grep -q "^not identified" out.txt && ok "no single variant matches the two" || bad "a single variant matched two deviations"
grep -qE "^  special-values +proven +elem-negzero-dropped$" out.txt && ok "special-values proven" || bad "special-values step"
$NVFP4 identify $X --actual k_sn2.safetensors --json >jc.json
python3 - <<'PY' && ok "--json chain per step" || bad "--json chain per step"
import json
c = json.load(open("jc.json"))["chain"]
assert c["exact"] is True and c["recipe"] == "te", c
assert c["deviations"] == ["elem-negzero-dropped", "layout-nibble-swap"], c["deviations"]
steps = {s["step"]: s for s in c["steps"]}
assert steps["layout"]["status"] == "proven" and steps["layout"]["rule"] == "layout-nibble-swap"
assert steps["special-values"]["status"] == "proven" and "the nearest" in steps["special-values"]["evidence"]
assert all(s["status"] in ("proven", "ambiguous") for s in c["steps"])
PY
run_i "--no-mutants: a corrupted output names the nearest" 1 "the nearest is te rn 1x16" $X --actual k_sw.safetensors --no-mutants
run_i "--top 3 prints 3 rows" 1 "  3    " $X --actual k_sw.safetensors --top 3 --no-mutants
grep -q "^  4    " out.txt && bad "--top 3 printed a 4th row" || ok "--top 3 stops at 3"
$NVFP4 identify $X --actual k_torchao.safetensors --json --top 3 >j.json; rc=$?
python3 - <<'PY' && [ $rc -eq 0 ] && ok "--json ranking" || bad "--json ranking (rc=$rc)"
import json
j = json.load(open("j.json"))
assert j["identified"] == "torchao rn 1x16", j["identified"]
assert len(j["ranking"]) == 3 and j["ranking"][0]["fraction"] == 1.0
assert j["ranking"][0]["data_total"] == 1024 and j["ranking"][0]["scale_total"] == 128
PY
run_i "missing --actual" 2 "--expected-input X and --actual FILE are required" $X
run_i "a columnwise-only file is the columnwise output" 0 "of the columnwise output" $X --actual k_col.safetensors
$K te.safetensors k_am.safetensors --keep amax
run_i "no codes in the file" 2 "holds no data, scale or scale_swizzled" $X --actual k_am.safetensors
run_i "bad --top" 2 "bad --top" $X --actual k_te.safetensors --top 0
# the options of quantize: the README tour's columnwise RHT bundle is identified with no option
# (only *_t components: the columnwise output; a columnwise kernel may apply the RHT), and with --rht
$NVFP4 quantize x.f32 --shape 32x64 --dtype f32 --columnwise --rht -o rht.safetensors 2>/dev/null
run_i "identifies the README tour's columnwise RHT bundle" 0 "identified: the kernel implements te rn 1x16 rht" \
    $X --actual rht.safetensors
run_i "--rht" 0 "identified: the kernel implements te rn 1x16" $X --actual rht.safetensors --rht --no-mutants
grep -q "rowwise output" out.txt && bad "--rht ranks the rowwise output" || ok "--rht ranks the columnwise output"
$NVFP4 quantize x.f32 --shape 32x64 --dtype f32 --columnwise --rht --rht-signs seed:5 -o rhts.safetensors 2>/dev/null
run_i "--rht-signs seed:N" 0 "identified: the kernel implements te rn 1x16" $X --actual rhts.safetensors --rht --rht-signs seed:5
run_i "other signs are not te's" 1 "not identified" $X --actual rhts.safetensors --rht --no-mutants
run_i "--block 1x32 restricts the blocks" 1 "1x32" $X --actual k_te.safetensors --block 1x32 --no-mutants
grep -q " 1x16 " out.txt && bad "--block 1x32 ranked a 1x16 variant" || ok "--block 1x32 ranks 1x32 variants only"
run_i "--rowwise with --rht" 2 "--rowwise excludes" $X --actual rht.safetensors --rowwise --rht
run_i "bad --rht-signs" 2 "bad --rht-signs" $X --actual rht.safetensors --rht --rht-signs maybe
exit $fail

#!/usr/bin/env bash
# test_mutants.sh - the mutant catalog against the shipped goldens: for every
# recipe family (and both roundings where the committed reference/ has them),
# `golden --mutants` over `--suite all` kills and names every catalogued
# mutant (exit 0), and the `mutants` suite alone does too (for te in `make check`;
# for every recipe with NVFP4_MUTANTS_FULL=1, `make check-mutants-full`: it doubles
# the test's 2 minutes); a suite that
# misses mutants exits 1 and says SURVIVES; `table --mutants` lists them; the separate-N
# cases single out what the kill cases leave `consistent with` another candidate.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
n=$($NVFP4 table --mutants | head -1 | awk '{print $1}')
[ "$n" -ge 40 ] && ok "table --mutants lists $n mutants" || bad "table --mutants: $n mutants"
for r in te te-pyref torchao torchao-0.13-0.16 modelopt mxfp4-floor mxfp4-rceil te-4over6 te-4over6-mse-fast te-4over6-448 \
    te-rowscaled te-pow2 ggml mxfp4-ceil mxfp4-even mxfp8 mxfp8-floor mslk flashinfer-pertoken te-ue5m3 te-ue5m3-1level; do
    rounds="rn sr"
    case $r in te-4over6* | te-pow2 | ggml | mxfp8* | mslk | flashinfer-pertoken) rounds=rn ;; esac  # RN-only recipes
    suites=all
    [ "$r" = te ] || [ "${NVFP4_MUTANTS_FULL:-0}" = 1 ] && suites="all mutants"
    for rd in $rounds; do
        for s in $suites; do
            $NVFP4 golden --mutants --suite $s --recipe $r --round $rd --json >rep.json 2>/dev/null
            rc=$?
            read -r rel kil nam <<<"$(python3 -c 'import json,sys; d=json.load(open("rep.json")); print(d["relevant"], d["killed"], d["named"])')"
            if [ "$rc" -eq 0 ] && [ "$rel" -gt 0 ] && [ "$rel" = "$kil" ] && [ "$rel" = "$nam" ]; then
                ok "suite $s kills and names all $rel mutants of $r $rd"
            else
                bad "suite $s, $r $rd: rc $rc, $kil of $rel killed, $nam named"
                python3 -c 'import json; [print("   survives:", m["mutant"]) for m in json.load(open("rep.json"))["mutants"] if not m["killed_by"] or not m["named"]]'
            fi
        done
    done
done
# separating cases (docs/verify.md, "Separating cases"): on te RN, global-torch-rdiv is killed by
# random-bf16-exact, where other global-scale formulas give its bytes, and singled out by a
# separate-N case; te-rowscaled rn = amax-per-row (the same formula) is listed, not dropped
$NVFP4 golden --mutants --recipe te --round rn --json >sep.json 2>/dev/null
python3 - <<'PY' && ok "te rn: separate-N cases single out global-torch-rdiv; te-rowscaled rn = amax-per-row listed" \
    || bad "te rn separating cases"
import json
d = json.load(open("sep.json"))
m = {e["mutant"]: e for e in d["mutants"]}
assert m["global-torch-rdiv"]["killed_by"] == "random-bf16-exact", m["global-torch-rdiv"]
assert m["global-torch-rdiv"]["singled_out_by"].startswith("separate-"), m["global-torch-rdiv"]
assert m["layout-nibble-swap"]["singled_out_by"] == "edge-e2m1-ties", m["layout-nibble-swap"]
assert len(d["separating"]) >= 1 and all(s["case"].startswith("separate-") for s in d["separating"]), d["separating"]
assert ["te-rowscaled rn", "amax-per-row"] in d["unseparated"], d["unseparated"]
assert "global-torch-rdiv" not in d["not_singled_out"] and "te-rowscaled rn" in d["not_singled_out"], d["not_singled_out"]
PY
$NVFP4 golden --mutants --recipe te --round rn >sep.txt 2>/dev/null
grep -q '^separating case separate-1: singles out ' sep.txt && grep -q '^not separated: 3 pairs .*te-rowscaled rn = flashinfer-pertoken rn; te-rowscaled rn = amax-per-row' sep.txt \
    && ok "golden --mutants prints the separating cases and the pairs not separated" || { bad "separating text"; tail -5 sep.txt; }
$NVFP4 golden --suite all --recipe te --out gsep 2>gsep.err && ls gsep/separate-1.safetensors >/dev/null \
    && grep -q 'pairs of candidates no case separates .*te-rowscaled rn = amax-per-row' gsep.err \
    && ok "golden --suite all writes separate-N cases and says on stderr what no case separates" || { bad "golden stderr"; tail -3 gsep.err; }
# the check can fail: the edge suite alone has no RHT or 16x16 case
$NVFP4 golden --mutants --suite edge --recipe te >edge.txt 2>/dev/null
rc=$?
[ "$rc" -eq 1 ] && grep -q 'rht-missing .*SURVIVES' edge.txt && ok "a suite that misses mutants exits 1 (SURVIVES)" \
    || bad "edge-only report: rc $rc"
$NVFP4 golden --mutants --out x >/dev/null 2>&1; [ $? -eq 2 ] && ok "--mutants with --out is a usage error" || bad "--mutants --out"
# the mutants suite on disk: every bundle is a case that kills a mutant, MANIFEST checks
$NVFP4 golden --suite mutants --recipe te --out gm 2>/dev/null && (cd gm && sha256sum --quiet -c MANIFEST) \
    && ok "golden --suite mutants writes a checked suite ($(grep -vc '^#' gm/MANIFEST) cases)" || bad "suite mutants"
# a kernel with a catalogued bug, planted with numpy: verify names it in one line
$NVFP4 golden --suite edge --recipe te --out ge 2>/dev/null
python3 - <<'PY' || bad "planting bugs with numpy"
from safetensors.numpy import load_file, save_file
import numpy as np
d = load_file("ge/edge-e2m1-ties.safetensors")
a = d["data"]
save_file({"data": ((a >> 4) | (a << 4)).astype(np.uint8), "scale": d["scale"]}, "swap.safetensors")
lo, hi = a & 15, a >> 4
lo[lo == 8] = 0
hi[hi == 8] = 0
save_file({"data": (lo | (hi << 4)).astype(np.uint8)}, "negzero.safetensors")
z = d["scale_swizzled"].copy().reshape(-1)
rows, cols = d["scale"].shape  # 16 x 3: one 128x4 tile, row r column c at byte 16 r + c
real = np.zeros(z.size, bool)
for r in range(rows):
    real[16 * r + np.arange(cols)] = True
z[~real] = 0x7F
save_file({"scale_swizzled": z}, "pad.safetensors")
PY
for p in "swap layout-nibble-swap" "negzero elem-negzero-dropped" "pad layout-swizzle-pad-7f"; do
    set -- $p
    $NVFP4 verify --expected ge/edge-e2m1-ties.safetensors --actual "$1.safetensors" >"$1.txt"
    rc=$?
    [ "$rc" -eq 1 ] && grep -q "^cause known-bug: $2: your kernel computes " "$1.txt" && ok "verify names $2" \
        || { bad "verify on $1: rc $rc"; cat "$1.txt"; }
done
exit $fail

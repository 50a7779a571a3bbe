#!/usr/bin/env bash
# test_golden.sh - nvfp4 golden: deterministic suites, MANIFEST that checks,
# levels, seeds, every format, and usage errors.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
$NVFP4 golden --suite all --recipe te --out g1 2>/dev/null || bad "golden all"
$NVFP4 golden --suite all --recipe te --out g2 2>/dev/null
diff -r g1 g2 >/dev/null && ok "two runs are byte-identical" || bad "golden not deterministic"
(cd g1 && sha256sum --quiet -c MANIFEST) && ok "MANIFEST checks" || bad "MANIFEST"
grep -q '^# command: nvfp4 golden --suite all --recipe te --level 1 --seed 1 --round rn$' g1/MANIFEST \
    && grep -q '^# tool: nvfp4kit ' g1/MANIFEST && grep -q '^# recipe: te$' g1/MANIFEST && ok "MANIFEST header" || bad "MANIFEST header"
n=$(grep -vc '^#' g1/MANIFEST)
# 11 edge, 6 random, 15 shapes (they kill every te RN mutant: no mutants-* case) and 5 separate-N (reference/te-rn)
[ "$n" -eq 37 ] && [ "$(grep -c '  separate-[1-5].safetensors$' g1/MANIFEST)" -eq 5 ] && ok "37 bundles at level 1 (5 separate-N)" \
    || bad "expected 37 bundles (5 separate-N), got $n"
for c in edge-e2m1-ties edge-e4m3-scale-ties edge-zero-blocks edge-underflow edge-outliers edge-nan-neg-zero \
         edge-amax-zero edge-amax-inf edge-amax-subnormal edge-amax-tiny edge-amax-huge random-normal \
         random-laplace random-channel-outliers random-bf16-exact random-bf16-input random-normal-rht \
         shapes-130x48-1x16 shapes-128x80-16x16 shapes-17x33-1x32; do
    [ -f "g1/$c.safetensors" ] || bad "missing case $c"
done
grep -q '"case":"edge-e2m1-ties"' g1/edge-e2m1-ties.safetensors && grep -q '"generator":"nvfp4 golden' g1/edge-e2m1-ties.safetensors \
    && ok "case and generator in the metadata" || bad "bundle metadata"
# Level 2 is a superset in count; another seed changes the random cases but not the edge ones.
$NVFP4 golden --suite edge --recipe te --out l2 --level 2 2>/dev/null
[ "$(stat -c %s l2/edge-e2m1-ties.safetensors)" -gt "$(stat -c %s g1/edge-e2m1-ties.safetensors)" ] && ok "level 2 larger" || bad "level 2"
[ "$(grep -vc '^#' l2/MANIFEST)" -eq 11 ] && ok "edge suite alone: 11 bundles" || bad "edge suite count"
$NVFP4 golden --suite all --recipe te --out s2 --seed 2 2>/dev/null
cmp -s g1/random-normal.safetensors s2/random-normal.safetensors && bad "seed does not change random data" || ok "seed changes random data"
python3 - <<'PY' && ok "edge cases independent of seed (x and data equal)" || bad "edge depends on seed"
import json, struct
def comp(f, name):
    b = open(f, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    o = h[name]["data_offsets"]; return b[8 + n + o[0]: 8 + n + o[1]]
for c in ("x", "data", "scale", "data_t"):
    assert comp("g1/edge-e2m1-ties.safetensors", c) == comp("s2/edge-e2m1-ties.safetensors", c), c
PY
# SR suites: reproducible, and different from RN.
$NVFP4 golden --suite random --recipe te --round sr --out sr1 2>/dev/null
$NVFP4 golden --suite random --recipe te --round sr --out sr2 2>/dev/null
diff -r sr1 sr2 >/dev/null && ok "SR suite reproducible" || bad "SR suite"
cmp -s sr1/random-normal.safetensors g1/random-normal.safetensors && bad "SR equals RN" || ok "SR differs from RN"
# Folder formats with per-file hashes.
$NVFP4 golden --suite edge --recipe mxfp4-rceil --format bin --out gb 2>/dev/null
[ -f gb/edge-outliers/meta.json ] && [ -f gb/edge-outliers/data.bin ] && (cd gb && sha256sum --quiet -c MANIFEST) \
    && ok "bin-folder suite" || bad "bin-folder suite"
# Every bundle loads back through dequantize.
$NVFP4 dequantize g1/shapes-130x48-1x16.safetensors -o dq.npy && grep -q "'shape': (130, 48)" dq.npy && ok "dequantize a golden" || bad "dequantize golden"
# Usage errors.
$NVFP4 golden --suite nope --recipe te --out x 2>err.txt; [ $? -eq 2 ] && grep -q "bad --suite" err.txt && ok "bad suite" || bad "bad suite"
$NVFP4 golden --suite edge --recipe nope --out x 2>err.txt; [ $? -eq 2 ] && grep -q "unknown recipe" err.txt && ok "bad recipe" || bad "bad recipe"
$NVFP4 golden --suite edge --recipe te 2>err.txt; [ $? -eq 2 ] && grep -q "need --suite and --out" err.txt && ok "missing --out" || bad "missing --out"
$NVFP4 golden --suite edge --level 3 --out x 2>err.txt; [ $? -eq 2 ] && ok "bad level" || bad "bad level"
exit $fail

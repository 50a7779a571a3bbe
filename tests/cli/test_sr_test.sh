#!/usr/bin/env bash
# test_sr_test.sh - nvfp4 sr-test on samples from the reference SR quantizer
# (must pass: statistically, and bit-exactly with the right seed/offset, also
# columnwise and for 1x32 blocks), and on broken "kernels" built from them:
# repeated samples and round-to-nearest (dependent), a max-of-two-samples
# kernel (biased up), a kernel that changes the scales; bad input exits 2.
# Fake kernels (numpy) that follow another SR rule must have it named: a
# float uniform (more than 8 random bits), one byte per block, RN, RZ and a
# threshold disguised as SR; a fair kernel with its own generator gets none.
# The statistical tests run at alpha = 0.001: a correct kernel fails with
# probability at most 0.001, and the data here are fixed, so the test is
# deterministic.
set -uo pipefail
: "${NVFP4:?set NVFP4 to the nvfp4 binary}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
ok()  { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
run_s() {
    local name=$1 want=$2 needle=$3; shift 3
    "$NVFP4" sr-test "$@" >out.txt 2>err.txt; local rc=$?
    if [ "$rc" -eq "$want" ] && grep -qF -- "$needle" out.txt err.txt; then ok "$name"
    else bad "$name: rc=$rc (want $want), '$needle' not found"; cat out.txt err.txt; fi
}
python3 - <<'PY'
import random, struct
random.seed(4)
x = [random.gauss(0, 1) * 2 ** random.randrange(-3, 6) for _ in range(32 * 64)]
open("x.f32", "wb").write(struct.pack("<%df" % len(x), *x))
PY
$NVFP4 quantize x.f32 --shape 32x64 --dtype f32 -o x.safetensors >/dev/null || bad "quantize rn"
S=24
samples=""
for k in $(seq 0 $((S - 1))); do
    $NVFP4 quantize x.f32 --shape 32x64 --dtype f32 --round sr --seed 11 --offset $((100 + k)) -o s$k.safetensors \
        >/dev/null || bad "quantize sr $k"
    samples="$samples s$k.safetensors"
done
run_s "reference SR passes the statistical tests" 0 "verdict: PASS" --input x.safetensors --samples $samples
grep -q "2048 elements, $S samples" out.txt && ok "counts elements and samples" || bad "counts"
run_s "reference SR is bit-exact with its seed and offsets" 0 "bit-exact (seed 11, offset 100 + k*1): 0 of 49152 codes differ" \
    --input x.safetensors --samples $samples --bitexact --seed 11 --offset 100
run_s "a wrong offset fails bit-exact mode" 1 "verdict: FAIL" --input x.safetensors --samples $samples --bitexact --seed 11 --offset 101
run_s "--offset-step" 0 "0 of 8192 codes differ" --input x.safetensors --samples s0.safetensors s2.safetensors s4.safetensors \
    s6.safetensors --bitexact --seed 11 --offset 100 --offset-step 2

# columnwise (offset + 1) and 1x32 blocks (offsets O and O+1)
cs=""; bs=""
for k in 0 1 2 3; do
    $NVFP4 quantize x.f32 --shape 32x64 --dtype f32 --columnwise --round sr --seed 3 --offset $((4 * k)) -o c$k.safetensors >/dev/null
    $NVFP4 quantize x.f32 --shape 32x64 --dtype f32 --block 1x32 --round sr --seed 3 --offset $((4 * k)) -o b$k.safetensors >/dev/null
    cs="$cs c$k.safetensors"; bs="$bs b$k.safetensors"
done
run_s "columnwise bit-exact" 0 "0 of 8192 codes differ" --input x.f32 --shape 32x64 --dtype f32 --columnwise --samples $cs \
    --bitexact --seed 3 --offset 0 --offset-step 4
run_s "1x32 bit-exact" 0 "0 of 8192 codes differ" --input x.f32 --shape 32x64 --dtype f32 --block 1x32 --samples $bs \
    --bitexact --seed 3 --offset 0 --offset-step 4

# broken kernels
run_s "the same bits every call are dependent" 1 "cause sr-dependent:" --input x.safetensors \
    --samples $(for k in $(seq 1 $S); do echo s3.safetensors; done)
grep -q "$((S - 1)) identical consecutive samples" out.txt && ok "identical samples counted" || bad "identical count"
rn=$(for k in $(seq 1 8); do echo x.safetensors; done)
run_s "round-to-nearest is not SR" 1 "verdict: FAIL" --input x.safetensors --samples $rn
python3 - "$S" <<'PY'
# max-of-two: each element takes the larger-magnitude code of samples k and k+1,
# so it rounds up with probability 1-(1-p)^2 > p: biased away from zero.
import json, struct, sys
def rd(p):
    b = open(p, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    o = h["data"]["data_offsets"]; return h["data"]["shape"], bytearray(b[8 + n + o[0]: 8 + n + o[1]])
def wr(p, shape, d):
    h = json.dumps({"data": {"dtype": "U8", "shape": shape, "data_offsets": [0, len(d)]}}).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    open(p, "wb").write(struct.pack("<Q", len(h)) + h + bytes(d))
S = int(sys.argv[1])
for k in range(S - 1):
    sh, a = rd("s%d.safetensors" % k); _, b = rd("s%d.safetensors" % (k + 1))
    out = bytearray()
    for u, v in zip(a, b):
        lo = u & 15 if (u & 7) >= (v & 7) else v & 15
        hi = u >> 4 if (u >> 4 & 7) >= (v >> 4 & 7) else v >> 4
        out.append(lo | hi << 4)
    wr("m%d.safetensors" % k, sh, out)
PY
run_s "a biased kernel is caught" 1 "cause biased-sr: sr: biased" --input x.safetensors \
    --samples $(for k in $(seq 0 $((S - 2))); do echo m$k.safetensors; done)
grep -q "rounds up too often" out.txt && ok "bias direction named" || bad "bias direction"
grep -q "also against p = frac (more random bits do not explain it)" out.txt && ! grep -q "more than 8 random bits" out.txt \
    && ok "a biased kernel is not taken for more random bits" || bad "bias vs more bits"
# fake kernels that each follow another SR rule, on an input whose scaled
# values equal x (global amax 2688 in block 0, so S_enc = 1; every other
# block holds +-6, so its scale is 1): 35% of the elements lie just above a
# grid point (0 < frac < 1/256), where the 8-bit rule never rounds away.
mkdir rules && cd rules
python3 - <<'PY'
import numpy as np, sys, json, struct
GRID = np.array([0, .5, 1, 1.5, 2, 3, 4, 6], dtype=np.float64)
rows, cols = 32, 64
rng = np.random.default_rng(5)
x = np.zeros((rows, cols), dtype=np.float32)
x[0, 0] = 2688.0  # global amax 2688: S_enc = 1; block 0 scale 448, others ...
for b in range(1, rows * cols // 16):
    r, c0 = divmod(b * 16, cols)
    v = rng.uniform(-6, 6, 16)
    near = rng.random(16) < 0.35   # just above a grid point: 0 < frac < 1/256
    g = rng.integers(0, 7, 16)
    step = np.where(GRID[g] >= 4, 2.0, np.where(GRID[g] >= 2, 1.0, 0.5))
    v = np.where(near, (GRID[g] + step * rng.uniform(1e-4, 1 / 256 - 1e-4, 16)) * rng.choice([-1, 1], 16), v)
    v[rng.integers(0, 16)] = 6.0 * rng.choice([-1, 1])   # block amax 6: scale 1, so y = x
    x[r, c0:c0 + 16] = v
x.tofile("x.f32")
PY
cat > kern.py <<'PY'
# fake SR kernels: python3 kern.py KIND N SEED writes KIND_0.safetensors ... (codes only)
import json, struct, sys
import numpy as np
GRID = np.array([0, .5, 1, 1.5, 2, 3, 4, 6], dtype=np.float64)
kind, N, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows, cols = 32, 64
y = np.fromfile("x.f32", dtype=np.float32).astype(np.float64)
y[0] = 6.0  # 2688 * fl(1/448): saturates to code 7
a = np.abs(y)
mag = np.where(a >= 6, 7, np.searchsorted(GRID, a, side="right") - 1)
step = np.where(a >= 4, 2.0, np.where(a >= 2, 1.0, 0.5))
frac = np.where(a >= 6, 0.0, (a - GRID[np.minimum(mag, 7)]) / step)
f8 = np.floor(frac * 256)
sign = (np.signbit(y)).astype(np.uint8) << 3
rng = np.random.default_rng(seed)
def write(path, codes):
    d = (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8).tobytes()
    h = json.dumps({"data": {"dtype": "U8", "shape": [rows, cols // 2], "data_offsets": [0, len(d)]}}).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + d)
for s in range(N):
    if kind == "own8":        # a fair 8-bit kernel with its own generator
        up = f8 + rng.integers(0, 256, y.size) >= 256
    elif kind == "float":     # a float uniform: P(up) = frac (more than 8 random bits)
        up = rng.random(y.size) < frac
    elif kind == "shared":    # one random byte per 16-element block
        up = f8 + np.repeat(rng.integers(0, 256, y.size // 16), 16) >= 256
    elif kind == "rn":        # round to nearest even, whatever the random bits
        up = (frac > 0.5) | ((frac == 0.5) & (mag % 2 == 1))
    elif kind == "rz":
        up = np.zeros(y.size, bool)
    elif kind == "threshold": # up iff frac > 0.3
        up = frac > 0.3
    up &= frac > 0
    codes = (sign | (mag + up).astype(np.uint8)).astype(np.uint8)
    write("%s_%d.safetensors" % (kind, s), codes)
PY
rule() {
    local name=$1 want=$2 needle=$3 kind=$4
    python3 kern.py "$kind" 24 7 || bad "kernel $kind"
    run_s "$name" "$want" "$needle" --input x.f32 --shape 32x64 --dtype f32 --samples $(ls "${kind}"_*.safetensors)
}
rule "a fair 8-bit kernel with its own generator passes" 0 "verdict: PASS" own8
grep -q "^cause" out.txt && bad "a fair kernel gets no cause" || ok "a fair kernel gets no cause"
rule "a float uniform (p = frac) is named: more than 8 random bits" 1 \
    "cause biased-sr: sr: more than 8 random bits (proven: the 8-bit rule gives these probability 0): 33 round-ups of 656 elements with 0 < frac < 1/256" float
grep -q "codes that are not a neighbour of y: 0;" out.txt && ! grep -q "neither neighbour" out.txt \
    && ok "the upper neighbours of floor(256 frac) = 0 are neighbours" || bad "neighbours of the float-uniform kernel"
grep -c "^cause" out.txt | grep -qx 1 && ok "more than 8 bits is the only cause" || bad "more than 8 bits alone"
rule "one byte per block is named" 1 \
    "cause sr-dependent: sr: one random byte shared by each aligned group of 16 elements (a whole block)" shared
grep -c "^cause" out.txt | grep -qx 1 && ok "a shared byte is the only cause (each element is fair)" || bad "shared alone"
rule "RN disguised as SR is named" 1 "every code is round-to-nearest-even (RN disguised as SR)" rn
grep -q "cause sr-dependent: sr: no randomness: each of the 1249 elements with 0 < p < 1 took the same neighbour in all 24 samples" \
    out.txt && ok "no randomness stated with its count" || bad "no randomness count"
rule "RZ disguised as SR is named" 1 "every code is the neighbour toward zero (RZ disguised as SR)" rz
grep -q "rounds down too often" out.txt && ok "RZ is also biased down" || bad "RZ bias"
rule "a fixed threshold is named" 1 "rounds away iff its fraction exceeds a fixed threshold between 0.2987 and 0.3006" threshold
# a kernel that writes a code that is no rounding of y at all: element 0 (y = 6, code 0x7) written 0x5
python3 - <<'PY'
import json, struct
b = bytearray(open("own8_0.safetensors", "rb").read()); n = struct.unpack("<Q", b[:8])[0]
b[8 + n] = (b[8 + n] & 0xF0) | 0x5
open("bad_0.safetensors", "wb").write(bytes(b))
PY
for k in $(seq 1 23); do cp own8_$k.safetensors bad_$k.safetensors; done
# --json names the rule ("rule") and gives every cause its step and a status: proven only where the
# evidence is an event of probability 0 under the 8-bit rule (its element and counts are checked here)
rule_json() {
    local kind=$1 want_rule=$2 want_status=$3
    $NVFP4 sr-test --input x.f32 --shape 32x64 --dtype f32 --samples $(ls "${kind}"_*.safetensors | sort -t_ -k2 -n) \
        --json >"j_$kind.json"
    python3 - "$kind" "$want_rule" "$want_status" <<'PY' && ok "--json $kind: rule $want_rule, first cause $want_status" \
        || bad "--json $kind: rule $want_rule, $want_status"
import json, struct, sys
import numpy as np
kind, rule, status = sys.argv[1:]
j = json.load(open("j_%s.json" % kind))
assert j["rule"] == rule, j["rule"]
cs = j["causes"]
if status == "none":
    assert not cs and j["verdict"] == "pass", cs
    sys.exit(0)
assert cs and all(c["step"] == "element-rounding" for c in cs), cs
c = cs[0]
assert c["status"] == status, c
assert all(x["status"] == "consistent" for x in cs[1:]), cs
if status == "consistent":
    assert "not an event of probability 0" in c["evidence"], c
    sys.exit(0)
ev = c["evidence"]
def codes(s):
    b = open("%s_%d.safetensors" % (kind, s), "rb").read(); n = struct.unpack("<Q", b[:8])[0]
    d = np.frombuffer(b[8 + n:], np.uint8); return np.stack([d & 15, d >> 4], 1).reshape(-1)
if kind == "float":  # the cited element lies in (0, 1/256) of its step and rounded away in the cited samples
    i = int(ev.split("element ")[1].split(" ")[0]); k = int(ev.split("rounded away in ")[1].split(" ")[0])
    y = float(np.fromfile("x.f32", np.float32)[i]); a = abs(y)
    grid = [0, .5, 1, 1.5, 2, 3, 4, 6]; lo = max(g for g in grid if g <= a); step = .5 if a < 2 else (1 if a < 4 else 2)
    assert 0 < (a - lo) / step < 1 / 256, (i, y)
    ups = sum(int(codes(s)[i] & 7) > grid.index(lo) for s in range(24))
    assert ups == k and k > 0 and "probability 0" in ev, (ups, ev)
    assert j["impossible"] > 0 and j["impossible_round_ups"] == 33 and j["below8"] == 656, j
else:                # bad: sample 1, element 0, code 0x5 where y = 6 allows only 0x7
    assert ev.startswith("sample 1 element 0: code 0x5 is neither 0x7 nor 0x7"), ev
    assert j["invalid"] == 1, j
PY
}
rule_json own8 contract none
rule_json float more-bits proven
rule_json shared shared-byte consistent
rule_json rn deterministic consistent
rule_json threshold deterministic consistent
rule_json bad biased proven
$NVFP4 sr-test --input x.f32 --shape 32x64 --dtype f32 --samples $(ls bad_*.safetensors) >out.txt
grep -q "^  step element-rounding: proven: sample 1 element 0: code 0x5 is neither 0x7 nor 0x7" out.txt \
    && ok "the proven status is printed in words under the cause" || { bad "proven in words"; cat out.txt; }
$NVFP4 sr-test --input x.f32 --shape 32x64 --dtype f32 --samples $(ls shared_*.safetensors) >out.txt
grep -q "^  step element-rounding: consistent (a statistical test at the family-wise alpha" out.txt \
    && ok "a statistical finding is printed as consistent" || { bad "consistent in words"; cat out.txt; }
cd ..
python3 "$here/vkernel.py" s0.safetensors sc.safetensors --keep data,scale --bug scale-plus-one
$NVFP4 sr-test --input x.safetensors --samples $(for k in $(seq 0 $((S - 2))); do echo m$k.safetensors; done) --json >j.json; rc=$?
python3 - <<'PY' && [ $rc -eq 1 ] && ok "--json report of the biased kernel" || bad "--json (rc=$rc)"
import json
j = json.load(open("j.json"))
assert j["verdict"] == "fail" and j["mean_z"] > 5, j
assert any(c["cause"] == "biased-sr" for c in j["causes"])
# max-of-two reuses each sample in two outputs: the runs test names the dependence first
assert j["rule"] == "dependent" and all(c["status"] == "consistent" and c["step"] == "element-rounding" for c in j["causes"]), j
PY
run_s "SR samples with other scales" 1 "block scales differ" --input x.safetensors --samples sc.safetensors s1.safetensors
run_s "missing --samples" 2 "--input X and --samples FILE... are required" --input x.safetensors
run_s "bitexact without seed" 2 "--bitexact needs --seed" --input x.safetensors --samples s0.safetensors --bitexact
run_s "bad alpha" 2 "bad --alpha" --input x.safetensors --samples s0.safetensors --alpha 2
run_s "recipe without SR" 2 "has no stochastic rounding" --input x.safetensors --samples s0.safetensors --recipe exact
head -c 4096 x.f32 > half.f32
run_s "wrong size sample" 2 "the input's shape needs" --input half.f32 --shape 32x32 --dtype f32 --samples s0.safetensors
exit $fail

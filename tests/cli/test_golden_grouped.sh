#!/usr/bin/env bash
# test_golden_grouped.sh - `nvfp4 golden --suite grouped`: the 4 grouped
# cases and their MANIFEST lines, the golden's own bytes (m_sizes, the empty
# expert's amax 0, the padded scale segments' sizes), verify --suite of the
# golden against itself (match) and against a kernel that quantizes each
# stacked tensor whole (both grouped mistakes named, per expert), the
# mutation report naming each grouped mutant, and the refused options.
set -u
NVFP4=${NVFP4:-build/bin/nvfp4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cases="grouped-m5-0-130-k64 grouped-m1-2-3-4-k96 grouped-m0-17-0-k32 grouped-m33-1-k160"

"$NVFP4" golden --suite grouped --recipe te --format npy --out "$tmp/s" 2>/dev/null; rc=$?
[ $rc = 0 ] || fail "golden --suite grouped: exit $rc"
grep -qx "# command: nvfp4 golden --suite grouped --recipe te --level 1 --seed 1 --round rn --format npy" "$tmp/s/MANIFEST" ||
    fail "MANIFEST command line"
# each case is a folder of 8 files (x data scale scale_swizzled amax m_sizes dequant meta.json): 32 lines, in case order
[ "$(grep -vc '^#' "$tmp/s/MANIFEST")" = 32 ] || fail "MANIFEST: $(grep -vc '^#' "$tmp/s/MANIFEST") lines, want 32"
[ "$(grep -v '^#' "$tmp/s/MANIFEST" | sed 's/.*  //; s,/.*,,' | uniq | tr '\n' ' ')" = "$cases " ] ||
    fail "MANIFEST cases: $(grep -v '^#' "$tmp/s/MANIFEST" | sed 's/.*  //; s,/.*,,' | uniq | tr '\n' ' ')"
(cd "$tmp/s" && sha256sum -c --quiet MANIFEST) || fail "sha256sum -c MANIFEST"
"$NVFP4" golden --suite grouped --recipe te --format npy --out "$tmp/s2" 2>/dev/null
cmp -s "$tmp/s/MANIFEST" "$tmp/s2/MANIFEST" || fail "a second generation differs"

python3 - "$tmp/s" <<'PY' || fail "the golden's own bytes"
import json, sys, numpy as np
d = sys.argv[1]
def load(case, name):
    return np.load("%s/%s/%s.npy" % (d, case, name))
c = "grouped-m5-0-130-k64"
assert json.load(open(d + "/" + c + "/meta.json"))["metadata"]["groups"] == "5,0,130"
assert load(c, "m_sizes").tolist() == [5, 0, 130]
a = load(c, "amax")
assert a[1] == 0.0 and 500 < a[0] / a[2] < 2000, a     # the empty expert; N(0,1) times 1 and 0.001
assert load(c, "x").shape == (135, 64)
assert load(c, "scale_swizzled").size == 512 + 1024    # roundup(5,128) and roundup(130,128) rows x 4 scale columns
# 1,2,3,4 x 96: 6 scale columns padded to 8, four 128-row segments
assert load("grouped-m1-2-3-4-k96", "scale_swizzled").size == 4 * 128 * 8
assert load("grouped-m1-2-3-4-k96", "scale").shape == (10, 6)
assert load("grouped-m0-17-0-k32", "amax").tolist()[0] == 0.0 and load("grouped-m0-17-0-k32", "amax").tolist()[2] == 0.0
assert load("grouped-m33-1-k160", "scale_swizzled").size == 2 * 128 * 12  # 10 scale columns padded to 12
PY

out=$("$NVFP4" verify --suite "$tmp/s" --actual-dir "$tmp/s" 2>&1); rc=$?
[ $rc = 0 ] || fail "the suite against itself: exit $rc: $out"
grep -qF "summary: 4 matched, 0 differing, 0 missing (of 4 cases)" <<<"$out" || fail "self summary: $out"

# a kernel that quantizes each stacked tensor whole: one amax, one 128x4 matrix
mkdir "$tmp/o"
for c in $cases; do "$NVFP4" quantize "$tmp/s/$c/x.npy" --recipe te -o "$tmp/o/$c.safetensors" 2>/dev/null; done
out=$("$NVFP4" verify --suite "$tmp/s" --actual-dir "$tmp/o" 2>&1); rc=$?
[ $rc = 1 ] || fail "the whole-tensor kernel: exit $rc, want 1"
both="cause grouped-shared-global-scale + grouped-unpadded-segments: both catalogued grouped mistakes at once"
for want in "DIFFERS  grouped-m5-0-130-k64: grouped: $both (expert 2 differs)" \
    "DIFFERS  grouped-m1-2-3-4-k96: grouped: $both (experts 0, 1, 2, 3 differ)" \
    "DIFFERS  grouped-m33-1-k160: grouped: $both (experts 0, 1 differ)" \
    "DIFFERS  grouped-m0-17-0-k32: grouped: cause grouped-shared-global-scale: one global scale shared" \
    "summary: 0 matched, 4 differing, 0 missing (of 4 cases)"; do
    grep -qF -- "$want" <<<"$out" || fail "verify --suite lacks '$want': $out"
done
"$NVFP4" verify --suite "$tmp/s" --actual-dir "$tmp/o" --json >"$tmp/v.json" 2>/dev/null
python3 - "$tmp/v.json" <<'PY' || fail "verify --suite --json per expert"
import json, sys
j = json.load(open(sys.argv[1]))
c = [c for c in j["cases"] if c["case"] == "grouped-m5-0-130-k64"][0]
o = c["outputs"][0]
assert o["orientation"] == "grouped", o["orientation"]
assert [e["status"] for e in o["experts"]] == ["match", "empty", "mismatch"], o["experts"]
assert o["components"]["scale_swizzled"] == {"status": "size", "bytes": 1024, "expected": 1536}, o["components"]
assert [(x["cause"], x["status"]) for x in o["causes"]] == [
    ("grouped-shared-global-scale + grouped-unpadded-segments", "proven")], o["causes"]
PY

# the mutation report: each grouped mutant killed and named by the goldens
out=$("$NVFP4" golden --suite grouped --recipe te --mutants 2>/dev/null); rc=$?
[ $rc = 0 ] || fail "golden --suite grouped --mutants: exit $rc: $out"
for m in grouped-shared-global-scale grouped-unpadded-segments; do
    grep -qE "^  $m +killed by 3 of 4 cases, first grouped-m5-0-130-k64; verify names $m \[proven\]$" <<<"$out" ||
        fail "mutation report for $m: $out"
done
grep -qx "2 killed, 0 surviving" <<<"$out" || fail "mutation report total: $out"
out=$("$NVFP4" golden --suite grouped --recipe mxfp4-rceil --mutants --json 2>/dev/null); rc=$?
[ $rc = 0 ] || fail "mxfp4-rceil grouped --mutants: exit $rc"
python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["cases"] == 4 and j["killed"] == 1 and j["surviving"] == 0, j
assert [m["status"] for m in j["mutants"]] == ["not applicable", "killed"], j["mutants"]
assert j["mutants"][1]["killing_cases"] == 3, j["mutants"]' "$out" || fail "mxfp4-rceil report: $out"

# refused: SR, another scale layout, a recipe that refuses grouping; nothing written
expect2() {
    local want=$1
    shift
    local err rc
    err=$("$NVFP4" golden "$@" 2>&1 >/dev/null); rc=$?
    [ $rc = 2 ] || fail "golden $*: exit $rc, want 2"
    grep -qF -- "$want" <<<"$err" || fail "golden $*: message '$err' lacks '$want'"
}
expect2 "suite grouped is RN only" --suite grouped --recipe te --round sr --out "$tmp/n1"
expect2 "suite grouped is 128x4 only" --suite grouped --recipe te --scale-layout 8x4 --out "$tmp/n2"
expect2 "grouped-m5-0-130-k64: recipe te-rowscaled: grouped quantization is rowwise" \
    --suite grouped --recipe te-rowscaled --out "$tmp/n3"
for n in n1 n2 n3; do [ ! -e "$tmp/$n" ] || fail "a refused run wrote $n"; done

[ $fails = 0 ] && echo "test_golden_grouped: ok"
exit $((fails > 0))

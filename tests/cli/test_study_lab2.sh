#!/usr/bin/env bash
# test_study_lab2.sh - the studies s1c, s4 and s5 run their --quick presets
# (s1c with its 10 seeds, s4 and s5 with 2 seeds and fewer steps to stay
# within seconds) and write their files; every statistical verdict follows
# the rules of docs/studies.md "How verdicts are decided", recomputed from
# the studies' CSV files alone (verdict_recompute_lab2.py for s1c and s5,
# verdict_recompute.py for s4's runs.csv); an altered verdict is caught;
# values that are exact by construction are asserted.
set -u
NVFP4=${NVFP4:?set NVFP4 to the nvfp4 binary}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
die() { echo "FAIL: $*"; fail=1; }
run() { # name args...
    local s=$1; shift
    "$NVFP4" study run "$s" --quick --quiet --out "$T/$s" "$@" > /dev/null 2> "$T/$s.err" ||
        die "study run $s: $(cat "$T/$s.err")"
}
run s1c --seeds 10
run s5 --seeds 2 --steps 4
if [ -e /usr/share/games/fortunes/fortunes ]; then run s4 --seeds 2 --steps 2; else echo "s4: no fortunes corpus, skipped"; fi

for f in s1c/runs.csv s1c/s1c_bands.csv s1c/s1c_trace.csv s5/s5_gradfid.csv; do
    [ -s "$T/$f" ] || die "$f missing or empty"
done
if command -v gnuplot >/dev/null 2>&1; then
    for f in s1c/s1c.png s5/s5.png; do [ -s "$T/$f" ] || die "$f missing"; done
    [ -d "$T/s4" ] && { [ -s "$T/s4/s4.png" ] || die "s4/s4.png missing"; }
fi

python3 "$HERE/verdict_recompute_lab2.py" "$T/s1c" "$T/s5" > "$T/out" 2>&1 || die "recomputed verdicts differ: $(cat "$T/out")"
grep -q "^s1c: 2 statistical findings recomputed, 0 errors" "$T/out" || die "s1c: $(cat "$T/out")"
grep -q "^s5: 3 statistical findings recomputed, 0 errors" "$T/out" || die "s5: $(cat "$T/out")"
if [ -d "$T/s4" ]; then
    python3 "$HERE/verdict_recompute.py" "$T/s4" > "$T/out4" 2>&1 || die "s4 verdicts: $(cat "$T/out4")"
    grep -q "2 statistical findings recomputed, 0 errors" "$T/out4" || die "s4: $(cat "$T/out4")"
    # 6 budgets x 2 roundings x 2 seeds, each a run of 2, 4, ..., 64 steps
    [ "$(cut -d, -f1 "$T/s4/runs.csv" | sort -u | grep -c -- '-x')" = 12 ] || die "s4: not 12 arms"
    [ "$(wc -l < "$T/s4/s4_diff.dat")" = 7 ] || die "s4: s4_diff.dat is not 6 points"
fi

python3 - "$T" <<'PY' || fail=1
import csv, json, sys
T = sys.argv[1]
bad = []
# s5: RTN draws are identical, so its K-draw and K/4-draw means coincide and
# its spread is exactly 0 (criterion finding reproduced); K = 8 in --quick
rows = list(csv.DictReader(open(T + "/s5/s5_gradfid.csv")))
for r in rows:
    if r["K"] != "8":
        bad.append("s5: K %s" % r["K"])
    if r["variant"].startswith("rtn") and (float(r["rel_var"]) != 0 or r["rel_bias"] != r["rel_bias_quarter"]):
        bad.append("s5: rtn row with spread: %s" % r)
# 5 variants x 2 seeds x 3 checkpoints x 8 block linears (the tiny GPT's 2 blocks)
if len(rows) != 5 * 2 * 3 * 8:
    bad.append("s5: %d rows" % len(rows))
f = [x for x in json.load(open(T + "/s5/summary.json"))["findings"] if x["claim"].startswith("RTN's gradient error")]
if not f or f[0]["verdict"] != "reproduced":
    bad.append("s5: RTN criterion finding %r" % f)
# s1c: 5 arms x 10 seeds x 4 bands; m=1 starts at r = sqrt(3) exactly, in band "above"
b = list(csv.DictReader(open(T + "/s1c/s1c_bands.csv")))
if len(b) != 5 * 10 * 4:
    bad.append("s1c: %d band rows" % len(b))
tr = [r for r in csv.DictReader(open(T + "/s1c/s1c_trace.csv")) if r["arm"] == "m=1" and r["step"] == "0"]
if len(tr) != 10 or any(abs(float(r["ratio"]) - 3 ** 0.5) > 1e-5 for r in tr):
    bad.append("s1c: m=1 does not start at sqrt(3): %s" % tr[:2])
for x in bad:
    print("FAIL:", x)
sys.exit(1 if bad else 0)
PY

# an altered verdict is caught
python3 - "$T/s5/summary.json" <<'PY'
import json, sys
p = sys.argv[1]; d = json.load(open(p))
f = [x for x in d["findings"] if "stats" in x][0]
f["verdict"] = "reproduced" if f["verdict"] != "reproduced" else "inconclusive"
json.dump(d, open(p, "w"))
PY
python3 "$HERE/verdict_recompute_lab2.py" "$T/s5" > "$T/bad" 2>&1 && die "an altered verdict was not caught"
grep -q "the rule gives" "$T/bad" || die "altered verdict: $(cat "$T/bad")"
exit $fail
